"""A stop signal another thread gives the judge pool: no new paid call after it is set.

The judge job sets its MLflow run up on a thread while the calls wait on the network
(:mod:`locomo_exp.tracking.pending`). When that setup fails, the job will fail anyway, so
every further call would be money spent for nothing: the thread sets a :class:`CallsStop`
with the reason, and the pool (:class:`~locomo_exp.llm.pool.JudgePool`) checks it
before each new call and each retry. Calls in flight finish and are cached; the pool then
raises :class:`CallsStopped`, one line naming the reason and the calls made and left.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from locomo_exp.llm.errors import JudgeJobStopped
from locomo_exp.results.words import counted


class CallsStop:
    """A thread-safe, set-once stop signal with its reason.

    Setting it from any thread is safe; the first reason given is kept.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason: str | Callable[[], str] = ""
        self._error: BaseException | None = None

    def set(self, reason: str | Callable[[], str], error: BaseException | None = None) -> None:
        """Stop new calls.

        Args:
            reason: one line saying why (shown to the user as it is), or a function giving
                it when it is read (the spend cap's line: the figures when the job stops).
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
        reason = self._reason
        return reason if isinstance(reason, str) else reason()

    @property
    def error(self) -> BaseException | None:
        """The exception behind the stop, if one was given."""
        return self._error


class CallsStopped(JudgeJobStopped):
    """The judge stopped because a :class:`CallsStop` was set; completed calls are cached.

    Raised by the realtime pool, by batch mode (no batch is created after the stop; batches
    already submitted keep processing and the next run collects them) and, through them,
    by the audit's and the panel's calls.

    Attributes:
        calls_made: API requests this run sent (retries and batch requests included).
        calls_left: calls of the job without a cached verdict and in no submitted batch
            (a re-run makes these).
        calls_total: all calls of the job.
        in_batches: calls in batches submitted and still processing (a re-run collects
            them without paying again).
    """

    def __init__(
        self,
        reason: str,
        *,
        calls_made: int,
        calls_left: int,
        calls_total: int,
        in_batches: int = 0,
    ):
        batches = (
            f" and {in_batches} in batches already submitted (the same command collects them "
            "without paying again)"
            if in_batches
            else ""
        )
        super().__init__(
            f"judge stopped: {reason}; {counted(calls_made, 'call')} made, "
            f"{calls_left} of {calls_total} left{batches}; the verdicts paid for are cached: "
            f"once this is fixed, the same command pays only for the {calls_left} left"
        )
        self.reason = reason
        self.calls_made = calls_made
        self.calls_left = calls_left
        self.calls_total = calls_total
        self.in_batches = in_batches

    def widened(
        self, *, made_before: int = 0, done_before: int = 0, later: int = 0
    ) -> CallsStopped:
        """The same stop counted over the whole judge job, not only the part it stopped in.

        Args:
            made_before: requests sent by the parts before this one (the answers' calls
                before an audit stop).
            done_before: calls of those parts (all made or cached).
            later: calls of the parts after this one (the audit's and the panel's after the
                answers), none made yet.

        Returns:
            A :class:`CallsStopped` with the job's calls made, left and in all.
        """
        return CallsStopped(
            self.reason,
            calls_made=self.calls_made + made_before,
            calls_left=self.calls_left + later,
            calls_total=self.calls_total + done_before + later,
            in_batches=self.in_batches,
        )


__all__ = ["CallsStop", "CallsStopped"]
