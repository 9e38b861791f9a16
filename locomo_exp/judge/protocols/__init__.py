"""Judge protocols: one :class:`ProtocolSpec` per protocol, looked up by name.

``rubric`` (0-100 score, the default) and ``binary`` (CORRECT/WRONG as 100/0, the Mem0
harness's protocol) are fixed; ``template`` is built from the user's file
(``judge.template``, :mod:`.template`): :func:`protocol_spec` resolves a judge config to its
spec. Adding a protocol = one module here defining its spec + its import and one entry in
:data:`PROTOCOLS` (docs/development.md, "Adding things"); every list of protocol names is
derived from that table and the plugged-in protocols.

A benchmark plug-in brings its own protocols (a yes/no verdict by kind of question, say) in
its package, above this layer: the layer that dispatches a job hands them in with
:func:`plugged_protocols`, and for the job's duration they are resolved by name as the fixed
ones are. This package never names a plug-in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING

from locomo_exp.judge.protocols.base import (
    CATEGORY_GUIDANCE,
    CATEGORY_LABELS,
    ProtocolSpec,
    Verdict,
    escape_untrusted,
)
from locomo_exp.judge.protocols.binary import BINARY
from locomo_exp.judge.protocols.plugged import PLUGGED, plugged
from locomo_exp.judge.protocols.rubric import RUBRIC
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL, load_template_protocol

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig

PROTOCOLS: dict[str, ProtocolSpec] = {
    spec.name: spec
    for spec in (
        RUBRIC,
        BINARY,
    )
}
"""Every fixed judge protocol, by name (a plug-in's own come in by :func:`plugged_protocols`)."""


@contextmanager
def plugged_protocols(specs: Iterable[ProtocolSpec]) -> Iterator[None]:
    """Resolve the protocols a benchmark plug-in brings by name, inside the ``with`` block.

    The dispatching layer (above the judge) hands in what its registry of plug-ins lists, so
    that ``judge.protocol=<a plug-in's protocol>`` resolves here without this layer importing
    the plug-in. Scoped to the current context (``asyncio.run`` copies it to the judge's
    tasks); a nested block adds to the outer one's.

    Args:
        specs: the plug-ins' protocols; one already plugged in (an outer block's) is kept.
            One with ``by_name=False`` is not resolved by name: it lends its kinds to the
            ``by_kind`` names a template may use.

    Raises:
        ValueError: two different protocols with one name (a registration mistake).
    """
    known = {**PROTOCOLS, **{spec.name: spec for spec in plugged()}}
    added: dict[str, ProtocolSpec] = {}
    for spec in specs:
        if known.get(spec.name, spec) is not spec or added.get(spec.name, spec) is not spec:
            raise ValueError(f"two judge protocols are registered as {spec.name!r}")
        if spec.name not in known:
            added[spec.name] = spec
    token = PLUGGED.set(plugged() + tuple(added.values()))
    try:
        yield
    finally:
        PLUGGED.reset(token)


def all_protocols() -> dict[str, ProtocolSpec]:
    """The fixed protocols and those plugged in for the current job, by name.

    A plugged protocol with ``by_name=False`` (a plug-in's internal one) is left out: it lends
    only its kinds to a template's ``by_kind`` (:func:`.plugged.plugged_kinds`).
    """
    return {**PROTOCOLS, **{spec.name: spec for spec in plugged() if spec.by_name}}


def available_protocols(extra: Iterable[str] = ()) -> list[str]:
    """The protocol names, sorted (``["binary", "rubric", "template"]``).

    Args:
        extra: names of the plug-ins' protocols, when the caller knows them without
            :func:`plugged_protocols` (the name check of :mod:`locomo_exp.benchmarks.names`).
    """
    return sorted({*all_protocols(), *extra, TEMPLATE_PROTOCOL})


def protocol_name_problems(cfg: ExperimentConfig, extra: Iterable[str] = ()) -> list[str]:
    """The protocol names of a config that are not registered, checked before any work.

    Args:
        cfg: the typed config (``judge.protocol``, each ``baselines.<set>.j_protocol``).
        extra: the names of the protocols benchmark plug-ins bring (their registry lists
            them: :func:`locomo_exp.benchmarks.registry.plugin_protocols`).

    Returns:
        One line per unknown name, e.g. ``judge.protocol: unknown judge protocol 'likert'.
        Available: binary, rubric, template`` and the plug-ins' names (empty when all are
        known).
    """
    names = available_protocols(extra)
    protocols: dict[str, str | None] = {"judge.protocol": cfg.judge.protocol}
    protocols.update(
        {f"baselines.{name}.j_protocol": s.j_protocol for name, s in cfg.baselines.items()}
    )
    return [
        f"{key}: unknown judge protocol {protocol!r}. Available: {', '.join(names)}"
        for key, protocol in protocols.items()
        if protocol is not None and protocol not in names
    ]


def get_protocol(protocol: object) -> ProtocolSpec:
    """Look up a protocol by name (a string, or a ``str`` enum member).

    Args:
        protocol: e.g. ``"rubric"``; a :class:`ProtocolSpec`
            (e.g. a template's, from :func:`protocol_spec`) is returned as it is.

    Returns:
        The protocol's :class:`ProtocolSpec`.

    Raises:
        ValueError: ``unknown judge protocol 'x'. Available: binary, rubric, template`` (and
            the plugged-in protocols);
            for ``template`` (its spec comes from a file: :func:`protocol_spec`).
    """
    if isinstance(protocol, ProtocolSpec):
        return protocol
    name = protocol.value if isinstance(protocol, Enum) else protocol
    if name == TEMPLATE_PROTOCOL:
        raise ValueError("judge.protocol=template reads its prompt from judge.template=FILE.yaml")
    spec = all_protocols().get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(
            f"unknown judge protocol {name!r}. Available: {', '.join(available_protocols())}"
        )
    return spec


def protocol_spec(cfg: JudgeConfig) -> ProtocolSpec:
    """The protocol a judge config runs: a registered one, or the template file's.

    Args:
        cfg: the judge config (``protocol``, ``template``).

    Returns:
        The :class:`ProtocolSpec`.

    Raises:
        ValueError: an unknown protocol; ``template`` without ``judge.template``;
            ``judge.template`` with another protocol; a bad template file
            (:class:`~locomo_exp.judge.protocols.templates.TemplateError`, one line naming it).
    """
    template = getattr(cfg, "template", None)
    name = cfg.protocol.value if isinstance(cfg.protocol, Enum) else cfg.protocol
    if name == TEMPLATE_PROTOCOL:
        if not template:
            raise ValueError(
                "judge.protocol=template needs judge.template=FILE.yaml (your prompt file)"
            )
        return load_template_protocol(template)
    if template:
        raise ValueError(
            f"judge.template={template} is only read with judge.protocol=template "
            f"(judge.protocol is {name}); add judge.protocol=template"
        )
    return get_protocol(name)


__all__ = [
    "CATEGORY_GUIDANCE",
    "CATEGORY_LABELS",
    "PROTOCOLS",
    "ProtocolSpec",
    "Verdict",
    "all_protocols",
    "available_protocols",
    "escape_untrusted",
    "get_protocol",
    "plugged_protocols",
    "protocol_name_problems",
    "protocol_spec",
]
