"""``judge.mode=batch``: judge calls through the Message Batches API (half price, resumable).

1. Calls already in the cache are answered from it, exactly as in realtime mode.
2. Calls in a batch still in flight (the ledger, :class:`~locomo_exp.judge.cache.BatchLedger`,
   in the same SQLite file) are not submitted again: their batch is polled.
3. Otherwise, if ``judge.batch.canary``, one call is sent realtime first, so a wrong model
   id, key or temperature stops the job after one call, before anything is submitted;
   its reply is cached and used.
4. The remaining calls (one per distinct cache key) are split into batches of at most
   ``judge.batch.max_requests`` requests and ``judge.batch.max_bytes`` bytes; each
   request's ``custom_id`` is its cache key digest. Each batch is recorded in the ledger
   *before* its create call, and its batch id the moment the API returns it. A create call
   that fails ambiguously (timeout, dropped connection, 5xx) or a process that died during
   one is resolved by listing recent batches and adopting the one of the same size created
   by that attempt, so an attempt is never paid twice.
5. Batches are polled with backoff (``poll_interval_s`` x ``poll_backoff`` up to
   ``max_poll_interval_s``), with a progress line. Each ended batch's results are
   streamed and stored at once: ``succeeded`` replies go into the cache (parsed like
   realtime replies); ``errored``, ``expired`` and ``canceled`` requests are API errors of
   their run now and are submitted again by the next run.
6. With ``judge.batch.wait=false``, batches not ended at the first check raise
   :class:`~locomo_exp.judge.errors.JudgeBatchPending`; the same command later collects.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Optional, TypeVar

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.judge.cache import (
    COLLECTED,
    FAILED,
    HOSTNAME,
    MISSING,
    SUBMITTING,
    BatchLedger,
    JudgeCache,
    LedgerRequest,
    Submission,
    custom_id_for,
    pid_alive,
)
from locomo_exp.judge.client import (
    BATCH_COUNT_KINDS,
    BatchItemResult,
    BatchStatus,
    JudgeBatchClient,
    JudgeClient,
    build_batch_request,
)
from locomo_exp.judge.errors import JudgeBatchPending, JudgeCallError, JudgeError
from locomo_exp.judge.runner import (
    CallSpec,
    JudgePool,
    RetryPolicy,
    _format_seconds,
    fatal_api_error,
    judge_client,
    result_from_reply,
    split_cached,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

BATCH_BODY_OVERHEAD_BYTES = 1024
"""Bytes reserved in each batch body besides the requests (``{"requests": [...]}``)."""

STORE_CHUNK = 1000
"""Result lines stored per SQLite transaction."""

ADOPTION_WINDOW_S = 300.0
"""Clock skew allowed between this machine and the API when adopting a batch, seconds."""

_AMBIGUOUS_KINDS = frozenset({"timeout", "connection", "server", "other", "invalid_response"})
"""Failure kinds after which a create call may have reached the API anyway."""

RESULT_KINDS = ("succeeded", "errored", "expired", "canceled", "missing")
"""Result line types counted per request (``missing``: no result line for it)."""


@dataclass
class BatchRunInfo:
    """What the batch side of a judge job did (``summary["batch"]``).

    Attributes:
        batch_ids: every batch whose results this job used or waits for, in order.
        submitted_batch_ids: the batches this process created.
        resumed_batch_ids: batches created earlier (another run) and polled by this one.
        requests_submitted: requests in the batches this process created.
        realtime_calls: realtime API requests (the canary, retries included).
        results: result lines of this job's calls by type (``succeeded``, ``errored``,
            ``expired``, ``canceled``, ``missing`` = absent from the results).
        errored_types: API error types of ``errored`` lines, with counts.
    """

    batch_ids: list[str] = field(default_factory=list)
    submitted_batch_ids: list[str] = field(default_factory=list)
    resumed_batch_ids: list[str] = field(default_factory=list)
    requests_submitted: int = 0
    realtime_calls: int = 0
    results: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RESULT_KINDS, 0))
    errored_types: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready copy."""
        return {
            "batch_ids": list(self.batch_ids),
            "submitted_batch_ids": list(self.submitted_batch_ids),
            "resumed_batch_ids": list(self.resumed_batch_ids),
            "requests_submitted": self.requests_submitted,
            "realtime_calls": self.realtime_calls,
            "results": dict(self.results),
            "errored_types": dict(self.errored_types),
        }


