"""A stop signal another thread gives the judge pool: no new paid call after it is set.

The judge job sets its MLflow run up on a thread while the calls wait on the network
(:mod:`locomo_exp.tracking.pending`). When that setup fails, the job will fail anyway, so
every further call would be money spent for nothing: the thread sets a :class:`CallsStop`
with the reason, and the pool (:class:`~locomo_exp.judge.pool.JudgePool`) checks it
before each new call and each retry. Calls in flight finish and are cached; the pool then
raises :class:`CallsStopped`, one line naming the reason and the calls made and left.
"""

from __future__ import annotations

import threading

from locomo_exp.judge.errors import JudgeJobStopped
from locomo_exp.results.words import counted


class CallsStop:
    """A thread-safe, set-once stop signal with its reason.

    Setting it from any thread is safe; the first reason given is kept.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason = ""
        self._error: BaseException | None = None

    def set(self, reason: str, error: BaseException | None = None) -> None:
        """Stop new calls.

        Args:
            reason: one line saying why (shown to the user as it is).
            error: the exception behind it, if any (chained to :class:`CallsStopped`).
        """
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason
            self._error = error
            self._event.set()

    @property
    def is_set(self) -> bool:
        """Whether new calls must not start."""
        return self._event.is_set()

    @property
    def reason(self) -> str:
        """Why the calls stop (empty until set)."""
        return self._reason

    @property
    def error(self) -> BaseException | None:
        """The exception behind the stop, if one was given."""
        return self._error


class CallsStopped(JudgeJobStopped):
    """The judge stopped because a :class:`CallsStop` was set; completed calls are cached.

    Attributes:
        calls_made: API requests this run sent (retries included).
        calls_left: calls of the job without a cached verdict (a re-run makes these).
        calls_total: all calls of the job.
    """

    def __init__(self, reason: str, *, calls_made: int, calls_left: int, calls_total: int):
        super().__init__(
            f"judge stopped: {reason}; {counted(calls_made, 'call')} made, "
            f"{calls_left} of {calls_total} left; the verdicts paid for are cached: once "
            f"this is fixed, the same command pays only for the {calls_left} left"
        )
        self.calls_made = calls_made
        self.calls_left = calls_left
        self.calls_total = calls_total


__all__ = ["CallsStop", "CallsStopped"]
