"""Pacing of call starts: a configured requests-per-minute and the API's own budget.

The Messages API reports its request budget with every response
(``anthropic-ratelimit-requests-remaining`` and ``-reset``; Anthropic docs, "Rate
limits": a token bucket refilled continuously up to the per-minute limit).
:class:`RateLimiter` spreads the remaining budget evenly until the reset, so a run at the
account's limit stays under it instead of bursting into 429s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from locomo_exp.llm.messages import RateLimitInfo


class RateLimiter:
    """Spaces call starts evenly, within the configured and the API's request budget.

    At most ``requests_per_minute``, and no faster than the API's request budget allows
    (from its rate-limit headers).

    Header pacing: after a response saying ``remaining`` requests are left and the bucket
    is full again in ``reset_in_s`` seconds, starts are spaced by
    ``time_left / max(remaining - in_flight, 1)``, i.e. the budget is spread evenly until
    the reset. Against a token bucket refilled at rate r with capacity C, this settles
    with about C/2 left and a start rate of r, so calls stay just under the limit
    instead of bursting into 429s.

    Args:
        requests_per_minute: the configured limit, or ``None`` for none.
        clock: monotonic clock, seconds (injectable for tests).
        sleep: coroutine function that waits a number of seconds (injectable).
    """

    def __init__(
        self,
        requests_per_minute: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next = 0.0
        self._clock = clock
        self._sleep = sleep
        self._remaining: int | None = None
        self._reset_at = 0.0
        self.in_flight = 0
        """Calls started and not yet answered (kept by the caller)."""

    def observe(self, info: RateLimitInfo | None) -> None:
        """Take the rate-limit state of a response (``None``: nothing to take)."""
        if info is None:
            return
        self._remaining = info.remaining
        self._reset_at = self._clock() + info.reset_in_s

    def interval(self, now: float | None = None) -> float:
        """Seconds between call starts now: the larger of the configured and header pace."""
        now = self._clock() if now is None else now
        header = 0.0
        time_left = self._reset_at - now
        if self._remaining is not None and time_left > 0:
            header = time_left / max(self._remaining - self.in_flight, 1)
        return max(self._interval, header)

    async def acquire(self) -> None:
        """Wait for the next free slot (slots are reserved in call order)."""
        now = self._clock()
        interval = self.interval(now)
        if not interval:
            return
        start = max(now, self._next)
        self._next = start + interval
        if start > now:
            await self._sleep(start - now)
