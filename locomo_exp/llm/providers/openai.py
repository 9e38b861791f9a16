"""``judge.provider=openai``: Chat Completions, the only module that imports ``openai``.

Works with OpenAI and any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, a
LiteLLM proxy, ...) through ``judge.base_url`` / ``OPENAI_BASE_URL``.

- Requests: a ``system`` message (when the prompt has one) and the ``user`` message; a JSON
  schema goes in ``response_format`` (``json_schema``, strict), or ``json_object`` when the
  request asks only for a JSON object. Reasoning models (o-series, gpt-5) take
  ``max_completion_tokens`` and no temperature (OpenAI API reference, "Chat Completions":
  ``max_tokens`` is not compatible with o-series models); others ``max_tokens``.
- Replies: ``finish_reason`` is mapped to the judge's stop reasons (``stop`` ->
  ``end_turn``, ``length`` -> ``max_tokens``, ``content_filter`` or a ``refusal`` ->
  ``refusal``), so a reply cut short is retried and never cached, as with Claude.
- Rate limits: ``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests`` (a
  duration such as ``1s``, ``6m0s`` or ``20ms``; OpenAI docs, "Rate limits") pace the pool.
- Batches (``judge.mode=batch``): the requests go as one JSONL file (``files``, purpose
  ``batch``) to ``/v1/batches`` with ``completion_window=24h``; results come from the
  batch's output and error files. A server without ``/v1/batches`` is found by
  :meth:`OpenAIJudgeClient.check_batch_support` before anything is submitted.

Retries are done by the caller, so the SDK client has ``max_retries=0``. The error mapping,
deadline, batch listing and closing are shared with the other providers
(:mod:`locomo_exp.llm.providers.common`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

import openai

from locomo_exp.llm.errors import JudgeCallError, JudgeError
from locomo_exp.llm.messages import (
    BatchItemResult,
    BatchStatus,
    JudgeReply,
    JudgeRequest,
    RateLimitInfo,
)
from locomo_exp.llm.providers import OPENAI_CHAT_API_VERSION, is_reasoning_model
from locomo_exp.llm.providers.common import SdkErrors, SdkJudgeClient, classify_sdk_error
from locomo_exp.llm.providers.tls import shared_ssl_context

if TYPE_CHECKING:
    from locomo_exp.config import JudgeConfig

CHAT_PATH: Final = "/v1/chat/completions"
"""The endpoint of every batch line."""

COMPLETION_WINDOW: Final = "24h"
"""The only completion window the Batch API offers."""

SCHEMA_NAME = "judge_verdict"
"""``response_format.json_schema.name`` sent with a JSON schema."""

_FINISH_REASONS = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}
_ENDED = {"completed", "failed", "expired", "cancelled"}
_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float | None:
    """Seconds in an OpenAI rate-limit duration (``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``).

    Returns:
        Seconds (>= 0), or ``None`` when ``text`` is not such a duration.
    """
    raw = str(text).strip()
    if not raw:
        return None
    pos = 0
    total = 0.0
    for match in _DURATION_RE.finditer(raw):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if pos != len(raw):
        try:
            return max(0.0, float(raw)) if pos == 0 else None
        except ValueError:
            return None
    return total


def parse_rate_limit_headers(headers: Mapping[str, str]) -> RateLimitInfo | None:
    """The request budget of a response from ``x-ratelimit-*-requests``, or ``None``.

    Args:
        headers: response headers (case-insensitive mapping).

    Returns:
        :class:`RateLimitInfo` when ``x-ratelimit-remaining-requests`` and
        ``x-ratelimit-reset-requests`` are both present and readable.
    """

    def as_int(name: str) -> int | None:
        try:
            raw = headers.get(name)
            return int(str(raw).strip()) if raw is not None else None
        except ValueError:
            return None

    remaining = as_int("x-ratelimit-remaining-requests")
    reset = parse_duration(headers.get("x-ratelimit-reset-requests") or "")
    if remaining is None or reset is None:
        return None
    return RateLimitInfo(
        limit=as_int("x-ratelimit-limit-requests"), remaining=max(remaining, 0), reset_in_s=reset
    )


def build_chat_kwargs(request: JudgeRequest) -> dict[str, Any]:
    """The body of one Chat Completions request (a pure function; JSON-ready).

    Args:
        request: the judge call.

    Returns:
        ``model``, ``messages``, ``max_tokens`` (``max_completion_tokens`` for a reasoning
        model), ``temperature`` when set (never for a reasoning model), and
        ``response_format`` for a JSON schema or a JSON object.
    """
    reasoning = is_reasoning_model(request.model)
    messages: list[dict[str, str]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.append({"role": "user", "content": request.prompt})
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    body["max_completion_tokens" if reasoning else "max_tokens"] = request.max_tokens
    if request.temperature is not None and not reasoning:
        body["temperature"] = float(request.temperature)
    if request.output_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": request.output_schema, "strict": True},
        }
    elif request.response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of an SDK object or of a plain dict (batch output lines are dicts)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def reply_from_completion(completion: Any) -> JudgeReply:
    """Text, stop reason, usage and answering model of a chat completion (SDK object or dict).

    Args:
        completion: a ``ChatCompletion`` or its JSON.

    Returns:
        The :class:`JudgeReply`; a refusal gives empty text and stop reason ``refusal``.
    """
    choices = _get(completion, "choices") or []
    choice = choices[0] if choices else None
    message = _get(choice, "message") if choice is not None else None
    content = _get(message, "content") if message is not None else None
    finish = _get(choice, "finish_reason") if choice is not None else None
    stop_reason = _FINISH_REASONS.get(str(finish), finish) if finish is not None else None
    if message is not None and _get(message, "refusal"):
        stop_reason, content = "refusal", ""
    usage = _get(completion, "usage")
    return JudgeReply(
        text=content if isinstance(content, str) else "",
        stop_reason=stop_reason,
        input_tokens=int(_get(usage, "prompt_tokens", 0) or 0) if usage is not None else 0,
        output_tokens=int(_get(usage, "completion_tokens", 0) or 0) if usage is not None else 0,
        model=str(_get(completion, "model", "") or ""),
        request_id=_get(completion, "_request_id"),
        usage_known=usage is not None and _get(usage, "prompt_tokens") is not None,
    )


ERRORS = SdkErrors(
    base=openai.OpenAIError,
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
    status=openai.APIStatusError,
    validation=openai.APIResponseValidationError,
    body_is_error=True,
    rate_limit=parse_rate_limit_headers,
    too_long=("context length", "context_length"),
)
"""The ``openai`` SDK's exception classes, for :func:`classify_sdk_error`."""


