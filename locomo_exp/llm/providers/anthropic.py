"""``judge.provider=anthropic``: the Messages API, the only module that imports ``anthropic``.

The rest of the judge sees the :class:`~locomo_exp.llm.messages.JudgeClient` protocol
(:class:`JudgeRequest` in, :class:`JudgeReply` out, :class:`JudgeCallError` on failure).

Temperature (docs/field_notes.md §4): the ``anthropic`` 2.x SDK has no ``temperature`` argument,
and its default API version (2026-10-21) rejects ``temperature`` in the body with a 400.
A numeric temperature is therefore sent in the body together with the
header ``anthropic-version: 2023-06-01``; with ``temperature=None`` nothing is added and the
SDK's default version is kept.

Retries are done by the caller (:class:`~locomo_exp.llm.pool.JudgePool`), so the SDK client is
built with ``max_retries=0`` and each failure is classified once by :func:`classify_error`.
The error mapping, deadline, batch listing and closing are shared with the other providers
(:mod:`locomo_exp.llm.providers.common`).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anthropic

from locomo_exp.llm.errors import JudgeCallError
from locomo_exp.llm.messages import (
    BATCH_COUNT_KINDS,
    BatchItemResult,
    BatchStatus,
    JudgeReply,
    JudgeRequest,
    parse_rate_limit_headers,
)
from locomo_exp.llm.providers.common import SdkErrors, SdkJudgeClient, classify_sdk_error
from locomo_exp.llm.providers.tls import shared_ssl_context

if TYPE_CHECKING:
    from locomo_exp.config import JudgeConfig

logger = logging.getLogger(__name__)

__all__ = [
    "AnthropicJudgeClient",
    "api_version_for",
    "build_batch_request",
    "build_request_body",
    "classify_error",
    "make_client",
    "reply_from_message",
]

_NO_SPANS: dict[str, Any] = (
    {"open_telemetry": False}
    if "open_telemetry" in inspect.signature(anthropic.AsyncAnthropic).parameters
    else {}
)
"""No OpenTelemetry span per judge call: SDKs with tracing build one (and its attributes)
for every request, about 0.05 ms of CPU each, for no consumer this tool sets up."""

MESSAGES_PATH = "/v1/messages"
"""The Messages API's path under the base URL."""

TEMPERATURE_API_VERSION = "2023-06-01"
"""API version sent with a temperature in the body (newer versions reject it)."""

try:  # The SDK's own default version; private, so fall back to the value documented for 2.x.
    from anthropic._constants import ANTHROPIC_API_VERSION as _SDK_API_VERSION
except ImportError:  # pragma: no cover - depends on the SDK's internals
    _SDK_API_VERSION = "2026-10-21"

SDK_DEFAULT_API_VERSION: str = _SDK_API_VERSION
"""The ``anthropic-version`` the installed SDK sends by default."""


def api_version_for(temperature: float | None) -> str:
    """The ``anthropic-version`` a request with this temperature must carry.

    Args:
        temperature: the configured temperature, or ``None``.

    Returns:
        ``"2023-06-01"`` for a numeric temperature, else the SDK's default version.
    """
    return TEMPERATURE_API_VERSION if temperature is not None else SDK_DEFAULT_API_VERSION


def build_request_body(request: JudgeRequest) -> dict[str, Any]:
    """The JSON body of one Messages API request (a pure function).

    A numeric temperature is placed directly in the body (the request must then carry
    ``anthropic-version: 2023-06-01``, :func:`api_version_for`); with ``temperature=None``
    none is sent.

    Args:
        request: the judge call.

    Returns:
        ``model``, ``max_tokens``, ``system`` (when set), ``messages``, and
        ``output_config`` (a JSON schema, when ``request.output_schema`` is set) /
        ``temperature`` when set.
    """
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        **({"system": request.system} if request.system else {}),  # a template may have none
        "messages": [{"role": "user", "content": request.prompt}],
    }
    if request.output_schema is not None:
        body["output_config"] = {
            "format": {"type": "json_schema", "schema": request.output_schema}
        }
    if request.temperature is not None:
        body["temperature"] = float(request.temperature)
    return body


