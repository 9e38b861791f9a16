"""Ctrl-C and SIGTERM during judging: stop starting calls, let those in flight finish.

:func:`catch_signals` routes SIGINT and SIGTERM to a callback on the running event loop
for the duration of a block (main thread only; elsewhere it does nothing), and puts the
previous handlers back afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from typing import Any, Callable, Iterator

logger = logging.getLogger(__name__)

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that interrupt a judge job."""


@contextlib.contextmanager
def catch_signals(on_signal: Callable[[int], None]) -> Iterator[bool]:
    """Call ``on_signal(signum)`` on the running loop at each SIGINT/SIGTERM in the block.

    Args:
        on_signal: called in the event loop's thread with the signal number (again for a
            second signal: the caller decides what a repeat means).

    Yields:
        Whether the handlers were installed (only in the main thread, with a running loop).
    """
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        yield False
        return

    def handler(signum: int, frame: Any) -> None:
        loop.call_soon_threadsafe(on_signal, signum)

    previous = {sig: signal.getsignal(sig) for sig in HANDLED_SIGNALS}
    for sig in HANDLED_SIGNALS:
        signal.signal(sig, handler)
    try:
        yield True
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
