"""A realtime run on a cache whose batches are still processing: collect, never pay twice.

A ``judge.mode=batch judge.batch.wait=false`` run leaves calls in submitted batches (the
ledger, :class:`~locomo_exp.llm.cache.BatchLedger`). A later ``judge.mode=realtime`` run
on the same cache must not send those calls again: before its first call it names the
batches and how many of its calls each holds, then

- by default waits for them (polling like batch mode, ``judge.batch.*`` intervals; with
  ``judge.batch.wait=false`` it stops with
  :class:`~locomo_exp.llm.errors.JudgeBatchPending` instead), and their replies land in
  the cache, where the realtime pool reads them;
- with ``judge.batch.abandon=true`` (asked explicitly) it cancels them first; requests the
  API had already processed keep their paid replies (collected into the cache), the
  canceled ones are made realtime.

Requests a batch ended without a reply (errored, expired, canceled: not billed) are made
realtime.
"""

from __future__ import annotations

import logging

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeResult
from locomo_exp.judge.calls import verdict_reader
from locomo_exp.llm.batch import BatchJudge
from locomo_exp.llm.cache import SUBMITTING, BatchLedger, JudgeCache
from locomo_exp.llm.calls import CallSpec, split_cached
from locomo_exp.llm.errors import JudgeCallError, JudgeError
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.session import judge_client
from locomo_exp.llm.stop import CallsStop
from locomo_exp.results.words import counted

logger = logging.getLogger(__name__)


def calls_in_batches(specs: list[CallSpec], cache: JudgeCache) -> dict[str, str]:
    """Which calls of ``specs`` sit in a batch still in flight (a cheap ledger look-up).

    Args:
        specs: the job's calls.
        cache: the open cache.

    Returns:
        Digest -> submission id, for calls without a cached reply in a submitting or
        in-progress batch; empty when none is.
    """
    stored = set(cache.get_many(s.digest for s in specs))
    return BatchLedger(cache).in_flight({s.digest for s in specs if s.digest not in stored})


class BatchCollector(BatchJudge[JudgeResult]):
    """Collects, for a realtime run, the batches holding some of its calls (module docstring)."""

    async def collect(self, specs: list[CallSpec]) -> int:
        """Wait for (or cancel, then collect) the batches that hold calls of ``specs``.

        Args:
            specs: the realtime job's calls.

        Returns:
            How many of the job's calls were in batches (0: nothing to do).

        Raises:
            JudgeBatchPending: ``judge.batch.wait=false`` and a batch is still processing.
            CallsStopped: :attr:`calls_stop` was set while waiting.
            JudgeFatalAPIError: a non-retryable error while polling.
        """
        results, uncached = split_cached(specs, self.cache, self.reader)
        pending: dict[str, list[CallSpec]] = {}
        for spec in uncached:
            pending.setdefault(spec.digest, []).append(spec)
        for sub in self.ledger.submissions(SUBMITTING):
            if self.is_stale(sub):
                await self.resolve_stale(sub)
        in_flight = self.ledger.in_flight(pending)
        if not in_flight:
            return 0
        self._calls = (results, pending, len(specs))
        subs = sorted(
            {self.ledger.get(sid) for sid in in_flight.values()}, key=lambda s: s.submitted_at
        )
        held = sum(len(pending[d]) for d in in_flight)
        where = "; ".join(
            f"{sum(len(pending[d]) for d, s in in_flight.items() if s == sub.submission_id)} "
            f"in batch {sub.batch_id or '(being created)'}"
            for sub in subs
        )
        abandon = bool(self.cfg.batch.abandon)
        logger.warning(
            "judge: %s of this realtime run are in %s submitted by judge.mode=batch and "
            "still processing (%s); %s",
            counted(held, "call"),
            counted(len(subs), "batch", "batches"),
            where,
            "cancelling them (judge.batch.abandon=true); calls they did not finish are made "
            "realtime"
            if abandon
            else "waiting for them so that no call is paid twice (judge.batch.abandon=true "
            "cancels them and makes their unfinished calls realtime)",
        )
        if abandon:
            await self._cancel([s.batch_id for s in subs if s.batch_id])
        self.info.resumed_batch_ids = [s.batch_id for s in subs if s.batch_id]
        await self._poll([s.submission_id for s in subs], requests_total=len(specs))
        return held

    async def _cancel(self, batch_ids: list[str]) -> None:
        cancel = getattr(self.client, "cancel_batch", None)
        if cancel is None:
            raise JudgeError(
                f"judge.batch.abandon=true: {type(self.client).__name__} cannot cancel "
                f"batches {', '.join(batch_ids)}; nothing was sent. Wait for them "
                "(judge.batch.abandon=false)"
            )
        for batch_id in batch_ids:
            try:
                await cancel(batch_id)
            except JudgeCallError as err:  # ended meanwhile, or gone: polling tells
                logger.warning("judge: cancelling batch %s failed (%s)", batch_id, err.describe())


async def collect_batches_async(
    specs: list[CallSpec],
    cfg: JudgeConfig,
    *,
    cache: JudgeCache,
    client: JudgeClient | None = None,
    calls_stop: CallsStop | None = None,
) -> int:
    """:meth:`BatchCollector.collect` with a client of its own (or the caller's).

    Args:
        specs: the realtime job's calls.
        cfg: the judge config (``judge.batch`` polling options, ``abandon``).
        cache: the open cache holding the ledger.
        client: a client with the batch methods, or ``None`` for the SDK client.
        calls_stop: set by another thread to stop waiting.

    Returns:
        How many of the job's calls were in batches.

    Raises:
        JudgeError: a client without the batch methods (nothing sent); see also
            :meth:`BatchCollector.collect`.
    """
    if client is not None and not hasattr(client, "retrieve_batch"):
        raise JudgeError(
            f"{type(client).__name__} cannot poll the batches that hold calls of this run"
        )
    async with judge_client(cfg, client) as active:
        collector = BatchCollector(
            active, cfg, cache, reader=verdict_reader(cfg), calls_stop=calls_stop  # type: ignore[arg-type]
        )
        return await collector.collect(specs)
