"""Judge protocols: one :class:`ProtocolSpec` per protocol, looked up by name.

``rubric`` (0-100 score, the default) and ``binary`` (CORRECT/WRONG as 100/0, the Mem0
harness's protocol). Adding a protocol = one module here defining its spec + one entry in
:data:`PROTOCOLS`; every list of protocol names is derived from that table.
"""

from __future__ import annotations

from enum import Enum

from locomo_exp.judge.protocols.base import (
    CATEGORY_GUIDANCE,
    CATEGORY_LABELS,
    ProtocolSpec,
    Verdict,
    escape_untrusted,
)
from locomo_exp.judge.protocols.binary import BINARY
from locomo_exp.judge.protocols.rubric import RUBRIC

PROTOCOLS: dict[str, ProtocolSpec] = {spec.name: spec for spec in (RUBRIC, BINARY)}
"""Every judge protocol, by name."""


def available_protocols() -> list[str]:
    """The names of the registered protocols, sorted (``["binary", "rubric"]``)."""
    return sorted(PROTOCOLS)


def get_protocol(protocol: object) -> ProtocolSpec:
    """Look up a protocol by name (a string, or a ``str`` enum member such as ``JudgeProtocol``).

    Args:
        protocol: e.g. ``"rubric"`` or ``JudgeProtocol.binary``.

    Returns:
        The protocol's :class:`ProtocolSpec`.

    Raises:
        ValueError: ``unknown judge protocol 'x'. Available: binary, rubric``.
    """
    name = protocol.value if isinstance(protocol, Enum) else protocol
    spec = PROTOCOLS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(
            f"unknown judge protocol {name!r}. Available: {', '.join(available_protocols())}"
        )
    return spec


__all__ = [
    "CATEGORY_GUIDANCE",
    "CATEGORY_LABELS",
    "PROTOCOLS",
    "ProtocolSpec",
    "Verdict",
    "available_protocols",
    "escape_untrusted",
    "get_protocol",
]
