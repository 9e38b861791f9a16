"""The judge protocols a benchmark plug-in hands in for the current job (no plug-in named).

:func:`locomo_exp.judge.protocols.plugged_protocols` sets them; what reads them here (the
name lookup, the ``by_kind`` names a template may use) never imports the plug-in that
brought them.
"""

from __future__ import annotations

from contextvars import ContextVar

from locomo_exp.judge.protocols.base import ProtocolSpec

PLUGGED: ContextVar[tuple[ProtocolSpec, ...]] = ContextVar("plugged_protocols", default=())
"""The plugged-in protocols of the current context, in the order they were handed in."""


def plugged() -> tuple[ProtocolSpec, ...]:
    """The protocols plugged in for the current job (empty outside any ``with`` block)."""
    return PLUGGED.get()


def plugged_kinds() -> list[str]:
    """The kinds of question the plugged-in protocols judge (their ``kind_ids``), in order.

    Returns:
        Kind names, e.g. a plug-in's question types; empty when no plugged protocol judges
        kinds of its own.
    """
    names: list[str] = []
    for spec in plugged():
        names += list(spec.kind_ids.values())
    return list(dict.fromkeys(names))
