"""Running judge calls: one asyncio pool over all questions x runs, with retries and a cache.

1. One :class:`CallSpec` per (judged question, run index); calls found in the cache are
   answered from it.
2. The first remaining call is sent alone (a canary): a wrong model id, a bad key or a
   rejected temperature stops the job after exactly one call, not after
   ``max_concurrency`` of them.
3. The rest go through one pool of ``judge.max_concurrency`` workers, optionally paced to
   ``judge.requests_per_minute``. Retryable failures (429, 529, 5xx, timeouts, dropped
   connections) are retried with exponential backoff and jitter, or after the server's
   ``retry-after``, which also pauses every worker; a call still failing after
   ``judge.max_retries`` retries is an API error for that run. A fatal failure (400, 401,
   403, 404) stops the pool at once: no new call starts, calls in flight finish and are
   cached, and :class:`~locomo_exp.llm.errors.JudgeFatalAPIError` is raised.
4. Every completed call is committed to the cache as it arrives.
5. With a cache, every call is claimed before it is sent
   (:class:`~locomo_exp.llm.cache.CallClaims`), re-checking the cache: a call stored
   meanwhile is used, and a call another live process (or another pool) has in flight is
   set aside and waited for (polled with backoff once nothing else is left to do), so
   concurrent jobs judging the same answers never pay twice. Claims of a dead process
   are taken over at once; the pool's claims carry a heartbeat while it runs.
6. Another thread can stop the calls (:class:`~locomo_exp.llm.stop.CallsStop`, e.g. the
   job's MLflow run could not be set up): checked before each call and retry, calls in
   flight finish and are cached, then :class:`~locomo_exp.llm.stop.CallsStopped`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Generic

from locomo_exp.config import JudgeConfig
from locomo_exp.llm.cache import CallClaims, ClaimOwners, JudgeCache
from locomo_exp.llm.cache.claims import held_claims
from locomo_exp.llm.cache.health import store_or_stop
from locomo_exp.llm.call_queue import CallQueue
from locomo_exp.llm.calls import (
    NO_VERDICT_RETRIES,
    STORED_OUTCOMES,
    CallSpec,
    R,
    ReplyReader,
    lacks_verdict,
    split_cached,
)
from locomo_exp.llm.errors import JudgeCallError, JudgeJobStopped, PoolInterrupted
from locomo_exp.llm.interrupt import catch_signals, drain_or_cancel
from locomo_exp.llm.messages import JudgeClient, RateLimitInfo
from locomo_exp.llm.pacing import RateLimiter
from locomo_exp.llm.progress import ProgressReporter
from locomo_exp.llm.retry import (
    RetryPolicy,
    claim_poll_delay,
    claim_timeout_s,
    connection_stop,
    error_rate_stop,
    fatal_api_error,
)
from locomo_exp.llm.stop import CallsStop, CallsStopped

logger = logging.getLogger(__name__)


class JudgePool(Generic[R]):
    """Runs call specs through one bounded asyncio pool.

    Args:
        client: the API client.
        cfg: the judge config (concurrency, pacing, retries, protocol, progress,
            ``max_consecutive_connection_errors``, ``drain_s``).
        cache: where completed calls are stored, or ``None``.
        reader: turns replies and failures into results (the judge layer's
            :class:`~locomo_exp.judge.calls.VerdictReader`; the pool knows no verdicts).
        stop_on_error_rate: stop :meth:`run` as soon as its API errors exceed
            ``judge.max_error_rate`` of its calls (``run_judge``; the seed's per-answer
            functions return API errors as results instead).
        handle_signals: on SIGINT/SIGTERM, stop starting calls, wait up to
            ``judge.drain_s`` for those in flight, then raise :class:`PoolInterrupted`.
        clock: monotonic clock, seconds (injectable for tests).
        sleep: coroutine function waiting a number of seconds (injectable for tests):
            pacing, retry backoff, claim polling and the claims heartbeat all use it.
        claim_owners: registry of live claim owners (default: this process's).
        calls_stop: set by another thread to stop new calls (see :meth:`run`).
    """

    def __init__(
        self,
        client: JudgeClient,
        cfg: JudgeConfig,
        cache: JudgeCache | None,
        *,
        reader: ReplyReader[R],
        stop_on_error_rate: bool = False,
        handle_signals: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        claim_owners: ClaimOwners | None = None,
        calls_stop: CallsStop | None = None,
    ) -> None:
        self.client = client
        self._claim_owners = claim_owners
        self.cfg = cfg
        self.cache = cache
        self.reader = reader
        self.policy = RetryPolicy.from_config(cfg)
        self._clock = clock
        self._sleep = sleep
        self.limiter = RateLimiter(cfg.requests_per_minute, clock=clock, sleep=sleep)
        self._pace_from_headers = bool(cfg.pace_from_rate_limit_headers)
        self.fatal: JudgeCallError | None = None
        self.stopped: JudgeJobStopped | None = None
        """Why the job stopped early (unreachable endpoint, error rate), if it did."""
        self.interrupted: int | None = None
        """The signal that interrupted the pool, if one did."""
        self._hurry: asyncio.Event | None = None
        self._interrupt_event: asyncio.Event | None = None
        self.stop_on_error_rate = stop_on_error_rate
        self.handle_signals = handle_signals
        self._resume_at = 0.0
        self.calls_made = 0
        self.responses = 0
        """HTTP responses received (any status): the endpoint is reachable."""
        self.connection_errors_in_a_row = 0
        self.api_errors = 0
        """Calls that ended in an API error counted against ``judge.max_error_rate``."""
        self.total_calls = 0
        self.waited = 0
        """Calls another owner had in flight, waited for and then read from the cache."""
        self.stored: set[str] = set()
        """Digests this pool's own calls stored: a later spec with one repeats its prompt."""
        self.progress: ProgressReporter | None = None
        self._claims: CallClaims | None = None
        self.calls_stop = calls_stop
        self.on_paid: Callable[[R], object] | None = None  # each call made (spend cap)
        # before each call is sent, with the calls in flight (spend cap: may set calls_stop)
        self.before_call: Callable[[int], object] | None = None

    @property
    def halted(self) -> bool:
        """Whether no new call may start (fatal error, early stop, interruption, stop signal)."""
        return (
            self.fatal is not None
            or self.stopped is not None
            or self.interrupted is not None
            or self._told_to_stop
        )

    @property
    def _told_to_stop(self) -> bool:
        return self.calls_stop is not None and self.calls_stop.is_set

    def _raise_stop(self, results: dict[tuple[str, int], R], *, total: int) -> None:
        """Raise what stopped the pool, if anything did (fatal error, stop signal, early stop)."""
        if self.fatal is not None:
            raise fatal_api_error(self.fatal, self.cfg)
        if self.calls_stop is not None and self.calls_stop.is_set:  # the cause of the rest
            done = sum(1 for r in results.values() if r.outcome in STORED_OUTCOMES)
            raise CallsStopped(
                self.calls_stop.reason,
                calls_made=self.calls_made,
                calls_left=total - done,
                calls_total=total,
            ) from self.calls_stop.error
        if self.stopped is not None:
            raise self.stopped

    @property
    def base_url(self) -> str:
        """The endpoint the client talks to (for messages; never contains the key)."""
        return str(
            getattr(self.client, "base_url", None) or self.cfg.base_url or "the default API URL"
        )

    def interrupt(self, signum: int) -> None:
        """Stop starting calls (first signal) or stop waiting for those in flight (second)."""
        if self.interrupted is None:
            self.interrupted = signum
            if self._interrupt_event is not None:
                self._interrupt_event.set()
        elif self._hurry is not None:
            self._hurry.set()

    @contextlib.asynccontextmanager
    async def _claiming(self) -> AsyncIterator[None]:
        """Hold a claim owner (with a heartbeat task) for the duration of the block."""
        if self.cache is None or self._claims is not None:
            yield
            return
        async with held_claims(
            self.cache,
            stale_after_s=claim_timeout_s(self.cfg),
            owners=self._claim_owners,
            sleep=self._sleep,
        ) as claims:
            self._claims = claims
            try:
                yield
            finally:
                self._claims = None

    async def _wait_for_pause(self) -> None:
        while True:
            delay = self._resume_at - self._clock()
            if delay <= 0:
                return
            await self._sleep(delay)

    async def _attempt(
        self, spec: CallSpec, *, peek: bool = False, first: bool = False
    ) -> tuple[R, bool] | None:
        """Claim and make one call.

        ``peek``: see :meth:`CallClaims.acquire`; ``first``: the job's first call, see
        :meth:`_one`.

        Returns:
            ``(result, called)``: ``called`` is ``False`` when the cache already had the
            reply; ``None`` when another live owner has the call in flight (wait).
        """
        claims = self._claims
        if claims is None:
            return await self._one(spec, first=first), True
        claim = claims.acquire(spec.digest, peek=peek)
        if claim.reply is not None:
            result = self.reader.read(claim.reply, spec.run, cached=True)
            return result, False
        if not claim.acquired:
            return None
        stored = False
        try:
            result = await self._one(spec, first=first)
            stored = result.outcome in STORED_OUTCOMES
            if stored:
                self.stored.add(spec.digest)
            return result, True
        finally:
            if not stored:
                claims.release(spec.digest)

    def _observe(self, info: RateLimitInfo | None) -> None:
        if self._pace_from_headers:
            self.limiter.observe(info)

    def _api_error(self, spec: CallSpec, err: JudgeCallError, attempts: int) -> R:
        logger.warning(
            "judge: question %s run %d failed after %d attempt(s): %s",
            spec.question_id,
            spec.run,
            attempts,
            err.describe(),
        )
        if err.kind != "prompt_too_long":
            self.api_errors += 1
            self._check_error_rate(err)
        return self.reader.failed(spec.run, err.describe())

    def _check_error_rate(self, err: JudgeCallError) -> None:
        """Stop the job once its API errors exceed ``judge.max_error_rate`` of its calls."""
        if not self.stop_on_error_rate or self.stopped is not None:
            return
        self.stopped = error_rate_stop(self.cfg, self.api_errors, self.total_calls, err)

    def _note_connection(self, err: JudgeCallError, cannot_connect: bool) -> bool:
        """Count a connection failure; True when the job must stop (see :meth:`_one`)."""
        self.connection_errors_in_a_row += 1
        limit = int(self.cfg.max_consecutive_connection_errors)
        if cannot_connect and self.responses == 0:
            reason = f"{err.message}"
        elif self.connection_errors_in_a_row >= limit:
            reason = (
                f"{self.connection_errors_in_a_row} connection failures in a row, "
                f"last: {err.message}"
            )
        else:
            return False
        if self.stopped is None:
            self.stopped = connection_stop(self.cfg, self.base_url, reason)
        return True

    async def _one(self, spec: CallSpec, *, first: bool = False) -> R:
        """Make one call with retries.

        Stops early (no retry, :attr:`stopped` set) when the job's first call cannot
        connect at all, or after ``judge.max_consecutive_connection_errors`` connection
        failures in a row. A reply without a verdict (:func:`lacks_verdict`) is retried
        once and never cached. A 400 ``prompt is too long`` is this call's API error
        only; other non-retryable errors stop the job (:attr:`fatal`).
        """
        retry = 0
        no_verdict_tries = 0
        while True:
            await self._wait_for_pause()
            await self.limiter.acquire()
            if self.before_call is not None:  # the spend cap: would this call pass it?
                self.before_call(self.limiter.in_flight)
            if self.calls_stop is not None and self.calls_stop.is_set:  # not sent, not paid
                error = f"not sent: {self.calls_stop.reason}"
                return self.reader.failed(spec.run, error)
            self.limiter.in_flight += 1
            try:
                self.calls_made += 1
                reply = await self.client.complete(spec.request)
            except JudgeCallError as err:
                if err.kind in ("connect", "connection"):
                    cannot_connect = first and retry == 0 and err.kind == "connect"
                    if self._note_connection(err, cannot_connect):
                        return self._api_error(spec, err, retry + 1)
                else:
                    self.responses += 1
                    self.connection_errors_in_a_row = 0
                    self._observe(err.rate_limit)
                if not err.retryable:
                    if err.kind == "prompt_too_long":
                        return self._api_error(spec, err, retry + 1)
                    if self.fatal is None:
                        self.fatal = err
                    return self.reader.failed(spec.run, err.describe())
                if retry >= self.policy.max_retries or self.halted:
                    return self._api_error(spec, err, retry + 1)
                delay = self.policy.delay(retry, err.retry_after_s)
                if err.retry_after_s is not None:
                    self._resume_at = max(self._resume_at, self._clock() + delay)
                logger.debug(
                    "judge: retry %d of question %s run %d in %.2fs after %s",
                    retry + 1,
                    spec.question_id,
                    spec.run,
                    delay,
                    err.describe(),
                )
                if self.progress is not None:
                    self.progress.retries += 1
                retry += 1
                await self._sleep(delay)
                continue
            finally:
                self.limiter.in_flight -= 1
            self.responses += 1
            self.connection_errors_in_a_row = 0
            self._observe(reply.rate_limit)
            result = self.reader.read(reply, spec.run, cached=False)
            if lacks_verdict(reply, result):
                if no_verdict_tries < NO_VERDICT_RETRIES and not self.halted:
                    no_verdict_tries += 1
                    continue
                logger.warning(
                    "judge: question %s run %d: no verdict (stop_reason %s) after %d "
                    "attempt(s); unscored, not cached",
                    spec.question_id,
                    spec.run,
                    reply.stop_reason,
                    no_verdict_tries + 1,
                )
                return self.reader.no_verdict(reply, spec.run, no_verdict_tries + 1)
            # a reply the cache cannot store stops new calls at once (counted, one line)
            self.stopped = store_or_stop(self._claims, self.cache, spec, reply, self.stopped)
            return result

    async def _until_done_or_interrupted(self, work: Awaitable[object]) -> None:
        assert self._interrupt_event is not None and self._hurry is not None
        await drain_or_cancel(work, self._interrupt_event, self._hurry, float(self.cfg.drain_s))

    async def run(self, specs: list[CallSpec]) -> dict[tuple[str, int], R]:
        """Judge every spec, from the cache where possible.

        Args:
            specs: the calls.

        Returns:
            ``(question_id, run) -> result`` for every spec.

        Raises:
            JudgeFatalAPIError: at the first non-retryable API error (other than a 400
                ``prompt is too long``), after the calls in flight have finished (and
                been cached).
            JudgeJobStopped: the endpoint cannot be reached (first call, or
                ``judge.max_consecutive_connection_errors`` in a row), or (with
                ``stop_on_error_rate``) API errors exceed ``judge.max_error_rate``.
            PoolInterrupted: SIGINT/SIGTERM (with ``handle_signals``), after the calls in
                flight finished or ``judge.drain_s`` passed.
            CallsStopped: ``calls_stop`` was set, after the calls in flight finished (and
                were cached); it names the reason and the calls made and left.
        """
        results, pending = split_cached(specs, self.cache, self.reader)
        self.total_calls = len(specs)
        progress = ProgressReporter(
            len(specs),
            len(specs) - len(pending),
            enabled=self.cfg.progress,
            interval_s=self.cfg.progress_interval_s,
        )
        self.progress = progress
        self._interrupt_event = asyncio.Event()
        self._hurry = asyncio.Event()

        queue = CallQueue(pending, clock=self._clock, sleep=self._sleep)

        def finish(spec: CallSpec, result: R, called: bool) -> None:
            results[(spec.question_id, spec.run)] = result
            if called:
                progress.record(result)
                if self.on_paid is not None:
                    self.on_paid(result)
            else:  # read from the cache: this job's own call (a repeated prompt) or another's
                self.waited += spec.digest not in self.stored
                progress.record_cached()

        async def step(first: bool = False) -> bool | None:
            """Try one call; ``None`` when nothing is left, else whether a call was made."""
            item = await queue.next()
            if item is None or self.halted:  # checked again: waiting for a call takes time
                return None
            spec, looks = item
            outcome = await self._attempt(spec, peek=looks > 0, first=first)
            if outcome is None:
                queue.set_aside(spec, looks)
                return False
            finish(spec, *outcome)
            return outcome[1]

        async def canary() -> None:
            # The first call made goes alone, so a fatal error costs exactly one. Its wait
            # overlaps nothing: the checks before it must precede any payment, every request
            # is built before them, and the work after it needs the replies.
            while not self.halted:
                made = await step(first=True)
                if made is None or made:
                    return

        async def worker() -> None:
            while not self.halted:
                if await step() is None:
                    return

        signals = catch_signals(self.interrupt) if self.handle_signals else contextlib.nullcontext()
        with signals:
            async with self._claiming():
                await self._until_done_or_interrupted(canary())
                if not self.halted and queue:
                    n_workers = min(self.cfg.max_concurrency, len(queue))
                    await self._until_done_or_interrupted(
                        asyncio.gather(*(worker() for _ in range(n_workers)))
                    )
        progress.finish()
        if self.waited:
            logger.info(
                "judge: %d call(s) were in flight in another process; their replies were "
                "waited for, not paid twice",
                self.waited,
            )
        if self.interrupted is not None:
            cached = sum(1 for r in results.values() if r.outcome in STORED_OUTCOMES)
            raise PoolInterrupted(self.interrupted, cached)
        self._raise_stop(results, total=len(specs))
        return results

    async def call(self, spec: CallSpec) -> R:
        """Make one call, with retries.

        If another process made or is making it, its reply from the cache is used.

        Args:
            spec: the call.

        Returns:
            A valid, parse-failure, no-verdict or (retries exhausted) API-error result.

        Raises:
            JudgeFatalAPIError: on a non-retryable API error.
            JudgeJobStopped: the endpoint cannot be reached; :class:`CallsStopped` when
                ``calls_stop`` was set.
        """
        looks = 0
        async with self._claiming():
            while True:
                outcome = await self._attempt(spec, peek=looks > 0, first=True)
                if outcome is not None:
                    result = outcome[0]
                    break
                await self._sleep(claim_poll_delay(looks))
                looks += 1
        self._raise_stop({(spec.question_id, spec.run): result}, total=1)
        return result


__all__ = [
    "CallSpec",
    "JudgePool",
    "PoolInterrupted",
    "RetryPolicy",
    "split_cached",
]
