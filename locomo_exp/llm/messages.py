"""What the judge sends and gets back, independent of the SDK: requests, replies, protocols.

Each provider module (:mod:`locomo_exp.llm.providers`, the only modules that import an
SDK) turns these into SDK calls and back; everything else in the judge uses these types and
the :class:`JudgeClient` / :class:`JudgeBatchClient` protocols, so tests and other clients
need no SDK.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call, independent of the SDK.

    Attributes:
        model: model id, e.g. ``claude-sonnet-4-6``.
        system: system prompt.
        prompt: user message text.
        max_tokens: output token limit.
        temperature: sampling temperature in [0, 1], or ``None`` to send none.
        output_schema: JSON schema for structured output, or ``None`` for free text.
        response_format: the reply format a template asks for, provider-neutral (``text``,
            ``json_object``, ``json_schema`` with ``output_schema``), or ``None`` (the
            protocol's default: the schema when one is given). Each provider maps it to its
            API (Anthropic: ``json_schema`` -> structured output; ``text`` and
            ``json_object`` -> no format field, the prompt asks for JSON).
    """

    model: str
    system: str
    prompt: str
    max_tokens: int
    temperature: float | None = None
    output_schema: dict[str, Any] | None = None
    response_format: str | None = None


@dataclass(frozen=True)
class RateLimitInfo:
    """The request rate-limit state the API reported with one response.

    From ``anthropic-ratelimit-requests-limit``, ``-remaining`` and ``-reset`` (an RFC 3339
    time at which the request bucket is full again; Anthropic docs, "Rate limits").

    Attributes:
        limit: requests per minute allowed, when sent.
        remaining: requests left before the limit is hit.
        reset_in_s: seconds from the response until the bucket is full again (>= 0).
    """

    limit: int | None
    remaining: int
    reset_in_s: float


def _header_int(headers: Mapping[str, str], name: str) -> int | None:
    raw = headers.get(name)
    try:
        return int(str(raw).strip()) if raw is not None else None
    except ValueError:
        return None


