"""The order in which the judge pool tries its calls: new ones first, then those waited for.

A call another live owner (process or pool) has in flight is set aside and looked at again
later, with backoff (:func:`~locomo_exp.llm.retry.claim_poll_delay`), once nothing new
is left to try: its reply then comes from the cache instead of being paid twice.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from locomo_exp.llm.calls import CallSpec
from locomo_exp.llm.retry import claim_poll_delay


class CallQueue:
    """The calls a pool still has to try.

    Args:
        specs: the calls to try, in order.
        clock: monotonic clock, seconds.
        sleep: coroutine function waiting a number of seconds.
    """

    def __init__(
        self,
        specs: Iterable[CallSpec],
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self._new = deque(specs)
        # calls another owner has in flight: (due time, sequence, looks so far, spec)
        self._waiting: list[tuple[float, int, int, CallSpec]] = []
        self._sequence = itertools.count()
        self._clock = clock
        self._sleep = sleep

    def __len__(self) -> int:
        """Calls left to try: new ones and those set aside."""
        return len(self._new) + len(self._waiting)

    def set_aside(self, spec: CallSpec, looks: int) -> None:
        """Look at ``spec`` again after :func:`claim_poll_delay` of ``looks`` seconds.

        Args:
            spec: a call another owner has in flight.
            looks: how many times it was already found in flight (0 the first time).
        """
        due = self._clock() + claim_poll_delay(looks)
        heapq.heappush(self._waiting, (due, next(self._sequence), looks + 1, spec))

    async def next(self) -> tuple[CallSpec, int] | None:
        """The next call to try and how often it was found in flight; ``None`` when done.

        New calls come first; a call set aside is returned once it is due (waiting for
        it when nothing new is left).
        """
        if self._new:
            return self._new.popleft(), 0
        if self._waiting:
            due, _, looks, spec = heapq.heappop(self._waiting)
            delay = due - self._clock()
            if delay > 0:
                await self._sleep(delay)
            return spec, looks
        return None


__all__ = ["CallQueue"]