def build_batch_request(custom_id: str, request: JudgeRequest) -> dict[str, Any]:
    """One entry of a Message Batch's ``requests`` (a pure function).

    The ``params`` are :func:`build_request_body`'s (the batch create call carries
    ``anthropic-version: 2023-06-01`` when they hold a temperature, see
    :meth:`AnthropicJudgeClient.create_batch`).

    Args:
        custom_id: 1-64 characters of ``[a-zA-Z0-9_-]``, unique within the batch.
        request: the judge call.

    Returns:
        ``{"custom_id": custom_id, "params": {...}}``.
    """
    return {"custom_id": custom_id, "params": build_request_body(request)}


ERRORS = SdkErrors(
    base=anthropic.AnthropicError,
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    status=anthropic.APIStatusError,
    validation=anthropic.APIResponseValidationError,
    body_is_error=False,
    rate_limit=parse_rate_limit_headers,
    too_long=("prompt is too long",),
    extra_retryable={529: "overloaded"},
)
"""The ``anthropic`` SDK's exception classes, for :func:`classify_sdk_error`."""


def classify_error(exc: BaseException) -> JudgeCallError:
    """Turn an SDK exception into a :class:`JudgeCallError`.

    Retryable: 408, 409, 429, every 5xx (529 = overloaded), timeouts and connection
    errors (``connect`` when no connection could be made at all, ``connection`` when an
    open one failed). Not retryable: 400 (``prompt_too_long`` when the message says "prompt is too
    long" - that question's error only; ``temperature_rejected`` when it is about the
    temperature), 401, 403, 404 and every other 4xx.

    Args:
        exc: an exception raised by ``messages.create``.

    Returns:
        The classified error; unknown exception types count as retryable ``other``.
    """
    return classify_sdk_error(exc, ERRORS)


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK object or of the reply's JSON (realtime replies are JSON)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def reply_from_message(message: Any) -> JudgeReply:
    """Extract text, stop reason and usage from a Messages API reply.

    Args:
        message: the reply's JSON object (realtime calls, whose ``request_id`` the caller
            sets from the ``request-id`` header) or an SDK ``Message`` (batch results).

    Returns:
        The :class:`JudgeReply` (text blocks joined; other blocks ignored; missing usage
        gives 0 tokens with ``usage_known=False``).
    """
    texts = [
        text
        for block in (_get(message, "content") or [])
        if _get(block, "type") == "text" and isinstance(text := _get(block, "text"), str)
    ]
    usage = _get(message, "usage")
    return JudgeReply(
        text="".join(texts),
        stop_reason=_get(message, "stop_reason"),
        input_tokens=int(_get(usage, "input_tokens") or 0),
        output_tokens=int(_get(usage, "output_tokens") or 0),
        model=str(_get(message, "model") or ""),
        request_id=_get(message, "_request_id"),
        usage_known=usage is not None and _get(usage, "input_tokens") is not None,
    )


