"""What the SDK adapters share: error mapping, the realtime call, batch listing and closing.

Each adapter (``anthropic.py``, ``openai.py``) keeps its SDK calls and names its SDK's
exception classes in an :class:`SdkErrors`; :class:`SdkJudgeClient` wraps the calls in the
same error handling for every provider, and sends a realtime call's JSON body through the
SDK's generic ``post`` (:meth:`SdkJudgeClient._post_json`). This module imports no SDK itself
(one module per outside system: only the adapters import ``anthropic`` and ``openai``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar

try:  # the SDKs' HTTP library: httpx2 from anthropic 2.x and openai 3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover - depends on the installed SDK
    import httpx as _http  # type: ignore[no-redef,import-not-found,unused-ignore]

from locomo_exp.llm.errors import JudgeCallError
from locomo_exp.llm.messages import BatchStatus, JudgeReply, RateLimitInfo, parse_retry_after

__all__ = ["SdkErrors", "SdkJudgeClient", "api_message", "classify_sdk_error", "within"]

T = TypeVar("T")

RETRYABLE_STATUS_KINDS: Mapping[int, str] = {
    408: "request_timeout",
    409: "conflict",
    429: "rate_limit",
}
"""Retryable HTTP statuses and their error kinds (every 5xx is retryable ``server`` too)."""

FATAL_STATUS_KINDS: Mapping[int, str] = {
    400: "bad_request",
    401: "authentication",
    403: "permission",
    404: "not_found",
}
"""Not-retryable HTTP statuses and their kinds (every other 4xx is ``client_error``)."""


@dataclass(frozen=True)
class SdkErrors:
    """An SDK's exception classes and the few ways its errors differ from another SDK's.

    Attributes:
        base: the SDK's root exception (``anthropic.AnthropicError``, ``openai.OpenAIError``).
        timeout: its request-timeout class (a subclass of ``connection``).
        connection: its connection-error class.
        status: its HTTP status error class (has ``status_code``, ``response``, ``body``).
        validation: its response-validation error class.
        body_is_error: the SDK keeps only the body's ``error`` object as ``exc.body``
            (``openai``) rather than the whole body (``anthropic``).
        rate_limit: reads the provider's rate-limit headers (``None`` when absent).
        extra_retryable: provider statuses retried besides :data:`RETRYABLE_STATUS_KINDS`
            (status -> kind; Anthropic's 529 ``overloaded``).
        too_long: lower-case phrases of a 400 that means the prompt is over the context.
    """

    base: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]
    status: type[Exception]
    validation: type[Exception]
    body_is_error: bool
    rate_limit: Callable[[Mapping[str, str]], RateLimitInfo | None]
    too_long: tuple[str, ...]
    extra_retryable: Mapping[int, str] = field(default_factory=dict)


def api_message(exc: Any, errors: SdkErrors) -> str:
    """The API's own message of an SDK status error.

    Args:
        exc: the SDK's status error.
        errors: its SDK's classes (``body_is_error`` tells where ``error.message`` is).

    Returns:
        The SDK's ``api_message`` when it read one, else the body's ``error.message``,
        else the SDK's own message (``Error code: 400 - ...``).
    """
    message = getattr(exc, "api_message", None)
    if isinstance(message, str) and message:
        return message
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body if errors.body_is_error else None)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(exc.message)


def _aiohttp_kind(cause: BaseException | None) -> str | None:
    """The error kind an aiohttp error under a transport error stands for, if there is one.

    The SDKs' aiohttp transports (``DefaultAioHttpClient``) map aiohttp's errors to httpx
    errors coarsely: anthropic's makes a server that drops an open connection a
    ``ConnectError``, openai's makes every connection error a ``ConnectTimeout``. The
    aiohttp error decides instead: ``ClientConnectorError`` (refused, no route, DNS) is
    ``connect`` (no connection made), a timeout is ``timeout``, any other is
    ``connection`` (an open connection failed).

    Returns:
        ``"connect"``, ``"timeout"``, ``"connection"``, or ``None`` (no aiohttp error:
        the httpx transport, whose errors mean what they say).
    """
    for _ in range(8):
        if cause is None:
            return None
        if type(cause).__module__.startswith("aiohttp"):
            names = {k.__name__ for k in type(cause).__mro__}
            if "TimeoutError" in names or "ServerTimeoutError" in names:
                return "timeout"
            return "connect" if "ClientConnectorError" in names else "connection"
        cause = cause.__cause__
    return None


def classify_sdk_error(exc: BaseException, errors: SdkErrors) -> JudgeCallError:
    """Turn an SDK exception into a :class:`JudgeCallError`.

    Retryable: 408, 409, 429, the SDK's ``extra_retryable`` statuses, every 5xx, timeouts and
    connection errors (``connect`` when no connection could be made at all - refused, DNS,
    no route -, ``connection`` when an open one failed). Not retryable: 400
    (``prompt_too_long`` when the message has one of ``errors.too_long``;
    ``temperature_rejected`` when it is about the temperature), 401, 403, 404 and every
    other 4xx.

    Args:
        exc: an exception raised by an SDK call.
        errors: the SDK's exception classes.

    Returns:
        The classified error; unknown exception types count as retryable ``other``.
    """
    if isinstance(exc, (errors.timeout, errors.connection)):
        message = str(getattr(exc, "message", exc))
        cause = exc.__cause__
        kind = _aiohttp_kind(cause)
        if kind is None:  # httpx: ConnectError means no connection could be made
            names = {k.__name__ for k in type(cause).__mro__} if cause is not None else set()
            kind = "connect" if "ConnectError" in names else "connection"
            kind = "timeout" if isinstance(exc, errors.timeout) else kind
        if kind == "connect" or (kind == "connection" and isinstance(exc, errors.timeout)):
            message = str(cause).strip() or message  # the transport's words, not "timed out"
        return JudgeCallError(message, kind=kind, retryable=True)
    if isinstance(exc, errors.status):
        status = int(getattr(exc, "status_code", 0))
        message = api_message(exc, errors)
        headers = getattr(exc, "response").headers  # noqa: B009 - typed as a plain Exception
        rate_limit = errors.rate_limit(headers)
        retryable = errors.extra_retryable.get(status) or RETRYABLE_STATUS_KINDS.get(status)
        if retryable is not None or status >= 500:
            return JudgeCallError(
                message,
                kind=retryable or "server",
                status_code=status,
                retryable=True,
                retry_after_s=parse_retry_after(headers),
                rate_limit=rate_limit,
            )
        kind = FATAL_STATUS_KINDS.get(status, "client_error")
        lowered = message.lower()
        if status == 400 and any(phrase in lowered for phrase in errors.too_long):
            kind = "prompt_too_long"
        elif status == 400 and "temperature" in lowered:
            kind = "temperature_rejected"
        return JudgeCallError(
            message, kind=kind, status_code=status, retryable=False, rate_limit=rate_limit
        )
    if isinstance(exc, errors.validation):
        message = str(getattr(exc, "message", exc))
        return JudgeCallError(message, kind="invalid_response", retryable=True)
    return JudgeCallError(f"{type(exc).__name__}: {exc}", kind="other", retryable=True)


async def within(seconds: float, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` with a total deadline of ``seconds``.

    Raises:
        asyncio.TimeoutError: past the deadline (the awaitable is cancelled).
    """
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:  # Python 3.10
        return await asyncio.wait_for(awaitable, seconds)
    async with timeout(seconds):
        return await awaitable


class SdkJudgeClient:
    """The parts of a :class:`~locomo_exp.llm.messages.JudgeBatchClient` every SDK shares.

    A subclass sets :attr:`errors`, :attr:`request_id_header`, ``self._client`` (the SDK's
    async client) and ``self._timeout_s``, and implements :attr:`_batches` (the SDK's
    batches resource, with ``retrieve(id)`` and ``list(limit=...)`` newest first) and
    :meth:`_status_from`.
    """

    errors: ClassVar[SdkErrors]
    request_id_header: ClassVar[str]
    """The reply header that carries the provider's request id."""
    _client: Any
    _timeout_s: float

    @staticmethod
    def _json_object(raw: Any) -> dict[str, Any]:
        """The JSON object of an HTTP reply read through the SDK's generic ``post``.

        Raises:
            JudgeCallError: ``kind="invalid_response"`` (retryable) when the body is not
                JSON; a JSON value that is not an object counts as an empty reply.
        """
        try:
            payload = raw.json()
        except ValueError as exc:  # a 200 whose body is not JSON
            raise JudgeCallError(
                f"unreadable reply body: {exc}", kind="invalid_response", retryable=True
            ) from None
        return payload if isinstance(payload, dict) else {}

    async def _post_json(
        self,
        path: str,
        body: dict[str, Any],
        read: Callable[[dict[str, Any]], JudgeReply],
        headers: Mapping[str, str] | None = None,
    ) -> JudgeReply:
        """Send one realtime call's JSON body and read the reply's JSON (no retries).

        The body goes out through the SDK's generic ``post`` (its README, "Undocumented
        endpoints"): the SDK still adds the key, its default headers, timeouts and error
        classes, but skips its per-call walk of the parameters' types and its typed reply
        objects: about a fifth of a Messages call's CPU, and as much as all the rest of a
        Chat Completions call's (``benchmarks/judge_throughput.py --provider ...``). The
        whole request must finish within ``timeout_s`` (:meth:`_timed`).

        Args:
            path: the endpoint under the SDK's base URL.
            body: the request's JSON body.
            read: builds the :class:`JudgeReply` from the reply's JSON object.
            headers: headers added to the SDK's own (``None``: none).

        Returns:
            ``read``'s reply with ``request_id`` from :attr:`request_id_header` and
            ``rate_limit`` from the reply's rate-limit headers (``errors.rate_limit``).

        Raises:
            JudgeCallError: classified; ``kind="timeout"`` past the deadline,
                ``kind="invalid_response"`` for a body that is not JSON.
        """
        options: dict[str, Any] = {"headers": dict(headers)} if headers else {}
        post = self._client.post(path, cast_to=_http.Response, body=body, options=options)
        raw = await self._timed(post)
        return replace(
            read(self._json_object(raw)),
            request_id=raw.headers.get(self.request_id_header),
            rate_limit=self.errors.rate_limit(raw.headers),
        )

    @property
    def base_url(self) -> str:
        """The API base URL requests go to (never contains the key)."""
        return str(self._client.base_url).rstrip("/")

    def _classify(self, exc: BaseException) -> JudgeCallError:
        return classify_sdk_error(exc, self.errors)

    async def _sdk(self, awaitable: Awaitable[T]) -> T:
        """Await one SDK call (no retries); its SDK errors come out classified.

        Raises:
            JudgeCallError: the call failed.
        """
        try:
            return await awaitable
        except self.errors.base as exc:
            raise self._classify(exc) from None

    async def _timed(self, awaitable: Awaitable[T]) -> T:
        """Await one realtime call within ``timeout_s`` seconds (connect, headers and body).

        The SDK's own timeout applies per read, so a slow trickle of bytes would outlive it.

        Raises:
            JudgeCallError: classified; ``kind="timeout"`` past the deadline.
        """
        try:
            return await within(self._timeout_s, awaitable)
        except asyncio.TimeoutError:
            raise JudgeCallError(
                f"no complete reply within judge.timeout_s={self._timeout_s:g} s",
                kind="timeout",
                retryable=True,
            ) from None
        except self.errors.base as exc:
            raise self._classify(exc) from None

    @staticmethod
    def _status_from(batch: Any) -> BatchStatus:
        """A :class:`BatchStatus` from one of the SDK's batch objects."""
        raise NotImplementedError

    async def retrieve_batch(self, batch_id: str) -> BatchStatus:
        """The batch's state (no retries).

        Raises:
            JudgeCallError: the call failed.
        """
        return self._status_from(await self._sdk(self._batches.retrieve(batch_id)))

    async def cancel_batch(self, batch_id: str) -> BatchStatus:
        """Ask the API to cancel a batch still processing (no retries).

        Requests already processed keep their results (and are paid); the others end
        ``canceled``, unpaid. Both providers' Batch APIs have a cancel call.

        Raises:
            JudgeCallError: the call failed.
        """
        return self._status_from(await self._sdk(self._batches.cancel(batch_id)))

    @property
    def _batches(self) -> Any:
        """The SDK's batches resource."""
        raise NotImplementedError

    async def list_batches(self, created_after: float) -> list[BatchStatus]:
        """Batches created at or after ``created_after`` (Unix seconds), newest first.

        Raises:
            JudgeCallError: listing failed.
        """
        found: list[BatchStatus] = []
        try:
            async for batch in self._batches.list(limit=100):
                status = self._status_from(batch)
                if status.created_at is not None and status.created_at < created_after:
                    break
                found.append(status)
        except self.errors.base as exc:
            raise self._classify(exc) from None
        return found

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._client.close()
