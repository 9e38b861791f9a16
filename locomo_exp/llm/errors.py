"""Exceptions of the judge subsystem (no dependency on the ``anthropic`` SDK)."""

from __future__ import annotations

from typing import Any


class JudgeError(ValueError):
    """A judge job cannot start or must stop; the message says why and what to change."""


class JudgeFatalAPIError(JudgeError):
    """The API answered with a non-retryable error (400, 401, 403, 404, ...).

    Raised by :func:`locomo_exp.judge.run_judge` at the first occurrence; every call that
    completed before it is already in the cache.

    Attributes:
        status_code: HTTP status of the failing call, when there was one.
        kind: short error class (``"not_found"``, ``"authentication"``,
            ``"temperature_rejected"``, ``"bad_request"``, ...).
        api_message: the API's own error message.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        kind: str = "",
        api_message: str = "",
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.kind = kind
        self.api_message = api_message


class JudgeJobStopped(JudgeError):
    """The job stopped early; every call completed before is in the cache.

    Either the endpoint cannot be reached, or API errors already exceed
    ``judge.max_error_rate``.
    """


class JudgeInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM stopped the job; calls in flight were waited for.

    A ``KeyboardInterrupt``, so that nothing treats it as an ordinary failure (a sweep
    stops; an MLflow run ends KILLED).

    Attributes:
        signum: the signal number (2 for SIGINT, 15 for SIGTERM).
        calls_cached: calls of the job now in the cache, when known.
    """

    def __init__(self, signum: int, calls_cached: int | None = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.calls_cached = calls_cached

    @property
    def exit_status(self) -> int:
        """The conventional exit status: 128 + the signal number (130, 143)."""
        return 128 + int(self.signum)

    def line(self) -> str:
        """The one line shown to the user."""
        if self.calls_cached is None:
            return "interrupted; re-run the same command to resume"
        return f"interrupted: {self.calls_cached} calls cached; re-run the same command to resume"


class JudgeCallError(Exception):
    """One judge call failed; raised by a :class:`~locomo_exp.llm.messages.JudgeClient`.

    Attributes:
        message: the API's message (or the transport error's), never containing the key.
        kind: ``rate_limit``, ``overloaded``, ``server``, ``timeout``, ``connect`` (no
            connection could be made), ``connection`` (an open connection failed),
            ``request_timeout``, ``conflict`` (retryable) or ``bad_request``,
            ``temperature_rejected``, ``authentication``, ``permission``, ``not_found``,
            ``client_error`` (fatal), ``prompt_too_long`` (that call's error only).
        status_code: HTTP status, ``None`` for transport errors.
        retryable: whether trying again may succeed.
        retry_after_s: the server's ``retry-after`` (seconds), when it sent one.
        rate_limit: the response's rate-limit state
            (:class:`~locomo_exp.llm.messages.RateLimitInfo`), when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status_code: int | None = None,
        retryable: bool,
        retry_after_s: float | None = None,
        rate_limit: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status_code = status_code
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.rate_limit = rate_limit

    def describe(self) -> str:
        """One-line description, e.g. ``"429 rate_limit: Too many requests"``."""
        status = f"{self.status_code} " if self.status_code is not None else ""
        return f"{status}{self.kind}: {self.message}"


class JudgeBatchPending(Exception):
    """``judge.mode=batch`` with ``judge.batch.wait=false``: batches are still processing.

    Not an error (deliberately not a :class:`JudgeError`/``ValueError``): the batches are
    submitted and recorded in the cache file, and running the same command again collects
    them without submitting anything new. ``str(exc)`` is the message for the user.

    Attributes:
        batch_ids: every batch the job waits for (submitted now or earlier).
        submitted_batch_ids: the batches this call submitted.
        requests_pending: requests whose results are not yet available.
        requests_total: all judge calls of the job (cached ones included).
        counts: summed request counts of the pending batches (``processing``, ...).
    """

    def __init__(
        self,
        message: str,
        *,
        batch_ids: list[str],
        submitted_batch_ids: list[str],
        requests_pending: int,
        requests_total: int,
        counts: dict[str, int],
    ) -> None:
        super().__init__(message)
        self.batch_ids = batch_ids
        self.submitted_batch_ids = submitted_batch_ids
        self.requests_pending = requests_pending
        self.requests_total = requests_total
        self.counts = counts


class PoolInterrupted(Exception):
    """SIGINT/SIGTERM stopped the pool (internal).

    :func:`run_judge` turns it into :class:`~locomo_exp.llm.errors.JudgeInterrupted`
    outside the event loop.

    Attributes:
        signum: the first signal received.
        calls_cached: calls of the job in the cache now (before and during this run).
    """

    def __init__(self, signum: int, calls_cached: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum
        self.calls_cached = calls_cached