def classify_error(exc: BaseException) -> JudgeCallError:
    """Turn an ``openai`` SDK exception into a :class:`JudgeCallError`.

    Retryable: 408, 409, 429, every 5xx, timeouts and connection errors (``connect`` when
    no connection could be made at all). Not retryable: 400 (``prompt_too_long`` for a
    context-length error; ``temperature_rejected`` when about the temperature), 401, 403,
    404 and every other 4xx.

    Args:
        exc: an exception raised by an SDK call.

    Returns:
        The classified error; unknown exception types count as retryable ``other``.
    """
    return classify_sdk_error(exc, ERRORS)


def batch_status_from(batch: Any) -> BatchStatus:
    """A :class:`BatchStatus` from an OpenAI ``Batch``.

    ``completed``/``failed``/``expired``/``cancelled`` are ``ended``; requests neither
    completed nor failed count as ``processing`` while the batch runs, and as ``expired``
    or ``canceled`` once it has ended so. While the API still validates the file (total
    0), the request count recorded in the batch's metadata at creation is used.
    """
    status = str(batch.status)
    counts = batch.request_counts
    total = int(getattr(counts, "total", 0) or 0)
    if total == 0:
        with_count = (getattr(batch, "metadata", None) or {}).get("request_count")
        total = int(str(with_count)) if str(with_count or "").isdigit() else 0
    done = int(getattr(counts, "completed", 0) or 0)
    failed = int(getattr(counts, "failed", 0) or 0)
    rest = max(total - done - failed, 0)
    ended = status in _ENDED
    tally = {"processing": 0, "succeeded": done, "errored": failed, "canceled": 0, "expired": 0}
    if not ended:
        tally["processing"] = rest
    elif status == "expired":
        tally["expired"] = rest
    elif status == "cancelled":
        tally["canceled"] = rest
    else:
        tally["errored"] += rest
    ended_at = batch.completed_at or batch.failed_at or batch.expired_at or batch.cancelled_at
    errors = tuple(
        ": ".join(str(part) for part in (_get(e, "code"), _get(e, "message")) if part)
        for e in (_get(getattr(batch, "errors", None), "data") or [])
    )
    return BatchStatus(
        batch_id=str(batch.id),
        processing_status="ended" if ended else "canceling" if status == "cancelling" else status,
        counts=tally,
        created_at=float(batch.created_at) if batch.created_at is not None else None,
        ended_at=float(ended_at) if ended_at is not None else None,
        expires_at=float(batch.expires_at) if batch.expires_at is not None else None,
        errors=errors,
    )


def batch_item_from(line: Mapping[str, Any], batch_id: str) -> BatchItemResult:
    """A :class:`BatchItemResult` from one line of a batch's output or error file."""
    custom_id = str(line.get("custom_id", ""))
    response = line.get("response") or {}
    body = response.get("body") if isinstance(response, Mapping) else None
    status = response.get("status_code") if isinstance(response, Mapping) else None
    if status == 200 and isinstance(body, Mapping):
        reply = replace(reply_from_completion(body), batch_id=batch_id)
        return BatchItemResult(custom_id=custom_id, result_type="succeeded", reply=reply)
    error = line.get("error") or (body.get("error") if isinstance(body, Mapping) else None) or {}
    code = str(_get(error, "code") or _get(error, "type") or f"http_{status}")
    if code == "batch_expired":
        return BatchItemResult(custom_id=custom_id, result_type="expired")
    if code == "batch_cancelled":
        return BatchItemResult(custom_id=custom_id, result_type="canceled")
    return BatchItemResult(
        custom_id=custom_id,
        result_type="errored",
        error_type=code,
        error_message=str(_get(error, "message") or ""),
    )


