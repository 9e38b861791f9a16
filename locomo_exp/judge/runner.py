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
   cached, and :class:`~locomo_exp.judge.errors.JudgeFatalAPIError` is raised.
4. Every completed call is committed to the cache as it arrives.
5. With a cache, every call is claimed before it is sent
   (:class:`~locomo_exp.judge.cache.CallClaims`), re-checking the cache: a call stored
   meanwhile is used, and a call another live process (or another pool) has in flight is
   set aside and waited for (polled with backoff once nothing else is left to do), so
   concurrent jobs judging the same answers never pay twice. Claims of a dead process
   are taken over at once; the pool's claims carry a heartbeat while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import os
import random
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Awaitable, Callable, Optional

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.judge.cache import CacheKey, CallClaims, JudgeCache
from locomo_exp.judge.client import (
    AnthropicJudgeClient,
    JudgeClient,
    JudgeReply,
    JudgeRequest,
    RateLimitInfo,
)
from locomo_exp.judge.errors import (
    JudgeCallError,
    JudgeError,
    JudgeFatalAPIError,
    JudgeJobStopped,
)
from locomo_exp.judge.interrupt import catch_signals
from locomo_exp.judge.pacing import RateLimiter
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.models import uses_structured_output
from locomo_exp.judge.preflight import API_KEY_ENV
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.records import QARecord

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallSpec:
    """One judge call to make (or to find in the cache).

    Attributes:
        question_id: the question.
        category: its LoCoMo category id.
        run: 0-based run index.
        request: the API request.
        key: the cache key.
        digest: ``key.digest()``.
    """

    question_id: str
    category: int
    run: int
    request: JudgeRequest
    key: CacheKey
    digest: str


def build_call_specs(
    records: list[QARecord], cfg: JudgeConfig, *, api_version: str
) -> list[CallSpec]:
    """One :class:`CallSpec` per record and run, question-major (q0 r0..rN, q1 r0..).

    Args:
        records: records to judge (already filtered by category).
        cfg: the judge config.
        api_version: the ``anthropic-version`` the calls carry.

    Returns:
        The call specs.
    """
    spec = get_protocol(cfg.protocol)
    schema = (
        spec.output_schema
        if uses_structured_output(cfg)
        else None
    )
    temperature = None if cfg.temperature is None else float(cfg.temperature)
    calls: list[CallSpec] = []
    for record in records:
        prompt = spec.build_prompt(
            record.question, record.ground_truth, record.prediction, record.category
        )
        request = JudgeRequest(
            model=cfg.model,
            system=spec.system_prompt,
            prompt=prompt,
            max_tokens=cfg.max_tokens,
            temperature=temperature,
            output_schema=schema,
        )
        for run in range(cfg.runs):
            key = CacheKey(
                model=cfg.model,
                api_version=api_version,
                temperature=temperature,
                protocol=spec.name,
                prompt_version=spec.prompt_version,
                max_tokens=cfg.max_tokens,
                structured_output=schema is not None,
                question=record.question,
                ground_truth=record.ground_truth,
                prediction=record.prediction,
                category=record.category,
                run_index=run,
            )
            calls.append(
                CallSpec(record.question_id, record.category, run, request, key, key.digest())
            )
    return calls


def result_from_reply(
    reply: JudgeReply, protocol: str, run: int, *, cached: bool
) -> JudgeResult:
    """Parse an API reply into a valid or parse-failure :class:`JudgeResult`.

    Args:
        reply: the API reply (fresh or cached).
        protocol: judge protocol.
        run: run index.
        cached: whether it came from the cache.

    Returns:
        A valid result (score 0-100), or an unscored parse failure (score ``None``,
        the reason in ``error``).
    """
    parsed = parse_judge_reply(reply.text, protocol, stop_reason=reply.stop_reason)
    common = {
        "run": run,
        "raw": reply.text,
        "stop_reason": reply.stop_reason,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cached": cached,
        "explanation": parsed.explanation,
        "label": parsed.label,
        "batch_id": reply.batch_id,
    }
    if parsed.ok:
        return JudgeResult(score=parsed.score, outcome="valid", **common)  # type: ignore[arg-type]
    return JudgeResult(
        score=None,
        outcome="parse_failure",
        error=parsed.failure_reason,
        **common,  # type: ignore[arg-type]
    )