def split_batches(sizes: list[int], *, max_requests: int, max_bytes: int) -> list[tuple[int, int]]:
    """Split requests, in order, into batches within the API's limits.

    Args:
        sizes: JSON size of each request, bytes.
        max_requests: requests per batch at most (API: 100,000).
        max_bytes: body bytes per batch at most (API: 256 MB), including
            :data:`BATCH_BODY_OVERHEAD_BYTES` and one separator per request.

    Returns:
        ``(start, stop)`` index ranges, each non-empty.

    Raises:
        JudgeError: if one request alone exceeds ``max_bytes``.
    """
    ranges: list[tuple[int, int]] = []
    start = 0
    used = BATCH_BODY_OVERHEAD_BYTES
    for index, size in enumerate(sizes):
        need = size + 1
        if BATCH_BODY_OVERHEAD_BYTES + need > max_bytes:
            raise JudgeError(
                f"one judge request is {size} bytes, more than judge.batch.max_bytes={max_bytes}"
            )
        if index > start and (index - start >= max_requests or used + need > max_bytes):
            ranges.append((start, index))
            start = index
            used = BATCH_BODY_OVERHEAD_BYTES
        used += need
    if start < len(sizes):
        ranges.append((start, len(sizes)))
    return ranges


def _sum_counts(statuses: list[BatchStatus]) -> dict[str, int]:
    return {kind: sum(s.counts.get(kind, 0) for s in statuses) for kind in BATCH_COUNT_KINDS}