class OpenAIJudgeClient(SdkJudgeClient):
    """:class:`~locomo_exp.llm.messages.JudgeBatchClient` over ``openai.AsyncOpenAI``.

    Args:
        api_key: the key (read by the caller from its environment variable); never logged.
        base_url: a custom endpoint, or ``None`` for the SDK's default.
        timeout_s: deadline of one whole request, seconds.
        create_batch_timeout_s: timeout of the file upload and batch create, seconds.
    """

    api_version = OPENAI_CHAT_API_VERSION
    errors = ERRORS
    request_id_header = "x-request-id"
    _status_from = staticmethod(batch_status_from)

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        create_batch_timeout_s: float = 600.0,
    ) -> None:
        self._timeout_s = float(timeout_s)
        self._create_batch_timeout_s = float(create_batch_timeout_s)
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=openai.DefaultAioHttpClient(
                timeout=timeout_s, verify=shared_ssl_context()  # one per process: tls.py
            ),
        )

    @property
    def _batches(self) -> Any:
        return self._client.batches

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send one Chat Completions request (no retries).

        The body of :func:`build_chat_kwargs` goes out as it is through
        :meth:`SdkJudgeClient._post_json` (the SDK's generic ``post``, the reply's JSON read
        directly).

        Raises:
            JudgeCallError: classified; ``kind="timeout"`` past ``timeout_s``.
        """
        return await self._post_json(
            "/chat/completions", build_chat_kwargs(request), reply_from_completion
        )

    def batch_entry(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]:
        """One line of the batch input file: ``custom_id``, ``method``, ``url``, ``body``."""
        return {
            "custom_id": custom_id,
            "method": "POST",
            "url": CHAT_PATH,
            "body": build_chat_kwargs(request),
        }

    async def check_batch_support(self) -> None:
        """Make sure the server has the Batch API (``GET /v1/batches``) before submitting.

        Raises:
            JudgeError: the server answers 404 or 405 there (most local servers).
            JudgeCallError: any other failure, classified.
        """
        try:
            await self._client.batches.list(limit=1)
        except openai.APIStatusError as exc:
            if exc.status_code in (404, 405):
                raise JudgeError(
                    f"judge.mode=batch: the judge endpoint {self.base_url} has no Batch API "
                    f"(GET /batches answered {exc.status_code}); nothing was submitted. Use "
                    "judge.mode=realtime with this server"
                ) from None
            raise classify_error(exc) from None
        except openai.OpenAIError as exc:
            raise classify_error(exc) from None

    async def create_batch(self, requests: list[dict[str, Any]]) -> BatchStatus:
        """Upload the lines as a JSONL file and create a batch from it (no retries)."""
        payload = "".join(
            json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n"
            for entry in requests
        ).encode("utf-8")
        uploaded = await self._sdk(
            self._client.files.create(
                file=("judge_batch.jsonl", payload, "application/jsonl"),
                purpose="batch",
                timeout=self._create_batch_timeout_s,
            )
        )
        batch = await self._sdk(
            self._client.batches.create(
                input_file_id=uploaded.id,
                endpoint=CHAT_PATH,
                completion_window=COMPLETION_WINDOW,
                metadata={"request_count": str(len(requests)), "created_by": "locomo_exp"},
                timeout=self._create_batch_timeout_s,
            )
        )
        return batch_status_from(batch)

    async def batch_results(self, batch_id: str) -> AsyncIterator[BatchItemResult]:
        """The lines of an ended batch's output file, then of its error file."""
        try:
            batch = await self._client.batches.retrieve(batch_id)
            for file_id in (batch.output_file_id, batch.error_file_id):
                if not file_id:
                    continue
                content = await self._client.files.content(file_id)
                for raw_line in content.text.splitlines():
                    if raw_line.strip():
                        yield batch_item_from(json.loads(raw_line), batch_id)
        except openai.OpenAIError as exc:
            raise classify_error(exc) from None
        except json.JSONDecodeError as exc:
            raise JudgeCallError(
                f"unreadable line in the results of {batch_id}: {exc}",
                kind="invalid_response",
                retryable=True,
            ) from None


def make_client(cfg: JudgeConfig, *, api_key: str, base_url: str | None) -> OpenAIJudgeClient:
    """The provider's client for a judge config (:func:`locomo_exp.llm.providers.make_client`)."""
    return OpenAIJudgeClient(
        api_key=api_key,
        base_url=base_url,
        timeout_s=cfg.timeout_s,
        create_batch_timeout_s=cfg.batch.create_timeout_s,
    )


__all__ = [
    "OpenAIJudgeClient",
    "batch_item_from",
    "batch_status_from",
    "build_chat_kwargs",
    "classify_error",
    "is_reasoning_model",
    "make_client",
    "parse_duration",
    "parse_rate_limit_headers",
    "reply_from_completion",
]