def _unix(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def batch_status_from(batch: Any) -> BatchStatus:
    """A :class:`BatchStatus` from an SDK ``MessageBatch``."""
    counts = getattr(batch, "request_counts", None)
    return BatchStatus(
        batch_id=str(batch.id),
        processing_status=str(batch.processing_status),
        counts={kind: int(getattr(counts, kind, 0) or 0) for kind in BATCH_COUNT_KINDS},
        created_at=_unix(getattr(batch, "created_at", None)),
        ended_at=_unix(getattr(batch, "ended_at", None)),
        expires_at=_unix(getattr(batch, "expires_at", None)),
    )


def batch_item_from(item: Any, batch_id: str) -> BatchItemResult:
    """A :class:`BatchItemResult` from an SDK ``MessageBatchIndividualResponse``."""
    result = item.result
    kind = str(getattr(result, "type", ""))
    if kind == "succeeded":
        return BatchItemResult(
            custom_id=str(item.custom_id),
            result_type=kind,
            reply=replace(reply_from_message(result.message), batch_id=batch_id),
        )
    if kind == "errored":
        inner = getattr(getattr(result, "error", None), "error", None)
        return BatchItemResult(
            custom_id=str(item.custom_id),
            result_type=kind,
            error_type=str(getattr(inner, "type", "") or "error"),
            error_message=str(getattr(inner, "message", "") or ""),
        )
    return BatchItemResult(custom_id=str(item.custom_id), result_type=kind)


class AnthropicJudgeClient(SdkJudgeClient):
    """:class:`JudgeBatchClient` over ``anthropic.AsyncAnthropic``.

    Args:
        api_key: the API key (read by the caller from ``ANTHROPIC_API_KEY``); never logged.
        temperature: the job's temperature; fixes :attr:`api_version`.
        base_url: API base URL; ``None`` keeps the SDK's default, which honours
            ``ANTHROPIC_BASE_URL``.
        timeout_s: deadline of one whole request in seconds (connect, headers and body:
            a server that trickles bytes cannot keep a call alive past it).
        create_batch_timeout_s: timeout of a batch create call (its body may reach
            256 MB), seconds.
    """

    def __init__(
        self,
        *,
        api_key: str,
        temperature: float | None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        create_batch_timeout_s: float = 600.0,
    ) -> None:
        self.api_version = api_version_for(temperature)
        self._timeout_s = float(timeout_s)
        self._create_batch_timeout_s = create_batch_timeout_s
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=anthropic.DefaultAioHttpClient(
                timeout=timeout_s, verify=shared_ssl_context()  # one per process: tls.py
            ),
            **_NO_SPANS,
        )

    errors = ERRORS
    request_id_header = "request-id"
    _status_from = staticmethod(batch_status_from)

    @property
    def _batches(self) -> Any:
        return self._client.messages.batches

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        """Send one request; see :class:`JudgeClient`.

        The body of :func:`build_request_body` goes to ``/v1/messages`` through
        :meth:`SdkJudgeClient._post_json` (the SDK's generic ``post``, the reply's JSON
        read directly), with ``anthropic-version: 2023-06-01`` when it holds a temperature.

        Raises:
            JudgeCallError: classified; ``kind="timeout"`` past the deadline,
                ``kind="invalid_response"`` for a 200 whose body is not JSON.
        """
        headers = None
        if request.temperature is not None:
            headers = {"anthropic-version": TEMPERATURE_API_VERSION}
        return await self._post_json(
            MESSAGES_PATH, build_request_body(request), reply_from_message, headers
        )

    def batch_entry(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]:
        """One entry of a Message Batch (:func:`build_batch_request`)."""
        return build_batch_request(custom_id, request)

    async def create_batch(self, requests: list[dict[str, Any]]) -> BatchStatus:
        """Create one Message Batch; see :class:`JudgeBatchClient`.

        With a temperature in the requests' params the call carries
        ``anthropic-version: 2023-06-01``, as a realtime call would (the API validates
        each request's params on creation).
        """
        extra: dict[str, Any] = {}
        if self.api_version == TEMPERATURE_API_VERSION:
            extra["extra_headers"] = {"anthropic-version": TEMPERATURE_API_VERSION}
        create = self._client.messages.batches.create
        batch = await self._sdk(
            create(requests=requests, timeout=self._create_batch_timeout_s, **extra)
        )
        return batch_status_from(batch)

    async def batch_results(self, batch_id: str) -> AsyncIterator[BatchItemResult]:
        """Stream an ended batch's results; see :class:`JudgeBatchClient`."""
        try:
            decoder = await self._client.messages.batches.results(batch_id)
            async for item in decoder:
                yield batch_item_from(item, batch_id)
        except Exception as exc:  # noqa: BLE001 - SDK and transport errors while streaming
            raise classify_error(exc) from None


def make_client(cfg: JudgeConfig, *, api_key: str, base_url: str | None) -> AnthropicJudgeClient:
    """The provider's client for a judge config (:func:`locomo_exp.llm.providers.make_client`).

    Args:
        cfg: the judge config (temperature, timeouts).
        api_key: the key, read by the caller from its environment variable; never logged.
        base_url: a custom endpoint, or ``None`` for the SDK's default.
    """
    return AnthropicJudgeClient(
        api_key=api_key,
        temperature=cfg.temperature,
        base_url=base_url,
        timeout_s=cfg.timeout_s,
        create_batch_timeout_s=cfg.batch.create_timeout_s,
    )
