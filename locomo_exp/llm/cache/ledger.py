"""The Message Batches ledger, kept in the judge cache file (``judge.mode=batch``).

Every Message Batch submitted is recorded *before* the create call is sent and given its
batch id the moment the API returns it, with one row per request (its ``custom_id`` and
cache key). A restarted process finds the batches still in flight there and polls them
instead of submitting again; batch replies land in ``judge_calls`` like realtime ones
(with their ``batch_id``), so switching modes never pays twice.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from locomo_exp.llm.cache.store import HOSTNAME, Immediate, JudgeCache, in_clause_chunks
from locomo_exp.llm.messages import BatchItemResult

SUBMITTING = "submitting"
"""Ledger status: the create call is (or was, before a crash) on its way."""
IN_PROGRESS = "in_progress"
"""Ledger status: the API accepted the batch; results not yet stored."""
COLLECTED = "collected"
"""Ledger status: every result line of the ended batch is stored."""
FAILED = "failed"
"""Ledger status: the create call failed; its requests are free to be submitted again."""
MISSING = "missing"
"""Ledger status: the API no longer knows the batch (404); its requests are free again."""
IN_FLIGHT_STATUSES = (SUBMITTING, IN_PROGRESS)
"""Statuses whose requests must not be submitted again."""


@dataclass(frozen=True)
class LedgerRequest:
    """One request of a batch submission, as the ledger stores it.

    Attributes:
        custom_id: the request's ``custom_id`` (:func:`custom_id_for`).
        digest: its cache key digest.
        key_fields: :meth:`CacheKey.fields_json`.
        question_id: the question (for inspection).
        run_index: 0-based run.
    """

    custom_id: str
    digest: str
    key_fields: str
    question_id: str | None
    run_index: int


@dataclass(frozen=True)
class Submission:
    """One batch submission in the ledger.

    Attributes:
        submission_id: local id, assigned before the create call.
        batch_id: the API's id, ``None`` until the create call returned.
        status: :data:`SUBMITTING`, :data:`IN_PROGRESS`, :data:`COLLECTED`,
            :data:`FAILED` or :data:`MISSING`.
        request_count: requests in the batch.
        submitted_at: when the create call was started, Unix seconds.
        writer_pid: process that submitted it.
        writer_host: host name of that process.
    """

    submission_id: str
    batch_id: str | None
    status: str
    request_count: int
    submitted_at: float
    writer_pid: int | None
    writer_host: str | None


def custom_id_for(digest: str) -> str:
    """The ``custom_id`` of a call: its cache key digest (64 characters of ``[0-9a-f]``).

    The API allows 1-64 characters of ``[a-zA-Z0-9_-]``; the SHA-256 hex digest is exactly
    64, so results, which come back in any order, join exactly to their cache keys.
    """
    return digest[:64]


_SUBMISSION_COLUMNS = (
    "submission_id, batch_id, status, request_count, submitted_at, writer_pid, writer_host"
)


class BatchLedger:
    """The batch tables of a :class:`JudgeCache` file (see :mod:`locomo_exp.llm.cache.ledger`).

    Args:
        cache: the open cache; the ledger shares its connection.
    """

    def __init__(self, cache: JudgeCache) -> None:
        self.cache = cache
        self._conn = cache.connection

    def _transaction(self) -> Immediate:
        return self.cache.transaction()

    def in_flight(self, digests: Iterable[str]) -> dict[str, str]:
        """Which of these calls are in a batch still in flight.

        Args:
            digests: cache key digests.

        Returns:
            Digest -> submission id, for calls in a :data:`SUBMITTING` or
            :data:`IN_PROGRESS` submission.
        """
        found: dict[str, str] = {}
        for chunk, marks in in_clause_chunks(digests):
            rows = self._conn.execute(
                "SELECT r.key, r.submission_id FROM judge_batch_requests r "
                "JOIN judge_batches b ON b.submission_id = r.submission_id "
                f"WHERE r.key IN ({marks}) AND b.status IN (?, ?) "
                "ORDER BY b.submitted_at",
                [*chunk, *IN_FLIGHT_STATUSES],
            ).fetchall()
            for key, submission_id in rows:
                found.setdefault(key, submission_id)
        return found

    def claim(
        self, chunks: list[list[LedgerRequest]], *, api_version: str
    ) -> tuple[list[Submission], set[str]]:
        """Record new submissions (status :data:`SUBMITTING`) before they are sent.

        In one ``BEGIN IMMEDIATE`` transaction, requests another process put in flight
        meanwhile are dropped, so two processes never submit the same call twice.

        Args:
            chunks: the requests of each batch to create.
            api_version: the ``anthropic-version`` of the create call.

        Returns:
            ``(submissions, taken)``: the recorded submissions (empty chunks dropped), and
            the digests that were already in flight.
        """
        submissions: list[Submission] = []
        with self._transaction():
            all_digests = [r.digest for chunk in chunks for r in chunk]
            taken = set(self.in_flight(all_digests))
            now = time.time()
            for chunk in chunks:
                free = [r for r in chunk if r.digest not in taken]
                if not free:
                    continue
                submission = Submission(
                    submission_id=uuid.uuid4().hex,
                    batch_id=None,
                    status=SUBMITTING,
                    request_count=len(free),
                    submitted_at=now,
                    writer_pid=os.getpid(),
                    writer_host=HOSTNAME,
                )
                self._conn.execute(
                    "INSERT INTO judge_batches (submission_id, batch_id, status, request_count, "
                    "api_version, submitted_at, writer_pid, writer_host) "
                    "VALUES (?, NULL, ?, ?, ?, ?, ?, ?)",
                    (
                        submission.submission_id,
                        SUBMITTING,
                        submission.request_count,
                        api_version,
                        now,
                        submission.writer_pid,
                        submission.writer_host,
                    ),
                )
                self._conn.executemany(
                    "INSERT INTO judge_batch_requests (submission_id, custom_id, key, "
                    "key_fields, question_id, run_index) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (
                            submission.submission_id,
                            r.custom_id,
                            r.digest,
                            r.key_fields,
                            r.question_id,
                            r.run_index,
                        )
                        for r in free
                    ],
                )
                submissions.append(submission)
        return submissions, taken

    def set_batch_id(
        self, submission_id: str, batch_id: str, batch_created_at: float | None
    ) -> None:
        """Record the API's batch id (status :data:`IN_PROGRESS`), committed at once."""
        self._conn.execute(
            "UPDATE judge_batches SET batch_id = ?, status = ?, batch_created_at = ? "
            "WHERE submission_id = ?",
            (batch_id, IN_PROGRESS, batch_created_at, submission_id),
        )

    def set_status(
        self,
        submission_id: str,
        status: str,
        *,
        counts: dict[str, int] | None = None,
        ended_at: float | None = None,
    ) -> None:
        """Change a submission's status (and its last known request counts)."""
        self._conn.execute(
            "UPDATE judge_batches SET status = ?, counts = COALESCE(?, counts), "
            "ended_at = COALESCE(?, ended_at) WHERE submission_id = ?",
            (status, None if counts is None else json.dumps(counts), ended_at, submission_id),
        )

    def get(self, submission_id: str) -> Submission:
        """One submission.

        Raises:
            KeyError: if it is not in the ledger.
        """
        row = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM judge_batches WHERE submission_id = ?",
            (submission_id,),
        ).fetchone()
        if row is None:
            raise KeyError(submission_id)
        return Submission(*row)

    def submissions(self, status: str | None = None) -> list[Submission]:
        """All submissions (or those with ``status``), oldest first."""
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self._conn.execute(
            f"SELECT {_SUBMISSION_COLUMNS} FROM judge_batches {where} ORDER BY submitted_at",
            args,
        ).fetchall()
        return [Submission(*row) for row in rows]

    def known_batch_ids(self) -> set[str]:
        """Every batch id in the ledger."""
        rows = self._conn.execute(
            "SELECT batch_id FROM judge_batches WHERE batch_id IS NOT NULL"
        ).fetchall()
        return {row[0] for row in rows}

    def requests(self, submission_id: str) -> dict[str, LedgerRequest]:
        """``custom_id -> request`` of one submission."""
        rows = self._conn.execute(
            "SELECT custom_id, key, key_fields, question_id, run_index "
            "FROM judge_batch_requests WHERE submission_id = ?",
            (submission_id,),
        ).fetchall()
        return {row[0]: LedgerRequest(*row) for row in rows}

    def store_results(
        self,
        submission: Submission,
        requests: dict[str, LedgerRequest],
        items: list[BatchItemResult],
    ) -> None:
        """Store a chunk of result lines in one transaction.

        Succeeded replies go into ``judge_calls`` (with the batch id); every line's
        result type (and error) goes into its request row. Lines whose ``custom_id`` is
        not in ``requests`` are ignored. Storing the same lines again changes nothing.
        """
        with self._transaction():
            for item in items:
                request = requests.get(item.custom_id)
                if request is None:
                    continue
                if item.reply is not None:
                    self.cache.insert_raw(
                        request.digest,
                        request.key_fields,
                        request.question_id,
                        request.run_index,
                        item.reply,
                    )
                error = f"{item.error_type}: {item.error_message}" if item.error_type else None
                self._conn.execute(
                    "UPDATE judge_batch_requests SET result_type = ?, error = ? "
                    "WHERE submission_id = ? AND custom_id = ?",
                    (item.result_type, error, submission.submission_id, item.custom_id),
                )
