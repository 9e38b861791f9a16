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
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

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


async def drain_or_cancel(
    work: Awaitable[object], interrupted: asyncio.Event, hurry: asyncio.Event, drain_s: float
) -> None:
    """Await ``work``, draining it for at most ``drain_s`` seconds once interrupted.

    Once ``interrupted`` is set, ``work`` gets ``drain_s`` seconds (or until ``hurry`` is
    set, by a second signal) to finish the calls in flight; then it is cancelled.

    Args:
        work: the calls (a coroutine or future).
        interrupted: set at the first signal.
        hurry: set at a second signal.
        drain_s: seconds to wait for calls in flight (``judge.drain_s``).

    Raises:
        Exception: whatever ``work`` raised, when it finished on its own.
    """
    task = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(interrupted.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if not task.done():
        rush = asyncio.ensure_future(hurry.wait())
        try:
            await asyncio.wait({task, rush}, timeout=drain_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            rush.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return
    task.result()
