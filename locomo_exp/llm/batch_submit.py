"""Submitting Message Batches: ledger first, then the create call.

Interrupted attempts are resolved by adopting the batch they created (see
:mod:`locomo_exp.llm.batch`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from locomo_exp.config import JudgeConfig
from locomo_exp.llm.batch_plan import (
    ADOPTION_WINDOW_S,
    AMBIGUOUS_KINDS,
    BatchRunInfo,
    split_batches,
)
from locomo_exp.llm.cache import (
    FAILED,
    HOSTNAME,
    BatchLedger,
    JudgeCache,
    LedgerRequest,
    Submission,
    custom_id_for,
    pid_alive,
)
from locomo_exp.llm.calls import CallSpec
from locomo_exp.llm.errors import JudgeCallError, JudgeError
from locomo_exp.llm.messages import BatchStatus, JudgeBatchClient
from locomo_exp.llm.providers import get_provider
from locomo_exp.llm.retry import RetryPolicy, fatal_api_error
from locomo_exp.llm.stop import CallsStop

logger = logging.getLogger(__name__)

T = TypeVar("T")


class BatchSubmitter:
    """Creates Message Batches, recorded in the ledger first (steps 2 and 4 of :mod:`.batch`).

    Args:
        client: a client with the batch methods (:class:`JudgeBatchClient`).
        cfg: the judge config (``cfg.batch`` for batch options).
        cache: the cache file; required, it also holds the ledger.
        sleep: coroutine used to wait between polls (tests).
        calls_stop: set by another thread to stop paying: no batch is created after it
            (:class:`~locomo_exp.llm.stop.CallsStop`).
    """

    def __init__(
        self,
        client: JudgeBatchClient,
        cfg: JudgeConfig,
        cache: JudgeCache,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        calls_stop: CallsStop | None = None,
    ) -> None:
        self.client = client
        self.cfg = cfg
        self.cache = cache
        self.ledger = BatchLedger(cache)
        self.policy = RetryPolicy.from_config(cfg)
        self.info = BatchRunInfo()
        self._sleep = sleep
        self.calls_stop = calls_stop
        # the spend cap: before each batch (its requests, and those of it and the later
        # batches), and the canary's result (paid at once)
        self.before_batch: Callable[[int, int], object] | None = None
        self.on_paid: Callable[[Any], object] | None = None  # a JudgeResult

    def paid(self, result: Any) -> None:
        """Tell the spend cap of a realtime call paid now (the canary's ``JudgeResult``)."""
        if self.on_paid is not None:
            self.on_paid(result)

    @property
    def told_to_stop(self) -> bool:
        """Whether another thread stopped the paid calls (:attr:`calls_stop` set)."""
        return self.calls_stop is not None and self.calls_stop.is_set

    # -- API calls with retries ------------------------------------------------------
    async def with_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run one Batches API call, retrying retryable errors with the judge's policy.

        Args:
            what: what the call does, for log lines.
            call: makes the call.

        Returns:
            The call's result.

        Raises:
            JudgeCallError: a non-retryable error, or the last error once retries are
                exhausted.
        """
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
    def is_stale(self, sub: Submission) -> bool:
        """Whether a :data:`SUBMITTING` row is left over (its process died or gave up)."""
        age = time.time() - sub.submitted_at
        if age > self.cfg.batch.create_timeout_s + 60.0:
            return True
        if sub.writer_host == HOSTNAME and sub.writer_pid is not None:
            return sub.writer_pid == os.getpid() or not pid_alive(sub.writer_pid)
        return False

    async def find_created(self, sub: Submission) -> BatchStatus | None:
        """The batch a create attempt made, if the API has one (same size, right time)."""
        known = self.ledger.known_batch_ids()
        listed = await self.with_retries(
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

    async def resolve_stale(self, sub: Submission) -> Submission | None:
        """Adopt the batch of a dead create attempt, or mark the attempt failed.

        Returns:
            The updated submission, or ``None`` when the listing failed (try again later).
        """
        try:
            found = await self.find_created(sub)
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
                if err.kind in AMBIGUOUS_KINDS:
                    try:
                        found = await self.find_created(sub)
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

    async def submit(
        self, digests: list[str], pending: dict[str, list[CallSpec]]
    ) -> tuple[list[Submission], dict[str, str]]:
        """Submit the pending calls as batches (split by size), recording each in the ledger.

        Args:
            digests: cache-key digests of the calls to submit.
            pending: digest -> the call specs that share it.

        Returns:
            The submissions made, and digest -> batch id. When :attr:`calls_stop` is set
            between two creates, the submissions not created yet are marked failed (the
            next run submits their calls) and the ones made so far are returned.
        """
        entry = self.client.batch_entry
        entries = [entry(custom_id_for(d), pending[d][0].request) for d in digests]
        bodies = [json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in entries]
        limits = get_provider(self.cfg.provider)
        ranges = split_batches(
            [len(b.encode("utf-8")) for b in bodies],
            max_requests=min(self.cfg.batch.max_requests, limits.max_batch_requests),
            max_bytes=min(self.cfg.batch.max_bytes, limits.max_batch_bytes),
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
            if self.before_batch is not None and not self.told_to_stop:  # may set the stop
                self.before_batch(
                    sub.request_count, sum(s.request_count for s in submissions[index:])
                )
            if self.told_to_stop:  # nothing more paid; the next run submits these calls
                for later in submissions[index:]:
                    self.ledger.set_status(later.submission_id, FAILED)
                break
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
                raise fatal_api_error(err, self.cfg) from None
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
