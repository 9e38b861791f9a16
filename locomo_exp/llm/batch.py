"""``judge.mode=batch``: judge calls through the Message Batches API (half price, resumable).

1. Calls already in the cache are answered from it, exactly as in realtime mode.
2. Calls in a batch still in flight (the ledger, :class:`~locomo_exp.llm.cache.BatchLedger`,
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
   :class:`~locomo_exp.llm.errors.JudgeBatchPending`; the same command later collects.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from locomo_exp.config import JudgeConfig
from locomo_exp.llm.batch_plan import (
    RESULT_KINDS,
    STORE_CHUNK,
    VALIDATION_FAILED,
    BatchRunInfo,
    batch_error_lines,
    split_batches,
    sum_counts,
)
from locomo_exp.llm.batch_submit import BatchSubmitter
from locomo_exp.llm.cache import (
    COLLECTED,
    FAILED,
    MISSING,
    SUBMITTING,
    JudgeCache,
    Submission,
)
from locomo_exp.llm.calls import CallSpec, R, ReplyReader, split_cached
from locomo_exp.llm.errors import JudgeBatchPending, JudgeCallError, JudgeError
from locomo_exp.llm.messages import (
    BatchItemResult,
    BatchStatus,
    JudgeBatchClient,
    JudgeClient,
)
from locomo_exp.llm.pool import JudgePool
from locomo_exp.llm.progress import format_seconds, make_bar
from locomo_exp.llm.retry import fatal_api_error
from locomo_exp.llm.session import judge_client
from locomo_exp.llm.stop import CallsStop, CallsStopped

logger = logging.getLogger(__name__)

T = TypeVar("T")


class BatchJudge(BatchSubmitter, Generic[R]):
    """Runs call specs through the Message Batches API (see the module docstring).

    Args:
        client: a client with the batch methods (:class:`JudgeBatchClient`).
        cfg: the judge config (``cfg.batch`` for batch options).
        cache: the cache file; required, it also holds the ledger.
        reader: turns replies and failures into results (as :class:`JudgePool`'s).
        sleep: coroutine used to wait between polls and retries (tests).
        calls_stop: set by another thread to stop paying (:meth:`run`).
    """

    def __init__(
        self,
        client: JudgeBatchClient,
        cfg: JudgeConfig,
        cache: JudgeCache,
        *,
        reader: ReplyReader[R],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        calls_stop: CallsStop | None = None,
    ) -> None:
        super().__init__(client, cfg, cache, sleep=sleep, calls_stop=calls_stop)
        self.reader = reader
        self._outcomes: dict[str, BatchItemResult] = {}
        self._unavailable: dict[str, str] = {}
        self._calls: tuple[dict[tuple[str, int], R], dict[str, list[CallSpec]], int]
        self._calls = ({}, {}, 0)  # results so far, pending calls by digest, calls in all

    def _raise_if_stopped(self, waiting: list[str]) -> None:
        """Raise :class:`CallsStopped` when told to stop; ``waiting``: submissions not collected."""
        if not self.told_to_stop or self.calls_stop is None:
            return
        results, pending, total = self._calls
        in_flight = {r.digest for sid in waiting for r in self.ledger.requests(sid).values()}
        collected = {d for d, item in self._outcomes.items() if item.result_type == "succeeded"}
        in_batches = sum(len(g) for d, g in pending.items() if d in in_flight - set(self._outcomes))
        done = len(results) + sum(len(g) for d, g in pending.items() if d in collected)
        raise CallsStopped(
            self.calls_stop.reason,
            calls_made=self.info.realtime_calls + self.info.requests_submitted,
            calls_left=total - done - in_batches,
            calls_total=total,
            in_batches=in_batches,
        ) from self.calls_stop.error

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

        seen = await self.with_retries(f"downloading results of {batch_id}", download)
        for line in batch_error_lines(batch_id, status.errors, seen.values()):
            logger.error("%s", line)
        counts = dict.fromkeys(RESULT_KINDS, 0)
        for custom_id, request in requests.items():
            item = seen.get(custom_id)
            if item is None and status.errors:  # rejected at validation: an error, said above
                item = BatchItemResult(
                    custom_id, "errored", error_type=VALIDATION_FAILED,
                    error_message=f"the batch failed validation: {status.errors[0]}",
                )
            elif item is None:
                item = BatchItemResult(custom_id=custom_id, result_type="missing")
            counts[item.result_type if item.result_type in counts else "missing"] += 1
            self._outcomes[request.digest] = item
        unknown = len(set(seen) - set(requests))
        self.ledger.set_status(
            sub.submission_id, COLLECTED, counts=dict(status.counts), ended_at=status.ended_at
        )
        took = (
            format_seconds(status.ended_at - status.created_at)
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
        counts = sum_counts(statuses)
        ended = sum(s.ended for s in statuses)
        return (
            f"judge batch: {ended}/{total} batches ended | succeeded {counts['succeeded']} "
            f"errored {counts['errored']} expired {counts['expired']} canceled "
            f"{counts['canceled']} processing {counts['processing']} | elapsed "
            f"{format_seconds(time.time() - started)}"
        )

    async def _poll(self, submission_ids: list[str], *, requests_total: int) -> None:
        active: dict[str, Submission] = {sid: self.ledger.get(sid) for sid in submission_ids}
        started = min((s.submitted_at for s in active.values()), default=time.time())
        interval = self.cfg.batch.poll_interval_s
        n_batches = len(active)
        bar: Any = None  # a tqdm bar on a terminal (False: none), made at the first poll
        while True:
            statuses: list[BatchStatus] = []
            for sid in list(active):
                sub = self.ledger.get(sid)
                if sub.status == SUBMITTING and self.is_stale(sub):
                    resolved = await self.resolve_stale(sub)
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
                    status = await self.with_retries(
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
                        raise fatal_api_error(err, self.cfg) from None
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
                if bar:
                    bar.close()
                return
            self._raise_if_stopped(list(active))  # the rest keep processing: a re-run collects
            line = self._progress_line(statuses, n_batches, started)
            if not self.cfg.batch.wait:
                self._raise_pending(active, statuses, requests_total, started)
            if bar is None and self.cfg.progress:
                bar = (
                    make_bar(
                        requests_total, initial=0, desc="judge batch", unit="request", enabled=True
                    )
                    or False
                )
            if bar:
                counts = sum_counts(statuses)
                bar.update(max(0, requests_total - counts["processing"] - bar.n))
                bar.set_postfix_str(f"{line.split(' | ')[0]} | next poll in {interval:.3g}s")
            elif self.cfg.progress:
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
        counts = sum_counts([s for s in statuses if s.batch_id in ids])
        submitted_now = [i for i in self.info.submitted_batch_ids if i in ids]
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        message = (
            f"judge.mode=batch: {len(ids)} batch(es) still processing ({shown}): "
            f"{pending_requests} of {requests_total} judge calls pending, submitted "
            f"{format_seconds(time.time() - started)} ago"
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
    async def run(self, specs: list[CallSpec]) -> dict[tuple[str, int], R]:
        """Judge every spec: from the cache, from batches in flight, or in new batches.

        Args:
            specs: the calls.

        Returns:
            ``(question_id, run) -> result`` for every spec.

        Raises:
            JudgeBatchPending: ``judge.batch.wait=false`` and a batch is still processing.
            JudgeFatalAPIError: a non-retryable API error of the canary or a create call.
            JudgeError: a batch could not be created after retries, or the endpoint has
                no Batch API (the client's ``check_batch_support``; nothing submitted).
            CallsStopped: :attr:`calls_stop` was set: checked before the canary, before
                each batch is created and at each poll; batches already created keep
                processing (the same command collects them, nothing is submitted twice).
        """
        results, uncached = split_cached(specs, self.cache, self.reader)
        pending: dict[str, list[CallSpec]] = {}
        for spec in uncached:
            pending.setdefault(spec.digest, []).append(spec)
        if not pending:
            return results
        self._calls = (results, pending, len(specs))

        for sub in self.ledger.submissions(SUBMITTING):
            if self.is_stale(sub):
                await self.resolve_stale(sub)
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
        self._raise_if_stopped(resumed)
        # a provider whose servers may lack a Batch API checks it before anything is sent
        probe = getattr(self.client, "check_batch_support", None)
        if to_submit and probe is not None:
            await probe()

        if to_submit and self.cfg.batch.canary:
            digest = to_submit[0]
            pool = JudgePool(self.client, self.cfg, self.cache, reader=self.reader)  # one call
            try:
                canary = await pool.call(pending[digest][0])
            finally:
                self.info.realtime_calls += pool.calls_made
            self.paid(canary)  # paid now, at list price: the spend cap counts it
            if canary.outcome != "api_error":
                to_submit = to_submit[1:]
                for spec in pending.pop(digest):
                    results[(spec.question_id, spec.run)] = self.reader.with_run(canary, spec.run)

        submission_ids = list(resumed)
        self._raise_if_stopped(submission_ids)
        if to_submit:
            created, also = await self.submit(to_submit, pending)
            submission_ids += [s.submission_id for s in created]
            submission_ids += [
                sid for sid in dict.fromkeys(also.values()) if sid not in submission_ids
            ]
        for sid in submission_ids:
            batch_id = self.ledger.get(sid).batch_id
            if batch_id and batch_id not in self.info.batch_ids:
                self.info.batch_ids.append(batch_id)
        self._raise_if_stopped(submission_ids)

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

    def _result_for(self, spec: CallSpec, item: BatchItemResult | None, reply: Any) -> R:
        if item is not None and item.result_type == "succeeded" and reply is not None:
            return self.reader.read(reply, spec.run, cached=False)
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
        return self.reader.failed(spec.run, error)


async def judge_batch_async(
    specs: list[CallSpec],
    cfg: JudgeConfig,
    *,
    cache: JudgeCache | None,
    reader: ReplyReader[R],
    client: JudgeClient | None = None,
    calls_stop: CallsStop | None = None,
    spend: Any = None,
) -> tuple[dict[tuple[str, int], R], BatchRunInfo]:
    """Run specs through :class:`BatchJudge`, creating (and closing) a client if needed.

    Args:
        specs: the calls.
        cfg: the judge config.
        cache: the open cache (required: it holds the batch ledger).
        reader: turns replies and failures into results.
        client: a client with the batch methods, or ``None`` for the SDK client.
        calls_stop: set by another thread to stop paying (see :meth:`BatchJudge.run`).
        spend: the job's spend cap (``before_batch`` before each batch is created,
            ``on_paid`` for the canary), or ``None``.

    Returns:
        ``(results, info)``.

    Raises:
        JudgeError: no cache, or a client without the batch methods; see also
            :meth:`BatchJudge.run`.
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
        judge = BatchJudge(active, cfg, cache, reader=reader, calls_stop=calls_stop)  # type: ignore[arg-type]
        if spend is not None:
            judge.before_batch, judge.on_paid = spend.before_batch, spend.on_paid
        results = await judge.run(specs)
    return results, judge.info


__all__ = [
    "BatchJudge",
    "BatchRunInfo",
    "judge_batch_async",
    "split_batches",
]
