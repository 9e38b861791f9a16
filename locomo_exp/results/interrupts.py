"""Ctrl-C and SIGTERM always stop the job: an interrupt is recorded, never lost.

Python's own SIGINT handler raises ``KeyboardInterrupt`` in whatever Python code runs
when the signal arrives. When that is a finalizer or a weak reference's callback (run by
the garbage collector during an import, for instance), the exception cannot propagate:
Python prints ``Exception ignored in: ... KeyboardInterrupt`` with a traceback and the
job carries on, to exit 0 with its MLflow run FINISHED (seen twice in about 20 interrupts
of an F1-only job). :func:`install` therefore replaces the handlers of SIGINT and SIGTERM
with one that records the signal before raising :class:`Interrupted`, and a
``sys.unraisablehook`` that records an interrupt swallowed that way instead of printing
it. The job checks the record at safe points (:func:`raise_if_received`: before its
outputs are written, before an MLflow run ends FINISHED, before the command reports
success), so a job that saw a signal never reports success.

The judge routes both signals to its event loop while its calls run
(:mod:`locomo_exp.llm.interrupt`) and puts these handlers back afterwards.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a job (exit status 128 + the signal number)."""

_received: int | None = None


class Interrupted(KeyboardInterrupt):
    """A recorded SIGINT or SIGTERM: a ``KeyboardInterrupt`` carrying the signal number.

    Attributes:
        signum: 2 (SIGINT) or 15 (SIGTERM).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _handler(signum: int, frame: FrameType | None) -> None:
    """Record the signal, then raise :class:`Interrupted` where the code runs."""
    global _received
    if _received is None:
        _received = signum
    raise Interrupted(signum)


def _unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook``: an interrupt raised in a finalizer is recorded, not printed.

    Any other unraisable error goes to Python's own hook (``sys.__unraisablehook__``: the
    ``Exception ignored in ...`` lines on stderr), not whichever hook was set when this module
    was first imported (a test runner's per-test hook would collect it instead).
    """
    global _received
    if isinstance(unraisable.exc_value, KeyboardInterrupt) or (
        isinstance(unraisable.exc_type, type) and issubclass(unraisable.exc_type, KeyboardInterrupt)
    ):
        if _received is None:
            _received = int(getattr(unraisable.exc_value, "signum", signal.SIGINT))
        return
    sys.__unraisablehook__(unraisable)


def install() -> bool:
    """Record SIGINT and SIGTERM from now on (main thread only; elsewhere nothing is done).

    Returns:
        Whether the handlers were installed.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    for sig in HANDLED_SIGNALS:
        signal.signal(sig, _handler)
    sys.unraisablehook = _unraisable
    return True


def received() -> int | None:
    """The first signal recorded in this process (2 or 15), or ``None``."""
    return _received


def raise_if_received() -> None:
    """A safe point: raise :class:`Interrupted` when a signal was recorded.

    Raises:
        Interrupted: a SIGINT or SIGTERM arrived, even one whose exception was swallowed.
    """
    if _received is not None:
        raise Interrupted(_received)


def forget() -> None:
    """Clear the record (tests; a process that handled its interrupt and goes on)."""
    global _received
    _received = None


__all__ = [
    "HANDLED_SIGNALS",
    "Interrupted",
    "forget",
    "install",
    "raise_if_received",
    "received",
]
