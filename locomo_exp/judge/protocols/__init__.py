"""Judge protocols: one :class:`ProtocolSpec` per protocol, looked up by name.

``rubric`` (0-100 score, the default), ``binary`` (CORRECT/WRONG as 100/0, the Mem0
harness's protocol) and ``longmemeval`` (yes/no by kind of LongMemEval question) are
fixed; ``template`` is built from the user's file (``judge.template``, :mod:`.template`):
:func:`protocol_spec` resolves a judge config to its spec. Adding a protocol = one module
here defining its spec + its import and one entry in :data:`PROTOCOLS` (docs/development.md,
"Adding things"); every list of protocol names is derived from that table.
"""

from __future__ import annotations

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
from locomo_exp.judge.protocols.locomo_plus import LOCOMO_PLUS
from locomo_exp.judge.protocols.longmemeval import LONGMEMEVAL
from locomo_exp.judge.protocols.rubric import RUBRIC
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL, load_template_protocol

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig

PROTOCOLS: dict[str, ProtocolSpec] = {
    spec.name: spec
    for spec in (
        RUBRIC,
        BINARY,
        LONGMEMEVAL,
        LOCOMO_PLUS,
    )
}
"""Every judge protocol, by name."""


def available_protocols() -> list[str]:
    """The protocol names, sorted (``["binary", "rubric", "template"]``)."""
    return sorted([*PROTOCOLS, TEMPLATE_PROTOCOL])


def protocol_name_problems(cfg: ExperimentConfig) -> list[str]:
    """The protocol names of a config that are not registered, checked before any work.

    Args:
        cfg: the typed config (``judge.protocol``, each ``baselines.<set>.j_protocol``).

    Returns:
        One line per unknown name, e.g. ``judge.protocol: unknown judge protocol 'likert'.
        Available: binary, locomo_plus, longmemeval, rubric, template`` (empty when all are known).
    """
    names = available_protocols()
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
        ValueError: ``unknown judge protocol 'x'. Available: binary, longmemeval, rubric,
            template``;
            for ``template`` (its spec comes from a file: :func:`protocol_spec`).
    """
    if isinstance(protocol, ProtocolSpec):
        return protocol
    name = protocol.value if isinstance(protocol, Enum) else protocol
    if name == TEMPLATE_PROTOCOL:
        raise ValueError("judge.protocol=template reads its prompt from judge.template=FILE.yaml")
    spec = PROTOCOLS.get(name) if isinstance(name, str) else None
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
    "available_protocols",
    "escape_untrusted",
    "get_protocol",
    "protocol_name_problems",
    "protocol_spec",
]