NO_VERDICT_STOP_REASONS = ("max_tokens", "refusal")
"""Stop reasons after which a reply without a verdict is retried, not cached."""

NO_VERDICT_RETRIES = 1
"""Extra attempts for a reply without a verdict (empty, cut at max_tokens, refused)."""

STORED_OUTCOMES = ("valid", "parse_failure")
"""Outcomes whose reply is in the cache (a re-run reads them instead of calling)."""


def lacks_verdict(reply: JudgeReply, result: JudgeResult) -> bool:
    """Whether a reply is empty, cut at ``max_tokens`` or refused without a verdict.

    Such a reply says nothing about the answer: it is retried and never cached, unlike a
    real parse failure (a reply with text the parser cannot read).

    Args:
        reply: the API reply.
        result: its parsed result (:func:`result_from_reply`).

    Returns:
        True when ``result`` is not valid and the text is empty or the stop reason is
        ``max_tokens`` or ``refusal``.
    """
    if result.outcome == "valid":
        return False
    return not reply.text.strip() or reply.stop_reason in NO_VERDICT_STOP_REASONS


def no_verdict_result(reply: JudgeReply, run: int, attempts: int) -> JudgeResult:
    """The unscored result of a reply without a verdict (see :func:`lacks_verdict`)."""
    what = "an empty reply" if not reply.text.strip() else "no verdict"
    return JudgeResult(
        score=None,
        outcome="no_verdict",
        run=run,
        raw=reply.text,
        error=f"{what} (stop_reason {reply.stop_reason}) after {attempts} attempt(s); not cached",
        stop_reason=reply.stop_reason,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
    )


def split_cached(
    specs: list[CallSpec], cache: Optional[JudgeCache], protocol: str
) -> tuple[dict[tuple[str, int], JudgeResult], list[CallSpec]]:
    """Answer the specs the cache has a reply for; return the others, in order.

    Logs how many calls were found when the cache had any.

    Args:
        specs: the calls.
        cache: the open cache, or ``None`` (nothing is cached).
        protocol: judge protocol (to parse cached replies).

    Returns:
        ``(results, pending)``: ``(question_id, run) -> result`` (``cached=True``) of the
        specs found in the cache, and the specs that were not, in their original order.
    """
    stored = cache.get_many(s.digest for s in specs) if cache is not None else {}
    results: dict[tuple[str, int], JudgeResult] = {}
    pending: list[CallSpec] = []
    for spec in specs:
        reply = stored.get(spec.digest)
        if reply is None:
            pending.append(spec)
        else:
            results[(spec.question_id, spec.run)] = result_from_reply(
                reply, protocol, spec.run, cached=True
            )
    if stored:
        logger.info(
            "judge: %d of %d calls found in the cache", len(specs) - len(pending), len(specs)
        )
    return results, pending


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; the server's ``retry-after`` wins when given.

    Attributes:
        max_retries: retries after the first attempt.
        initial_backoff_s: delay before the first retry, seconds.
        max_backoff_s: cap of the exponential delay, seconds.
        max_retry_after_s: cap on a server-given ``retry-after``, seconds.
    """

    max_retries: int = 4
    initial_backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    max_retry_after_s: float = 600.0

    @classmethod
    def from_config(cls, cfg: JudgeConfig) -> RetryPolicy:
        """The policy of ``judge.max_retries``, ``judge.retry_initial_backoff_s`` and
        ``judge.retry_max_backoff_s`` (``max_retry_after_s`` keeps its default)."""
        return cls(
            max_retries=cfg.max_retries,
            initial_backoff_s=cfg.retry_initial_backoff_s,
            max_backoff_s=cfg.retry_max_backoff_s,
        )

    def delay(
        self,
        retry_number: int,
        retry_after_s: Optional[float],
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait before retry ``retry_number`` (0-based).

        Args:
            retry_number: 0 for the first retry.
            retry_after_s: the server's ``retry-after``, if any.
            rand: uniform [0, 1) source (for tests).

        Returns:
            ``retry-after`` (capped at ``max_retry_after_s``) when given, else
            ``min(max_backoff_s, initial_backoff_s * 2**retry_number)`` times a jitter
            factor in [0.75, 1].
        """
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_retry_after_s)
        base = min(self.max_backoff_s, self.initial_backoff_s * (2.0 ** min(retry_number, 30)))
        return base * (1.0 - 0.25 * rand())


