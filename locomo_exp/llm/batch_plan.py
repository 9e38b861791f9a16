"""Planning batches: the API's limits, how requests are split, what a batch job did."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.messages import BATCH_COUNT_KINDS, BatchItemResult, BatchStatus

BATCH_BODY_OVERHEAD_BYTES = 1024
"""Bytes reserved in each batch body besides the requests (``{"requests": [...]}``)."""

STORE_CHUNK = 1000
"""Result lines stored per SQLite transaction."""

ADOPTION_WINDOW_S = 300.0
"""Clock skew allowed between this machine and the API when adopting a batch, seconds."""

AMBIGUOUS_KINDS = frozenset({"timeout", "connection", "server", "other", "invalid_response"})
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


VALIDATION_FAILED = "batch_failed"
"""``error_type`` given to the requests of a batch the API rejected at validation."""


def batch_error_lines(
    batch_id: str, rejected: Iterable[str], items: Iterable[BatchItemResult]
) -> list[str]:
    """One line per distinct error of an ended batch, with how often it occurred.

    Most frequent first (ties in the order met). A batch the API rejected at validation
    (OpenAI: status ``failed`` with ``errors``) ran none of its requests; its errors are
    said first. Then the ``errored`` result lines (the error file), grouped by error type
    and message.

    Args:
        batch_id: the batch.
        rejected: the batch's own errors (:attr:`BatchStatus.errors`, ``code: message``).
        items: its result lines (only ``errored`` ones are counted).

    Returns:
        ``judge batch: batch <id> failed validation, none of its requests ran: <n> × <error>``
        and ``judge batch: <n> request(s) of batch <id> errored: <type>: <message>`` lines.
    """
    lines = [
        f"judge batch: batch {batch_id} failed validation, none of its requests ran: "
        f"{n} × {text}"
        for text, n in Counter(rejected).most_common()
    ]
    errored = Counter(
        ": ".join(part for part in (item.error_type, item.error_message) if part)
        for item in items
        if item.result_type == "errored" and item.error_type != VALIDATION_FAILED
    )
    lines += [
        f"judge batch: {n} request{'s' if n != 1 else ''} of batch {batch_id} errored: "
        f"{text or 'no error message'}"
        for text, n in errored.most_common()
    ]
    return lines


def sum_counts(statuses: list[BatchStatus]) -> dict[str, int]:
    """Request counts by kind (``succeeded``, ``errored``, ...) summed over batches."""
    return {kind: sum(s.counts.get(kind, 0) for s in statuses) for kind in BATCH_COUNT_KINDS}
