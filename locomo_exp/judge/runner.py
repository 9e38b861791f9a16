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
from typing import Callable, Optional

from locomo_exp.config import JudgeConfig, JudgeProtocol
from locomo_exp.judge.aggregate import PARSE_FAILURE_SCORE, JudgeResult
from locomo_exp.judge.cache import CacheKey, CallClaims, JudgeCache
from locomo_exp.judge.client import AnthropicJudgeClient, JudgeClient, JudgeReply, JudgeRequest
from locomo_exp.judge.errors import JudgeCallError, JudgeError, JudgeFatalAPIError
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.preflight import API_KEY_ENV, supports_structured_output
from locomo_exp.judge.prompts import build_judge_prompt, get_protocol
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
        if cfg.structured_output and supports_structured_output(cfg.model)
        else None
    )
    temperature = None if cfg.temperature is None else float(cfg.temperature)
    calls: list[CallSpec] = []
    for record in records:
        prompt = build_judge_prompt(
            record.question,
            record.ground_truth,
            record.prediction,
            record.category,
            protocol=spec.protocol,
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
                protocol=spec.protocol.value,
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
    reply: JudgeReply, protocol: JudgeProtocol | str, run: int, *, cached: bool
) -> JudgeResult:
    """Parse an API reply into a valid or parse-failure :class:`JudgeResult`.

    Args:
        reply: the API reply (fresh or cached).
        protocol: judge protocol.
        run: run index.
        cached: whether it came from the cache.

    Returns:
        A result with the score (0-100) or -1 and the failure reason.
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
        score=PARSE_FAILURE_SCORE,
        outcome="parse_failure",
        error=parsed.failure_reason,
        **common,  # type: ignore[arg-type]
    )


def split_cached(
    specs: list[CallSpec], cache: Optional[JudgeCache], protocol: JudgeProtocol | str
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


class RateLimiter:
    """Spaces call starts evenly to at most ``requests_per_minute`` (no bursts).

    Args:
        requests_per_minute: the limit, or ``None`` for no limit.
    """

    def __init__(self, requests_per_minute: Optional[float]) -> None:
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next = 0.0

    async def acquire(self) -> None:
        """Wait for the next free slot (slots are reserved in call order)."""
        if not self._interval:
            return
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)


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


class JudgePool:
    """Runs call specs through one bounded asyncio pool.

    Args:
        client: the API client.
        cfg: the judge config (concurrency, pacing, retries, protocol, progress).
        cache: where completed calls are stored, or ``None``.
    """

    def __init__(self, client: JudgeClient, cfg: JudgeConfig, cache: Optional[JudgeCache]) -> None:
        self.client = client
        self.cfg = cfg
        self.cache = cache
        self.policy = RetryPolicy.from_config(cfg)
        self.limiter = RateLimiter(cfg.requests_per_minute)
        self.fatal: Optional[JudgeCallError] = None
        self._resume_at = 0.0
        self.calls_made = 0
        self.waited = 0
        """Calls another owner had in flight, waited for and then read from the cache."""
        self.progress: Optional[ProgressReporter] = None
        self._claims: Optional[CallClaims] = None

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
            delay = self._resume_at - time.monotonic()
            if delay <= 0:
                return
            await asyncio.sleep(delay)

    async def _attempt(
        self, spec: CallSpec, *, peek: bool = False
    ) -> Optional[tuple[JudgeResult, bool]]:
        """Claim and make one call (``peek``: see :meth:`CallClaims.acquire`).

        Returns:
            ``(result, called)``: ``called`` is ``False`` when the cache already had the
            reply; ``None`` when another live owner has the call in flight (wait).
        """
        claims = self._claims
        if claims is None:
            return await self._one(spec), True
        claim = claims.acquire(spec.digest, peek=peek)
        if claim.reply is not None:
            return result_from_reply(claim.reply, self.cfg.protocol, spec.run, cached=True), False
        if not claim.acquired:
            return None
        stored = False
        try:
            result = await self._one(spec)
            stored = result.outcome != "api_error"
            return result, True
        finally:
            if not stored:
                claims.release(spec.digest)

    async def _one(self, spec: CallSpec) -> JudgeResult:
        retry = 0
        while True:
            await self._wait_for_pause()
            await self.limiter.acquire()
            try:
                self.calls_made += 1
                reply = await self.client.complete(spec.request)
            except JudgeCallError as err:
                if not err.retryable:
                    if self.fatal is None:
                        self.fatal = err
                    return JudgeResult(
                        score=None, outcome="api_error", run=spec.run, error=err.describe()
                    )
                if retry >= self.policy.max_retries or self.fatal is not None:
                    logger.warning(
                        "judge: question %s run %d failed after %d attempt(s): %s",
                        spec.question_id,
                        spec.run,
                        retry + 1,
                        err.describe(),
                    )
                    return JudgeResult(
                        score=None, outcome="api_error", run=spec.run, error=err.describe()
                    )
                delay = self.policy.delay(retry, err.retry_after_s)
                if err.retry_after_s is not None:
                    self._resume_at = max(self._resume_at, time.monotonic() + delay)
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
                await asyncio.sleep(delay)
                continue
            if self._claims is not None:
                self._claims.complete(
                    spec.key, reply, question_id=spec.question_id, digest=spec.digest
                )
            elif self.cache is not None:
                self.cache.put(spec.key, reply, question_id=spec.question_id)
            return result_from_reply(reply, self.cfg.protocol, spec.run, cached=False)

    async def run(self, specs: list[CallSpec]) -> dict[tuple[str, int], JudgeResult]:
        """Judge every spec, from the cache where possible.

        Args:
            specs: the calls.

        Returns:
            ``(question_id, run) -> result`` for every spec.

        Raises:
            JudgeFatalAPIError: at the first non-retryable API error, after the calls in
                flight have finished (and been cached).
        """
        results, pending = split_cached(specs, self.cache, self.cfg.protocol)
        progress = ProgressReporter(
            len(specs),
            len(specs) - len(pending),
            enabled=self.cfg.progress,
            interval_s=self.cfg.progress_interval_s,
        )
        self.progress = progress

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
            due = time.monotonic() + claim_poll_delay(looks)
            heapq.heappush(waiting, (due, next(sequence), looks + 1, spec))

        async def next_spec() -> Optional[tuple[CallSpec, int]]:
            """The next call to try: new ones first, then those waited for."""
            if queue:
                return queue.popleft(), 0
            if waiting:
                due, _, looks, spec = heapq.heappop(waiting)
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                return spec, looks
            return None

        async def step() -> Optional[bool]:
            """Try one call; ``None`` when nothing is left, else whether a call was made."""
            item = await next_spec()
            if item is None:
                return None
            spec, looks = item
            outcome = await self._attempt(spec, peek=looks > 0)
            if outcome is None:
                set_aside(spec, looks)
                return False
            finish(spec, *outcome)
            return outcome[1]

        async with self._claiming():
            # Canary: the first call made goes alone, so a fatal error costs exactly one.
            while self.fatal is None:
                made = await step()
                if made is None or made:
                    break

            async def worker() -> None:
                while self.fatal is None:
                    if await step() is None:
                        return

            if self.fatal is None and (queue or waiting):
                n_workers = min(self.cfg.max_concurrency, len(queue) + len(waiting))
                await asyncio.gather(*(worker() for _ in range(n_workers)))
        progress.finish()
        if self.waited:
            logger.info(
                "judge: %d call(s) were in flight in another process; their replies were "
                "waited for, not paid twice",
                self.waited,
            )
        if self.fatal is not None:
            raise fatal_api_error(self.fatal, self.cfg.model)
        return results

    async def call(self, spec: CallSpec) -> JudgeResult:
        """Make one call, with retries (or, if another process made or is making it, use
        its reply from the cache).

        Args:
            spec: the call.

        Returns:
            A valid, parse-failure or (retries exhausted) API-error result.

        Raises:
            JudgeFatalAPIError: on a non-retryable API error.
        """
        looks = 0
        async with self._claiming():
            while True:
                outcome = await self._attempt(spec, peek=looks > 0)
                if outcome is not None:
                    result = outcome[0]
                    break
                await asyncio.sleep(claim_poll_delay(looks))
                looks += 1
        if self.fatal is not None:
            raise fatal_api_error(self.fatal, self.cfg.model)
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
) -> tuple[dict[tuple[str, int], JudgeResult], int]:
    """Run specs through a :class:`JudgePool`, creating (and closing) a client if needed.

    Returns:
        ``(results, calls_made)``; ``calls_made`` counts API requests sent, retries included.

    Raises:
        JudgeFatalAPIError: at the first non-retryable API error.
    """
    async with judge_client(cfg, client) as active:
        pool = JudgePool(active, cfg, cache)
        results = await pool.run(specs)
    return results, pool.calls_made