class ProgressReporter:
    """Logs ``done/total``, rate, ETA and error counts at most every ``interval_s``.

    Args:
        total: all calls of the job, cached ones included.
        cached: calls answered from the cache.
        enabled: log progress lines at all.
        interval_s: minimum seconds between lines.
    """

    def __init__(self, total: int, cached: int, *, enabled: bool, interval_s: float = 5.0) -> None:
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

    def record_cached(self) -> None:
        """Count one call answered from the cache after another process made it."""
        self.cached += 1

    def record(self, result: JudgeResult) -> None:
        """Count one finished (non-cached) call and log a line if due."""
        self.made += 1
        if result.outcome == "parse_failure":
            self.parse_failures += 1
        elif result.outcome == "api_error":
            self.api_errors += 1
        now = time.monotonic()
        if self.enabled and now - self._last >= self.interval_s:
            self._last = now
            logger.info("%s", self.line(now))

    def line(self, now: Optional[float] = None) -> str:
        """The progress line, e.g. ``judge 120/15400 (0.8%) 31.2 calls/s ETA 0:08:11 ...``."""
        now = time.monotonic() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        done = self.cached + self.made
        rate = self.made / elapsed
        remaining = self.total - done
        eta = _format_seconds(remaining / rate) if rate > 0 else "?"
        pct = 100.0 * done / self.total if self.total else 100.0
        return (
            f"judge {done}/{self.total} ({pct:.1f}%) {rate:.1f} calls/s ETA {eta} | "
            f"cached {self.cached} parse_failures {self.parse_failures} "
            f"api_errors {self.api_errors} retries {self.retries}"
        )

    def finish(self) -> None:
        """Log the final line."""
        if self.enabled:
            logger.info(
                "%s (finished in %s)", self.line(), _format_seconds(time.monotonic() - self._start)
            )


def _format_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def fatal_message(error: JudgeCallError, model: str) -> str:
    """The message of a job stopped by a non-retryable API error (never contains the key).

    Args:
        error: the classified error.
        model: the judge model id.

    Returns:
        The API's message plus what to change.
    """
    status = error.status_code if error.status_code is not None else "?"
    api = error.message
    if error.kind == "temperature_rejected":
        return (
            f"the judge model {model} does not accept a temperature ({status}: {api}). "
            "Set judge.temperature=null to send none."
        )
    if error.kind == "not_found":
        return (
            f"the API returned {status} for judge model {model!r}: {api}. The model id may be "
            "wrong or retired; set judge.model to a current model id."
        )
    if error.kind == "authentication":
        return f"the API rejected the credentials ({status}: {api}). Check {API_KEY_ENV}."
    if error.kind == "permission":
        return f"the API denied access ({status}: {api}). Check the key's access to {model}."
    hint = ""
    lowered = api.lower()
    if any(word in lowered for word in ("output_config", "json_schema", "structured")):
        hint = " Set judge.structured_output=false if the model does not support it."
    return f"the API rejected the judge request ({status} {error.kind}: {api}).{hint}"


CLAIM_POLL_INITIAL_S = 0.05
"""First delay before looking again at a call another owner has in flight, seconds."""
CLAIM_POLL_MAX_S = 1.0
"""Cap of that delay (it doubles at each look), seconds."""


def claim_poll_delay(looks: int) -> float:
    """Seconds to wait before looking again at a call another owner has in flight.

    Args:
        looks: how many times the call was already found in flight (0 for the first).

    Returns:
        ``min(CLAIM_POLL_MAX_S, CLAIM_POLL_INITIAL_S * 2**looks)``.
    """
    return min(CLAIM_POLL_MAX_S, CLAIM_POLL_INITIAL_S * 2.0**looks)


def claim_timeout_s(cfg: JudgeConfig) -> float:
    """Seconds without heartbeat after which another owner's claim is taken over.

    ``judge.claim_timeout_s``, or by default ``2 x timeout_s x (max_retries + 1)``. A dead
    owner on this host is detected at once (its pid), whatever this timeout.
    """
    if cfg.claim_timeout_s is not None:
        return float(cfg.claim_timeout_s)
    return 2.0 * float(cfg.timeout_s) * (int(cfg.max_retries) + 1)