class BatchJudge:
    """Runs call specs through the Message Batches API (see the module docstring).

    Args:
        client: a client with the batch methods (:class:`JudgeBatchClient`).
        cfg: the judge config (``cfg.batch`` for batch options).
        cache: the cache file; required, it also holds the ledger.
        sleep: coroutine used to wait between polls (tests).
    """

    def __init__(
        self,
        client: JudgeBatchClient,
        cfg: JudgeConfig,
        cache: JudgeCache,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.cfg = cfg
        self.cache = cache
        self.ledger = BatchLedger(cache)
        self.policy = RetryPolicy.from_config(cfg)
        self.info = BatchRunInfo()
        self._sleep = sleep
        self._outcomes: dict[str, BatchItemResult] = {}
        self._unavailable: dict[str, str] = {}

    # -- API calls with retries ------------------------------------------------------
    async def _with_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        retry = 0
        while True:
            try:
                return await call()
            except JudgeCallError as err:
                if not err.retryable or retry >= self.policy.max_retries:
                    raise
                delay = self.policy.delay(retry, err.retry_after_s)
                logger.debug(
                    "judge batch: retry %d of %s in %.2fs after %s",
                    retry + 1,
                    what,
                    delay,
                    err.describe(),
                )
                retry += 1
                await self._sleep(delay)

    # -- submission --------------------------------------------------------------------
    def _is_stale(self, sub: Submission) -> bool:
        """Whether a :data:`SUBMITTING` row is left over (its process died or gave up)."""
        age = time.time() - sub.submitted_at
        if age > self.cfg.batch.create_timeout_s + 60.0:
            return True
        if sub.writer_host == HOSTNAME and sub.writer_pid is not None:
            return sub.writer_pid == os.getpid() or not pid_alive(sub.writer_pid)
        return False

    async def _find_created(self, sub: Submission) -> Optional[BatchStatus]:
        """The batch a create attempt made, if the API has one (same size, right time)."""
        known = self.ledger.known_batch_ids()
        listed = await self._with_retries(
            "listing batches",
            lambda: self.client.list_batches(sub.submitted_at - ADOPTION_WINDOW_S),
        )
        latest = sub.submitted_at + self.cfg.batch.create_timeout_s + ADOPTION_WINDOW_S
        candidates = [
            b
            for b in listed
            if b.batch_id not in known
            and b.total == sub.request_count
            and (b.created_at is None or b.created_at <= latest)
        ]
        candidates.sort(key=lambda b: b.created_at or 0.0)
        return candidates[0] if candidates else None

    async def _resolve_stale(self, sub: Submission) -> Optional[Submission]:
        """Adopt the batch of a dead create attempt, or mark the attempt failed.

        Returns:
            The updated submission, or ``None`` when the listing failed (try again later).
        """
        try:
            found = await self._find_created(sub)
        except JudgeCallError as err:
            logger.warning(
                "judge batch: could not list batches to resolve an interrupted submission "
                "(%s); will try again",
                err.describe(),
            )
            return None
        if found is not None:
            self.ledger.set_batch_id(sub.submission_id, found.batch_id, found.created_at)
            logger.warning(
                "judge batch: adopted batch %s (%d requests), created by an interrupted "
                "submission; it is polled, not submitted again",
                found.batch_id,
                sub.request_count,
            )
        else:
            self.ledger.set_status(sub.submission_id, FAILED)
            logger.info(
                "judge batch: an interrupted submission of %d requests never reached the "
                "API; its requests are free to be submitted again",
                sub.request_count,
            )
        return self.ledger.get(sub.submission_id)

    async def _create(self, sub: Submission, entries: list[dict[str, Any]]) -> BatchStatus:
        retry = 0
        while True:
            try:
                return await self.client.create_batch(entries)
            except JudgeCallError as err:
                if not err.retryable:
                    raise
                if err.kind in _AMBIGUOUS_KINDS:
                    try:
                        found = await self._find_created(sub)
                    except JudgeCallError:
                        found = None
                    if found is not None:
                        logger.warning(
                            "judge batch: the create call failed (%s) but the API has the "
                            "batch %s; using it",
                            err.describe(),
                            found.batch_id,
                        )
                        return found
                if retry >= self.policy.max_retries:
                    raise
                delay = self.policy.delay(retry, err.retry_after_s)
                logger.info(
                    "judge batch: creating a batch failed (%s); retry %d in %.1fs",
                    err.describe(),
                    retry + 1,
                    delay,
                )
                retry += 1
                await self._sleep(delay)

    async def _submit(
        self, digests: list[str], pending: dict[str, list[CallSpec]]
    ) -> tuple[list[Submission], dict[str, str]]:
        entries = [build_batch_request(custom_id_for(d), pending[d][0].request) for d in digests]
        bodies = [json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in entries]
        ranges = split_batches(
            [len(b.encode("utf-8")) for b in bodies],
            max_requests=self.cfg.batch.max_requests,
            max_bytes=self.cfg.batch.max_bytes,
        )
        chunks = [
            [
                LedgerRequest(
                    custom_id=custom_id_for(d),
                    digest=d,
                    key_fields=pending[d][0].key.fields_json(),
                    question_id=pending[d][0].question_id,
                    run_index=pending[d][0].run,
                )
                for d in digests[start:stop]
            ]
            for start, stop in ranges
        ]
        entry_by_custom_id = {e["custom_id"]: e for e in entries}
        submissions, taken = self.ledger.claim(chunks, api_version=self.client.api_version)
        also_in_flight = self.ledger.in_flight(taken) if taken else {}
        created: list[Submission] = []
        for index, sub in enumerate(submissions):
            requests = self.ledger.requests(sub.submission_id)
            batch_entries = [entry_by_custom_id[cid] for cid in requests]
            try:
                status = await self._create(sub, batch_entries)
            except JudgeCallError as err:
                if err.retryable:
                    raise JudgeError(
                        f"judge batch: creating a batch of {sub.request_count} requests failed "
                        f"after retries ({err.describe()}). Run the same command again: it "
                        "first looks for a batch this attempt may have created, then retries."
                    ) from None
                for later in submissions[index:]:
                    self.ledger.set_status(later.submission_id, FAILED)
                raise fatal_api_error(err, self.cfg.model) from None
            self.ledger.set_batch_id(sub.submission_id, status.batch_id, status.created_at)
            self.info.submitted_batch_ids.append(status.batch_id)
            self.info.requests_submitted += sub.request_count
            logger.info(
                "judge batch: submitted batch %s (%d requests); recorded in %s",
                status.batch_id,
                sub.request_count,
                self.cache.path,
            )
            created.append(self.ledger.get(sub.submission_id))
        return created, also_in_flight

    # -- collection --------------------------------------------------------------------
    async def _collect(self, sub: Submission, status: BatchStatus) -> None:
        """Stream an ended batch's results into the cache and the ledger."""
        assert sub.batch_id is not None
        batch_id = sub.batch_id
        requests = self.ledger.requests(sub.submission_id)

        async def download() -> dict[str, BatchItemResult]:
            seen: dict[str, BatchItemResult] = {}
            buffer: list[BatchItemResult] = []
            async for item in self.client.batch_results(batch_id):
                seen[item.custom_id] = item
                buffer.append(item)
                if len(buffer) >= STORE_CHUNK:
                    self.ledger.store_results(sub, requests, buffer)
                    buffer = []
            if buffer:
                self.ledger.store_results(sub, requests, buffer)
            return seen

        seen = await self._with_retries(f"downloading results of {batch_id}", download)
        counts = dict.fromkeys(RESULT_KINDS, 0)
        for custom_id, request in requests.items():
            item = seen.get(custom_id)
            if item is None:
                item = BatchItemResult(custom_id=custom_id, result_type="missing")
            counts[item.result_type if item.result_type in counts else "missing"] += 1
            self._outcomes[request.digest] = item
        unknown = len(set(seen) - set(requests))
        self.ledger.set_status(
            sub.submission_id, COLLECTED, counts=dict(status.counts), ended_at=status.ended_at
        )
        took = (
            _format_seconds(status.ended_at - status.created_at)
            if status.ended_at and status.created_at
            else "?"
        )
        logger.info(
            "judge batch: batch %s ended after %s: %d succeeded, %d errored, %d expired, "
            "%d canceled%s",
            batch_id,
            took,
            counts["succeeded"],
            counts["errored"],
            counts["expired"],
            counts["canceled"],
            f", {counts['missing']} without a result line" if counts["missing"] else "",
        )
        if unknown:
            logger.warning("judge batch: %d result lines of %s match no request", unknown, batch_id)
        unfinished = counts["expired"] + counts["canceled"] + counts["missing"]
        if unfinished:
            logger.warning(
                "judge batch: batch %s left %d requests unfinished (%d expired, %d canceled, "
                "%d missing); they count as API errors now and are submitted again by the "
                "next run",
                batch_id,
                unfinished,
                counts["expired"],
                counts["canceled"],
                counts["missing"],
            )

    # -- polling ---------------------------------------------------------------------
    def _progress_line(self, statuses: list[BatchStatus], total: int, started: float) -> str:
        counts = _sum_counts(statuses)
        ended = sum(s.ended for s in statuses)
        return (
            f"judge batch: {ended}/{total} batches ended | succeeded {counts['succeeded']} "
            f"errored {counts['errored']} expired {counts['expired']} canceled "
            f"{counts['canceled']} processing {counts['processing']} | elapsed "
            f"{_format_seconds(time.time() - started)}"
        )

    async def _poll(self, submission_ids: list[str], *, requests_total: int) -> None:
        active: dict[str, Submission] = {sid: self.ledger.get(sid) for sid in submission_ids}
        started = min((s.submitted_at for s in active.values()), default=time.time())
        interval = self.cfg.batch.poll_interval_s
        n_batches = len(active)
        while True:
            statuses: list[BatchStatus] = []
            for sid in list(active):
                sub = self.ledger.get(sid)
                if sub.status == SUBMITTING and self._is_stale(sub):
                    resolved = await self._resolve_stale(sub)
                    sub = resolved if resolved is not None else sub
                if sub.status in (FAILED, MISSING):
                    self._mark_unavailable(sid, f"batch submission {sub.status}")
                    del active[sid]
                    continue
                active[sid] = sub
                if sub.batch_id is None:  # another process is still creating it
                    continue
                if sub.batch_id not in self.info.batch_ids:
                    self.info.batch_ids.append(sub.batch_id)
                batch_id = sub.batch_id
                try:
                    status = await self._with_retries(
                        f"polling {batch_id}",
                        functools.partial(self.client.retrieve_batch, batch_id),
                    )
                except JudgeCallError as err:
                    if err.kind == "not_found":
                        self.ledger.set_status(sid, MISSING)
                        logger.error(
                            "judge batch: the API does not know batch %s (%s); its %d "
                            "requests count as API errors and are submitted again by the "
                            "next run",
                            batch_id,
                            err.describe(),
                            sub.request_count,
                        )
                        self._mark_unavailable(sid, f"batch {batch_id} not found")
                        del active[sid]
                        continue
                    if not err.retryable:
                        raise fatal_api_error(err, self.cfg.model) from None
                    logger.warning(
                        "judge batch: polling %s failed (%s); trying again later",
                        batch_id,
                        err.describe(),
                    )
                    continue
                statuses.append(status)
                if status.ended:
                    await self._collect(sub, status)
                    del active[sid]
            if not active:
                return
            line = self._progress_line(statuses, n_batches, started)
            if not self.cfg.batch.wait:
                self._raise_pending(active, statuses, requests_total, started)
            if self.cfg.progress:
                logger.info("%s | next poll in %.3gs", line, interval)
            await self._sleep(interval)
            interval = min(
                interval * self.cfg.batch.poll_backoff, self.cfg.batch.max_poll_interval_s
            )

    def _mark_unavailable(self, submission_id: str, reason: str) -> None:
        for request in self.ledger.requests(submission_id).values():
            if request.digest not in self._outcomes:
                self._unavailable[request.digest] = reason

    def _raise_pending(
        self,
        active: dict[str, Submission],
        statuses: list[BatchStatus],
        requests_total: int,
        started: float,
    ) -> None:
        ids = [s.batch_id for s in active.values() if s.batch_id]
        pending_requests = sum(s.request_count for s in active.values())
        counts = _sum_counts([s for s in statuses if s.batch_id in ids])
        submitted_now = [i for i in self.info.submitted_batch_ids if i in ids]
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        message = (
            f"judge.mode=batch: {len(ids)} batch(es) still processing ({shown}): "
            f"{pending_requests} of {requests_total} judge calls pending, submitted "
            f"{_format_seconds(time.time() - started)} ago"
            + (f"; {len(submitted_now)} submitted now" if submitted_now else "")
            + f". The batch ids are recorded in {self.cache.path}. Run the same command "
            "again to collect, score and report (nothing is submitted twice), or with "
            "judge.batch.wait=true to wait for them. Batches finish within 24 hours."
        )
        raise JudgeBatchPending(
            message,
            batch_ids=ids,
            submitted_batch_ids=submitted_now,
            requests_pending=pending_requests,
            requests_total=requests_total,
            counts=counts,
        )

    # -- the job ---------------------------------------------------------------------
    async def run(self, specs: list[CallSpec]) -> dict[tuple[str, int], JudgeResult]:
        """Judge every spec: from the cache, from batches in flight, or in new batches.

        Args:
            specs: the calls.

        Returns:
            ``(question_id, run) -> result`` for every spec.

        Raises:
            JudgeBatchPending: ``judge.batch.wait=false`` and a batch is still processing.
            JudgeFatalAPIError: a non-retryable API error of the canary or a create call.
            JudgeError: a batch could not be created after retries.
        """
        results, uncached = split_cached(specs, self.cache, self.cfg.protocol)
        pending: dict[str, list[CallSpec]] = {}
        for spec in uncached:
            pending.setdefault(spec.digest, []).append(spec)
        if not pending:
            return results

        for sub in self.ledger.submissions(SUBMITTING):
            if self._is_stale(sub):
                await self._resolve_stale(sub)
        in_flight = self.ledger.in_flight(pending)
        resumed = sorted(set(in_flight.values()), key=lambda sid: self.ledger.get(sid).submitted_at)
        for sid in resumed:
            batch_id = self.ledger.get(sid).batch_id
            if batch_id:
                self.info.resumed_batch_ids.append(batch_id)
        if resumed:
            logger.info(
                "judge batch: %d of the calls are in %d batch(es) submitted earlier (%s); "
                "polling them instead of submitting again",
                len(in_flight),
                len(resumed),
                ", ".join(self.info.resumed_batch_ids) or "being created",
            )
        to_submit = [d for d in pending if d not in in_flight]

        if to_submit and self.cfg.batch.canary:
            digest = to_submit[0]
            pool = JudgePool(self.client, self.cfg, self.cache)
            try:
                canary = await pool.call(pending[digest][0])
            finally:
                self.info.realtime_calls += pool.calls_made
            if canary.outcome != "api_error":
                to_submit = to_submit[1:]
                for spec in pending.pop(digest):
                    results[(spec.question_id, spec.run)] = replace(canary, run=spec.run)

        submission_ids = list(resumed)
        if to_submit:
            created, also = await self._submit(to_submit, pending)
            submission_ids += [s.submission_id for s in created]
            submission_ids += [
                sid for sid in dict.fromkeys(also.values()) if sid not in submission_ids
            ]
        for sid in submission_ids:
            batch_id = self.ledger.get(sid).batch_id
            if batch_id and batch_id not in self.info.batch_ids:
                self.info.batch_ids.append(batch_id)

        n_pending = sum(len(v) for v in pending.values())
        try:
            await self._poll(submission_ids, requests_total=len(specs))
        except (KeyboardInterrupt, asyncio.CancelledError):
            logger.warning(
                "judge batch: interrupted; batches %s keep processing on the API side. Run "
                "the same command again to collect them (nothing is submitted twice).",
                ", ".join(self.info.batch_ids),
            )
            raise

        succeeded = [d for d, item in self._outcomes.items() if item.result_type == "succeeded"]
        replies = self.cache.get_many(d for d in succeeded if d in pending)
        for digest, group in pending.items():
            item = self._outcomes.get(digest)
            if item is not None:
                kind = item.result_type if item.result_type in self.info.results else "missing"
                self.info.results[kind] += len(group)
            for spec in group:
                results[(spec.question_id, spec.run)] = self._result_for(
                    spec, item, replies.get(digest)
                )
        logger.info(
            "judge batch: %d calls from batches (%s)",
            n_pending,
            ", ".join(f"{k} {v}" for k, v in self.info.results.items() if v),
        )
        return results

    def _result_for(
        self, spec: CallSpec, item: Optional[BatchItemResult], reply: Any
    ) -> JudgeResult:
        if item is not None and item.result_type == "succeeded" and reply is not None:
            return result_from_reply(reply, self.cfg.protocol, spec.run, cached=False)
        if item is None:
            reason = self._unavailable.get(spec.digest, "no batch result")
            error = f"batch_unavailable: {reason}; submitted again by the next run"
        elif item.result_type == "errored":
            error = f"batch_errored {item.error_type}: {item.error_message}"
            self.info.errored_types[item.error_type] = (
                self.info.errored_types.get(item.error_type, 0) + 1
            )
        elif item.result_type in ("expired", "canceled"):
            error = (
                f"batch_{item.result_type}: the request was not processed; submitted again "
                "by the next run"
            )
        else:
            error = (
                "batch_missing: no result line for this request; submitted again by the next run"
            )
        return JudgeResult(score=None, outcome="api_error", run=spec.run, error=error)


async def judge_batch_async(
    specs: list[CallSpec],
    cfg: JudgeConfig,
    *,
    cache: Optional[JudgeCache],
    client: Optional[JudgeClient] = None,
) -> tuple[dict[tuple[str, int], JudgeResult], BatchRunInfo]:
    """Run specs through :class:`BatchJudge`, creating (and closing) a client if needed.

    Args:
        specs: the calls.
        cfg: the judge config.
        cache: the open cache (required: it holds the batch ledger).
        client: a client with the batch methods, or ``None`` for the SDK client.

    Returns:
        ``(results, info)``.

    Raises:
        JudgeError: no cache, or a client without the batch methods.
        JudgeBatchPending: see :meth:`BatchJudge.run`.
        JudgeFatalAPIError: see :meth:`BatchJudge.run`.
    """
    if cache is None:
        raise JudgeError(
            "judge.mode=batch needs judge.cache=true: batch ids and results are kept in the "
            "cache file"
        )
    if client is not None and not all(
        hasattr(client, name)
        for name in ("create_batch", "retrieve_batch", "batch_results", "list_batches")
    ):
        raise JudgeError(f"{type(client).__name__} cannot submit Message Batches")
    async with judge_client(cfg, client) as active:
        judge = BatchJudge(active, cfg, cache)  # type: ignore[arg-type]
        results = await judge.run(specs)
    return results, judge.info


__all__ = [
    "BatchJudge",
    "BatchRunInfo",
    "judge_batch_async",
    "split_batches",
]