def parse_rate_limit_headers(
    headers: Mapping[str, str], now: float | None = None
) -> RateLimitInfo | None:
    """The request rate-limit state of a response, or ``None`` when it has none.

    Args:
        headers: response headers (case-insensitive mapping).
        now: current Unix time, seconds (default ``time.time()``).

    Returns:
        :class:`RateLimitInfo` when ``anthropic-ratelimit-requests-remaining`` and
        ``-reset`` are both present and readable, else ``None``.
    """
    remaining = _header_int(headers, "anthropic-ratelimit-requests-remaining")
    reset_raw = headers.get("anthropic-ratelimit-requests-reset")
    if remaining is None or not reset_raw:
        return None
    try:
        reset = datetime.fromisoformat(str(reset_raw).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if reset.tzinfo is None:
        return None
    now = time.time() if now is None else now
    return RateLimitInfo(
        limit=_header_int(headers, "anthropic-ratelimit-requests-limit"),
        remaining=max(remaining, 0),
        reset_in_s=max(0.0, reset.timestamp() - now),
    )


@dataclass(frozen=True)
class JudgeReply:
    """The part of a Messages API response the judge uses.

    Attributes:
        text: all text blocks of the reply, joined.
        stop_reason: ``end_turn``, ``max_tokens``, ``refusal``, ... (``None`` if absent).
        input_tokens: billed input tokens.
        output_tokens: billed output tokens.
        model: model id reported by the API.
        request_id: the API's ``request-id``, when known.
        batch_id: the Message Batch that produced the reply, ``None`` for a realtime call
            (batch replies are billed at batch prices).
        rate_limit: the rate-limit state sent with the reply, if any (not cached).
        usage_known: False when the reply carried no token usage (some OpenAI-compatible
            servers): its tokens and cost are unknown, not 0.
    """

    text: str
    stop_reason: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    request_id: str | None = None
    batch_id: str | None = None
    rate_limit: RateLimitInfo | None = field(default=None, compare=False)
    usage_known: bool = True


class JudgeClient(Protocol):
    """What the runner needs from an API client.

    A client may also have a ``base_url`` attribute (named when it cannot connect).
    """

    api_version: str
    """The ``anthropic-version`` its requests carry (part of the cache key)."""

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send one request (no retries).

        Raises:
            JudgeCallError: on any API or transport failure, classified.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


BATCH_COUNT_KINDS = ("processing", "succeeded", "errored", "canceled", "expired")
"""The request states of a Message Batch's ``request_counts``."""


@dataclass(frozen=True)
class BatchStatus:
    """The state of one Message Batch, independent of the SDK.

    Attributes:
        batch_id: the API's batch id (``msgbatch_...``).
        processing_status: ``in_progress``, ``canceling`` or ``ended``.
        counts: requests per state (:data:`BATCH_COUNT_KINDS`); the API reports only
            ``processing`` until the whole batch has ended.
        created_at: creation time, Unix seconds.
        ended_at: end of processing, Unix seconds, or ``None``.
        expires_at: when the API stops processing it (24 h after creation), Unix seconds.
        errors: the batch's own errors, one ``code: message`` text per error the API
            reported (OpenAI's ``errors`` of a batch that failed validation; a repeated
            error appears once per input line it was found on); empty when none.
    """

    batch_id: str
    processing_status: str
    counts: dict[str, int] = field(default_factory=dict)
    created_at: float | None = None
    ended_at: float | None = None
    expires_at: float | None = None
    errors: tuple[str, ...] = ()

    @property
    def ended(self) -> bool:
        """Whether processing has ended (results can be downloaded)."""
        return self.processing_status == "ended"

    @property
    def total(self) -> int:
        """Number of requests in the batch."""
        return sum(self.counts.get(kind, 0) for kind in BATCH_COUNT_KINDS)


@dataclass(frozen=True)
class BatchItemResult:
    """One line of a Message Batch's results.

    Attributes:
        custom_id: the request's ``custom_id``.
        result_type: ``succeeded``, ``errored``, ``canceled`` or ``expired``.
        reply: the reply of a ``succeeded`` request, else ``None``.
        error_type: the API's error type of an ``errored`` request (e.g.
            ``invalid_request_error``), else "".
        error_message: the API's error message, else "".
    """

    custom_id: str
    result_type: str
    reply: JudgeReply | None = None
    error_type: str = ""
    error_message: str = ""


class JudgeBatchClient(JudgeClient, Protocol):
    """What ``judge.mode=batch`` needs from an API client, beyond :class:`JudgeClient`."""

    def batch_entry(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]:
        """One request of a batch in the API's own form (JSON-ready; a pure function).

        Args:
            custom_id: 1-64 characters of ``[a-zA-Z0-9_-]``, unique within the batch.
            request: the judge call.
        """
        ...

    async def create_batch(self, requests: list[dict[str, Any]]) -> BatchStatus:
        """Create one batch from :meth:`batch_entry` entries (no retries).

        Raises:
            JudgeCallError: on any API or transport failure, classified.
        """
        ...

    async def retrieve_batch(self, batch_id: str) -> BatchStatus:
        """The batch's current state (no retries).

        Raises:
            JudgeCallError: classified.
        """
        ...

    def batch_results(self, batch_id: str) -> AsyncIterator[BatchItemResult]:
        """Stream the results of an ended batch, in the server's (arbitrary) order.

        Raises:
            JudgeCallError: classified.
        """
        ...

    async def list_batches(self, created_after: float) -> list[BatchStatus]:
        """Batches created at or after ``created_after`` (Unix seconds), newest first.

        Raises:
            JudgeCallError: classified.
        """
        ...


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date).

    Args:
        headers: response headers (case-insensitive mapping).

    Returns:
        Seconds (>= 0), or ``None`` when absent or unreadable.
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))
