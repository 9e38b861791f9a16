"""Progress of a judge job: a tqdm bar on a terminal, periodic log lines otherwise."""

from __future__ import annotations

import logging
import sys
import time
from typing import IO, Any

from locomo_exp.llm.calls import CallResult

logger = logging.getLogger(__name__)


def make_bar(
    total: int, *, initial: int, desc: str, unit: str, enabled: bool, stream: IO[str] | None = None
) -> Any | None:
    """A tqdm progress bar on ``stream`` (default stderr) when it is a terminal, else ``None``.

    Args:
        total: units of the whole job.
        initial: units already done (e.g. calls found in the cache).
        desc: label in front of the bar.
        unit: what is counted (``"call"``, ``"request"``).
        enabled: ``judge.progress``; False gives no bar.
        stream: where the bar is drawn; a bar is made only when ``stream.isatty()``.

    Returns:
        The ``tqdm`` bar, or ``None`` (the caller logs progress lines instead).
    """
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if not enabled or not (callable(isatty) and isatty()):
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream, leave=True)


class ProgressReporter:
    """A tqdm bar of judge calls on a terminal; log lines otherwise.

    The log lines give ``done/total``, rate, ETA and error counts, at most every
    ``interval_s``.

    Args:
        total: all calls of the job, cached ones included.
        cached: calls answered from the cache.
        enabled: report progress at all (``judge.progress``).
        interval_s: minimum seconds between log lines.
        stream: where a bar would be drawn (default stderr; a bar only on a terminal).
    """

    def __init__(
        self,
        total: int,
        cached: int,
        *,
        enabled: bool,
        interval_s: float = 5.0,
        stream: IO[str] | None = None,
    ) -> None:
        self.total = total
        self.cached = cached
        self.made = 0
        self.parse_failures = 0
        self.api_errors = 0
        self.retries = 0
        self.enabled = enabled
        self.interval_s = interval_s
        self._start = time.monotonic()
        self._last = self._start
        self.bar = make_bar(
            total, initial=cached, desc="judge", unit="call", enabled=enabled, stream=stream
        )

    def record_cached(self) -> None:
        """Count one call answered from the cache after another process made it."""
        self.cached += 1
        if self.bar is not None:
            self.bar.update(1)

    def record(self, result: CallResult) -> None:
        """Count one finished (non-cached) call and log a line if due."""
        self.made += 1
        if result.outcome == "parse_failure" or result.unparsed_scored:
            self.parse_failures += 1
        elif result.outcome == "api_error":
            self.api_errors += 1
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(
                parse_failures=self.parse_failures, api_errors=self.api_errors, refresh=False
            )
            return
        now = time.monotonic()
        if self.enabled and now - self._last >= self.interval_s:
            self._last = now
            logger.info("%s", self.line(now))

    def line(self, now: float | None = None) -> str:
        """The progress line, e.g. ``judge 120/15400 (0.8%) 31.2 calls/s ETA 0:08:11 ...``."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        done = self.cached + self.made
        rate = self.made / elapsed
        remaining = self.total - done
        eta = format_seconds(remaining / rate) if rate > 0 else "?"
        pct = 100.0 * done / self.total if self.total else 100.0
        return (
            f"judge {done}/{self.total} ({pct:.1f}%) {rate:.1f} calls/s ETA {eta} | "
            f"cached {self.cached} parse_failures {self.parse_failures} "
            f"api_errors {self.api_errors} retries {self.retries}"
        )

    def finish(self) -> None:
        """Close the bar, if any, and log the final line."""
        if self.bar is not None:
            self.bar.close()
        if self.enabled:
            logger.info(
                "%s (finished in %s)", self.line(), format_seconds(time.monotonic() - self._start)
            )


def format_seconds(seconds: float) -> str:
    """``h:mm:ss`` of a duration in seconds (rounded; negative as 0): ``3725 -> "1:02:05"``."""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