class PoolInterrupted(Exception):
    """SIGINT/SIGTERM stopped the pool (internal; :func:`run_judge` turns it into
    :class:`~locomo_exp.judge.errors.JudgeInterrupted` outside the event loop).

    Attributes:
        signum: the first signal received.
        calls_cached: calls of the job in the cache now (before and during this run).
    """

    def __init__(self, signum: int, calls_cached: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum
        self.calls_cached = calls_cached


class JudgePool:
    """Runs call specs through one bounded asyncio pool.

    Args:
        client: the API client.
        cfg: the judge config (concurrency, pacing, retries, protocol, progress,
            ``max_consecutive_connection_errors``, ``drain_s``).
        cache: where completed calls are stored, or ``None``.
        stop_on_error_rate: stop :meth:`run` as soon as its API errors exceed
            ``judge.max_error_rate`` of its calls (``run_judge``; the seed's per-answer
            functions return API errors as results instead).
        handle_signals: on SIGINT/SIGTERM, stop starting calls, wait up to
            ``judge.drain_s`` for those in flight, then raise :class:`PoolInterrupted`.
        clock: monotonic clock, seconds (injectable for tests).
        sleep: coroutine function waiting a number of seconds (injectable for tests).
    """

    def __init__(
        self,
        client: JudgeClient,
        cfg: JudgeConfig,
        cache: Optional[JudgeCache],
        *,
        stop_on_error_rate: bool = False,
        handle_signals: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.cfg = cfg
        self.cache = cache
        self.policy = RetryPolicy.from_config(cfg)
        self._clock = clock
        self._sleep = sleep
        self.limiter = RateLimiter(cfg.requests_per_minute, clock=clock, sleep=sleep)
        self._pace_from_headers = bool(cfg.pace_from_rate_limit_headers)
        self.fatal: Optional[JudgeCallError] = None
        self.stopped: Optional[JudgeJobStopped] = None
        """Why the job stopped early (unreachable endpoint, error rate), if it did."""
        self.interrupted: Optional[int] = None
        """The signal that interrupted the pool, if one did."""
        self._hurry: Optional[asyncio.Event] = None
        self._interrupt_event: Optional[asyncio.Event] = None
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
        self.progress: Optional[ProgressReporter] = None
        self._claims: Optional[CallClaims] = None

    @property
    def halted(self) -> bool:
        """Whether no new call may start (fatal error, early stop or interruption)."""
        return self.fatal is not None or self.stopped is not None or self.interrupted is not None

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
        stale_after = claim_timeout_s(self.cfg)
        self._claims = CallClaims(self.cache, stale_after_s=stale_after)
        beat = asyncio.ensure_future(self._heartbeat(min(30.0, max(0.05, stale_after / 4))))
        try:
            yield
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
            claims, self._claims = self._claims, None
            claims.close()
            if claims.takeovers:
                logger.info(
                    "judge: took over %d call(s) claimed by a process that is gone",
                    claims.takeovers,
                )

    async def _heartbeat(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            if self._claims is not None:
                self._claims.heartbeat()

    async def _wait_for_pause(self) -> None:
        while True:
            delay = self._resume_at - self._clock()
            if delay <= 0:
                return
            await self._sleep(delay)

    async def _attempt(
        self, spec: CallSpec, *, peek: bool = False, first: bool = False
    ) -> Optional[tuple[JudgeResult, bool]]:
        """Claim and make one call (``peek``: see :meth:`CallClaims.acquire`; ``first``:
        the job's first call, see :meth:`_one`).

        Returns:
            ``(result, called)``: ``called`` is ``False`` when the cache already had the
            reply; ``None`` when another live owner has the call in flight (wait).
        """
        claims = self._claims
        if claims is None:
            return await self._one(spec, first=first), True
        claim = claims.acquire(spec.digest, peek=peek)
        if claim.reply is not None:
            return result_from_reply(claim.reply, self.cfg.protocol, spec.run, cached=True), False
        if not claim.acquired:
            return None
        stored = False
        try:
            result = await self._one(spec, first=first)
            stored = result.outcome in STORED_OUTCOMES
            return result, True
        finally:
            if not stored:
                claims.release(spec.digest)

    def _observe(self, info: Optional[RateLimitInfo]) -> None:
        if self._pace_from_headers:
            self.limiter.observe(info)

    def _api_error(self, spec: CallSpec, err: JudgeCallError, attempts: int) -> JudgeResult:
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
        return JudgeResult(score=None, outcome="api_error", run=spec.run, error=err.describe())

    def _check_error_rate(self, err: JudgeCallError) -> None:
        """Stop the job once its API errors exceed ``judge.max_error_rate`` of its calls."""
        if not self.stop_on_error_rate or self.stopped is not None:
            return
        allowed = float(self.cfg.max_error_rate) * self.total_calls
        if self.api_errors > allowed:
            self.stopped = JudgeJobStopped(
                f"judge API errors exceed judge.max_error_rate={self.cfg.max_error_rate:g}: "
                f"{self.api_errors} of {self.total_calls} calls failed (at most {allowed:g} "
                f"allowed; last: {err.describe()}); stopped early, completed calls are "
                "cached: re-run the same command to resume"
            )

    def _note_connection(self, err: JudgeCallError, cannot_connect: bool) -> bool:
        """Count a connection failure; True when the job must stop (see :meth:`_one`)."""
        self.connection_errors_in_a_row += 1
        limit = int(self.cfg.max_consecutive_connection_errors)
        if cannot_connect and self.responses == 0:
            reason = f"{err.message}"
        elif self.connection_errors_in_a_row >= limit:
            reason = f"{self.connection_errors_in_a_row} connection failures in a row, last: {err.message}"
        else:
            return False
        if self.stopped is None:
            self.stopped = JudgeJobStopped(
                f"cannot connect to the judge API at {self.base_url} ({reason}); check "
                "judge.base_url (or ANTHROPIC_BASE_URL) and the network"
            )
        return True

    async def _one(self, spec: CallSpec, *, first: bool = False) -> JudgeResult:
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
                    return JudgeResult(
                        score=None, outcome="api_error", run=spec.run, error=err.describe()
                    )
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
            result = result_from_reply(reply, self.cfg.protocol, spec.run, cached=False)
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
                return no_verdict_result(reply, spec.run, no_verdict_tries + 1)
            if self._claims is not None:
                self._claims.complete(
                    spec.key, reply, question_id=spec.question_id, digest=spec.digest
                )
            elif self.cache is not None:
                self.cache.put(spec.key, reply, question_id=spec.question_id)
            return result

    async def _until_done_or_interrupted(self, work: Awaitable[None]) -> None:
        """Await ``work``; on a signal, give it ``judge.drain_s`` (or until a second
        signal) to finish the calls in flight, then cancel it."""
        task = asyncio.ensure_future(work)
        assert self._interrupt_event is not None and self._hurry is not None
        stop = asyncio.ensure_future(self._interrupt_event.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if not task.done():
            hurry = asyncio.ensure_future(self._hurry.wait())
            try:
                await asyncio.wait(
                    {task, hurry},
                    timeout=float(self.cfg.drain_s),
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                hurry.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                return
        task.result()

    async def run(self, specs: list[CallSpec]) -> dict[tuple[str, int], JudgeResult]:
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
        """
        results, pending = split_cached(specs, self.cache, self.cfg.protocol)
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

        queue = deque(pending)
        # calls another owner has in flight: (due time, sequence, looks so far, spec)
        waiting: list[tuple[float, int, int, CallSpec]] = []
        sequence = itertools.count()

        def finish(spec: CallSpec, result: JudgeResult, called: bool) -> None:
            results[(spec.question_id, spec.run)] = result
            if called:
                progress.record(result)
            else:
                self.waited += 1
                progress.record_cached()

        def set_aside(spec: CallSpec, looks: int) -> None:
            due = self._clock() + claim_poll_delay(looks)
            heapq.heappush(waiting, (due, next(sequence), looks + 1, spec))

        async def next_spec() -> Optional[tuple[CallSpec, int]]:
            """The next call to try: new ones first, then those waited for."""
            if queue:
                return queue.popleft(), 0
            if waiting:
                due, _, looks, spec = heapq.heappop(waiting)
                delay = due - self._clock()
                if delay > 0:
                    await self._sleep(delay)
                return spec, looks
            return None

        async def step(first: bool = False) -> Optional[bool]:
            """Try one call; ``None`` when nothing is left, else whether a call was made."""
            item = await next_spec()
            if item is None:
                return None
            spec, looks = item
            outcome = await self._attempt(spec, peek=looks > 0, first=first)
            if outcome is None:
                set_aside(spec, looks)
                return False
            finish(spec, *outcome)
            return outcome[1]

        async def canary() -> None:
            # The first call made goes alone, so a fatal error costs exactly one.
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
                if not self.halted and (queue or waiting):
                    n_workers = min(self.cfg.max_concurrency, len(queue) + len(waiting))
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
        if self.fatal is not None:
            raise fatal_api_error(self.fatal, self.cfg.model)
        if self.stopped is not None:
            raise self.stopped
        return results

    async def call(self, spec: CallSpec) -> JudgeResult:
        """Make one call, with retries (or, if another process made or is making it, use
        its reply from the cache).

        Args:
            spec: the call.

        Returns:
            A valid, parse-failure, no-verdict or (retries exhausted) API-error result.

        Raises:
            JudgeFatalAPIError: on a non-retryable API error.
            JudgeJobStopped: the endpoint cannot be reached.
        """
        looks = 0
        async with self._claiming():
            while True:
                outcome = await self._attempt(spec, peek=looks > 0, first=True)
                if outcome is not None:
                    result = outcome[0]
                    break
                await asyncio.sleep(claim_poll_delay(looks))
                looks += 1
        if self.fatal is not None:
            raise fatal_api_error(self.fatal, self.cfg.model)
        if self.stopped is not None:
            raise self.stopped
        return result


def fatal_api_error(error: JudgeCallError, model: str) -> JudgeFatalAPIError:
    """The exception that stops a job at a non-retryable API error (see :func:`fatal_message`)."""
    return JudgeFatalAPIError(
        fatal_message(error, model),
        status_code=error.status_code,
        kind=error.kind,
        api_message=error.message,
    )


def make_client(cfg: JudgeConfig) -> AnthropicJudgeClient:
    """Build the SDK-backed client from the config and ``ANTHROPIC_API_KEY``.

    Raises:
        JudgeError: if ``ANTHROPIC_API_KEY`` is not set.
    """
    api_key = os.environ.get(API_KEY_ENV)
    if not api_key:
        raise JudgeError(f"{API_KEY_ENV} is not set; export your Anthropic API key")
    return AnthropicJudgeClient(
        api_key=api_key,
        temperature=cfg.temperature,
        base_url=cfg.base_url,
        timeout_s=cfg.timeout_s,
        create_batch_timeout_s=cfg.batch.create_timeout_s,
    )


@contextlib.asynccontextmanager
async def judge_client(
    cfg: JudgeConfig, client: Optional[JudgeClient] = None
) -> AsyncIterator[JudgeClient]:
    """Use ``client``, or build one with :func:`make_client` and close it on exit.

    Args:
        cfg: the judge config (for a client built here).
        client: a caller's client; it is left open (the caller owns it).

    Yields:
        The client to use.

    Raises:
        JudgeError: no client given and ``ANTHROPIC_API_KEY`` is not set.
    """
    if client is not None:
        yield client
        return
    own = make_client(cfg)
    try:
        yield own
    finally:
        await own.aclose()


async def judge_calls_async(
    specs: list[CallSpec],
    cfg: JudgeConfig,
    *,
    cache: Optional[JudgeCache],
    client: Optional[JudgeClient] = None,
    stop_on_error_rate: bool = False,
) -> tuple[dict[tuple[str, int], JudgeResult], int]:
    """Run specs through a :class:`JudgePool`, creating (and closing) a client if needed.

    Args:
        specs: the calls.
        cfg: the judge config.
        cache: the open cache, or ``None``.
        client: a client to use instead of one built from the config.
        stop_on_error_rate: see :class:`JudgePool`.

    Returns:
        ``(results, calls_made)``; ``calls_made`` counts API requests sent, retries included.

    Raises:
        JudgeFatalAPIError: at the first non-retryable API error.
        JudgeJobStopped: endpoint unreachable, or error rate exceeded (see
            :meth:`JudgePool.run`).
        PoolInterrupted: SIGINT/SIGTERM.
    """
    async with judge_client(cfg, client) as active:
        pool = JudgePool(active, cfg, cache, stop_on_error_rate=stop_on_error_rate)
        results = await pool.run(specs)
    return results, pool.calls_made
