"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 in a background thread.

The real ``anthropic`` SDK talks to it through ``base_url`` (respx does not intercept the
SDK's ``httpx2`` transport; docs/field_notes.md §4). Every request's method, path, headers and
JSON body is recorded. Replies are scripted:

* ``server.script(*replies)`` queues replies used by the next requests, in order;
* ``server.responder = fn`` answers every other request (``fn(request) -> Reply``);
* verdicts per prompt: ``server.responder = verdict_responder(decide)`` with
  ``decide(JudgedItem) -> bool | score`` (``accept_all()``, ``replay_truth()``,
  ``per_model({...})`` are ready-made);
* ``server.latency_s`` delays every reply (slow replies);
* API rules the real service enforces are applied first (``enforce_rules``): a
  ``temperature`` in the body with an ``anthropic-version`` other than 2023-06-01 is a
  400, an unknown model a 404, a temperature for a model that rejects one a 400, and a
  request without credentials a 401.

Routes live in ``server.routes`` (``(method, path) -> handler``) and, for paths with an
id, ``server.pattern_routes`` (``(method, regex, handler)``).

Message Batches (``/v1/messages/batches``: create, list, retrieve, results, cancel): each
request of a created batch is answered at creation by the same script/responder as a
realtime call (so the same fake verdicts apply; a reply with an error status becomes an
``errored`` entry), and the batch ends ``server.batch_processing_s`` seconds later. Results
are served as JSONL in a shuffled order (``server.batch_shuffle_seed``);
``server.expire_in_next_batch = n`` makes the first ``n`` requests of the next batch
``expired``; ``POST .../cancel`` ends a batch with its requests ``canceled``. Created
batches are in ``server.batches``; batch creates are not in ``messages_requests()``.

Slow bodies: a reply with ``drip_s`` sends its headers, then its body one byte every
``drip_s`` seconds (a connection kept alive without ever finishing).

Rate limits: ``server.rate_limit(rpm, burst)`` emulates the API's request token bucket
(capacity ``burst``, refilled at ``rpm / 60`` per second of ``server.clock``): every
Messages reply carries ``anthropic-ratelimit-requests-limit``, ``-remaining`` and
``-reset`` (RFC 3339, when the bucket is full again), and a request finding the bucket
empty gets a 429 with ``retry-after`` (seconds until one token). ``server.clock`` is
``time.monotonic`` unless a test injects its own; ``server.status_counts`` counts replies
by status.

Run ``python tests/fake_anthropic.py --latency 0.1`` to serve from a separate process
(prints the URL on stdout); the benchmark does this.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import random
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

TEMPERATURE_API_VERSION = "2023-06-01"
KNOWN_MODELS = frozenset(
    {
        "claude-sonnet-4-6",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-opus-4-6",
        "claude-opus-4-7",
    }
)
TEMPERATURE_REJECTING_MODELS = frozenset({"claude-opus-4-7"})
FAKE_API_KEY = "fake-key-for-tests-0000"


@dataclass
class RecordedRequest:
    """One request as the server received it.

    Attributes:
        method: HTTP method.
        path: URL path (query string removed).
        headers: header names lower-cased.
        body: decoded JSON body (``None`` if empty or not JSON).
        received_at: ``time.monotonic()`` at arrival.
        raw: the body's bytes as received.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float
    raw: bytes = b""

    @property
    def prompt(self) -> str:
        """Text of the first user message of a Messages (or Chat Completions) request."""
        try:
            messages = self.body["messages"]
            users = [m for m in messages if m.get("role", "user") == "user"]
            content = (users or messages)[0]["content"]
        except (KeyError, IndexError, TypeError, AttributeError):
            return ""
        if isinstance(content, str):
            return content
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))


@dataclass
class Reply:
    """A scripted response.

    Attributes:
        status: HTTP status.
        text: reply text of a 200 Messages response (``None``: no text block).
        stop_reason: ``end_turn``, ``max_tokens``, ``refusal``, ...
        error_type: ``error.type`` of an error body.
        message: ``error.message`` of an error body.
        headers: extra response headers (e.g. ``retry-after``).
        body: a full JSON body (dict) or raw ``bytes`` that replaces the generated one.
        delay_s: extra delay before answering, seconds.
        drop: close the connection without answering.
        input_tokens: ``usage.input_tokens``.
        output_tokens: ``usage.output_tokens``.
        content_type: the response's ``content-type``.
        drip_s: send the body one byte every ``drip_s`` seconds after the headers (0: at once).
    """

    status: int = 200
    text: str | None = '{"score": 80, "explanation": "Matches the gold answer."}'
    stop_reason: str = "end_turn"
    error_type: str = ""
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay_s: float = 0.0
    drop: bool = False
    input_tokens: int = 420
    output_tokens: int = 24
    content_type: str = "application/json"
    drip_s: float = 0.0


def dripping(interval_s: float) -> Reply:
    """A 200 reply whose body arrives one byte every ``interval_s`` seconds."""
    return Reply(drip_s=interval_s)


@dataclass
class TokenBucket:
    """The API's request rate limit: capacity ``burst``, refilled at ``rpm / 60`` per second.

    Attributes:
        rpm: requests per minute.
        burst: bucket capacity (requests).
        level: tokens now.
        updated_at: clock time of ``level``.
    """

    rpm: float
    burst: float
    level: float
    updated_at: float

    def take(self, now: float) -> tuple[bool, dict[str, str]]:
        """Take one token if there is one; returns ``(allowed, rate-limit headers)``."""
        rate = self.rpm / 60.0
        self.level = min(self.burst, self.level + (now - self.updated_at) * rate)
        self.updated_at = now
        allowed = self.level >= 1.0
        if allowed:
            self.level -= 1.0
        full_in = (self.burst - self.level) / rate
        reset = datetime.fromtimestamp(time.time() + full_in, timezone.utc)
        headers = {
            "anthropic-ratelimit-requests-limit": str(int(self.rpm)),
            "anthropic-ratelimit-requests-remaining": str(int(self.level)),
            "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
        }
        if not allowed:
            headers["retry-after"] = f"{(1.0 - self.level) / rate:.3f}"
        return allowed, headers


@dataclass
class FakeBatch:
    """A Message Batch held by the fake server.

    Attributes:
        batch_id: ``msgbatch_fake_<n>``.
        created_at: Unix seconds.
        ready_at: ``time.monotonic()`` when processing ends.
        custom_ids: the requests' ids, in submission order.
        results: ``custom_id`` -> the ``result`` object of its JSONL line.
        canceled: whether ``cancel`` was called before it ended.
        results_downloads: how many times its results were fetched.
    """

    batch_id: str
    created_at: float
    ready_at: float
    custom_ids: list[str]
    results: dict[str, dict[str, Any]]
    canceled: bool = False
    results_downloads: int = 0


_CUSTOM_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_BATCH_REQUESTS = 100_000


def _iso(unix: float | None) -> str | None:
    return None if unix is None else datetime.fromtimestamp(unix, timezone.utc).isoformat()


def rubric(score: Any, explanation: str = "Compared with the gold answer.") -> Reply:
    """A 200 reply with ``{"score": score, "explanation": ...}``."""
    return Reply(text=json.dumps({"score": score, "explanation": explanation}))


def binary(label: str, explanation: str = "Compared with the gold answer.") -> Reply:
    """A 200 reply with ``{"label": label, "explanation": ...}``."""
    return Reply(text=json.dumps({"label": label, "explanation": explanation}))


def text(reply_text: str | None, stop_reason: str = "end_turn") -> Reply:
    """A 200 reply with this exact text."""
    return Reply(text=reply_text, stop_reason=stop_reason)


def error(status: int, message: str, error_type: str = "api_error", **headers: str) -> Reply:
    """An error reply; keyword arguments become headers (``retry_after`` -> ``retry-after``)."""
    return Reply(
        status=status,
        error_type=error_type,
        message=message,
        headers={k.replace("_", "-"): v for k, v in headers.items()},
    )


def rate_limited(retry_after: float = 0.05) -> Reply:
    """429 with ``retry-after`` in seconds."""
    return error(
        429,
        "Number of requests has exceeded your rate limit.",
        "rate_limit_error",
        retry_after=str(retry_after),
    )


def overloaded() -> Reply:
    """529 overloaded."""
    return error(529, "Overloaded", "overloaded_error")


def server_error() -> Reply:
    """500 internal error."""
    return error(500, "Internal server error", "api_error")


def dropped() -> Reply:
    """Close the connection without a response."""
    return Reply(drop=True)


@dataclass(frozen=True)
class JudgedItem:
    """What a judge request asks about, read back from its prompt (tags unescaped).

    Attributes:
        model: the request's model.
        category: the question's category id.
        question: the question text.
        gold: the gold answer as shown to the judge.
        prediction: the answer being judged.
    """

    model: str
    category: int
    question: str
    gold: str
    prediction: str


def _tag(prompt: str, name: str) -> str:
    match = re.search(rf"<{name}>\n(.*?)\n</{name}>", prompt, re.S)
    text = match.group(1) if match else ""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def judged_item(request: RecordedRequest) -> JudgedItem:
    """The :class:`JudgedItem` of a Messages request (empty fields when absent)."""
    prompt = request.prompt
    category = re.match(r"Question category: (\d+)", prompt)
    model = request.body.get("model", "") if isinstance(request.body, dict) else ""
    return JudgedItem(
        model=str(model),
        category=int(category.group(1)) if category else 0,
        question=_tag(prompt, "question"),
        gold=_tag(prompt, "gold_answer"),
        prediction=_tag(prompt, "predicted_answer"),
    )


def verdict_responder(
    decide: Callable[[JudgedItem], bool | float], protocol: str = "rubric"
) -> Callable[[RecordedRequest], Reply]:
    """A responder scripting the verdict per prompt: ``server.responder = verdict_responder(f)``.

    Args:
        decide: item -> ``True``/``False`` (accept/reject: score 100/0, or label
            CORRECT/WRONG) or a rubric score 0-100.
        protocol: ``rubric`` (``{"score": ...}``) or ``binary`` (``{"label": ...}``).
    """

    def respond(request: RecordedRequest) -> Reply:
        verdict = decide(judged_item(request))
        if protocol == "binary":
            accept = verdict >= 50 if not isinstance(verdict, bool) else verdict
            return binary("CORRECT" if accept else "WRONG")
        if isinstance(verdict, bool):
            return rubric(100 if verdict else 0)
        return rubric(verdict)

    return respond


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def accept_all(protocol: str = "rubric") -> Callable[[RecordedRequest], Reply]:
    """A judge that accepts every answer."""
    return verdict_responder(lambda item: True, protocol)


def replay_truth(protocol: str = "rubric") -> Callable[[RecordedRequest], Reply]:
    """A judge that is right on controls: accepts exactly the answers equal to the gold
    (case and punctuation ignored), rejects everything else."""
    return verdict_responder(lambda item: _norm(item.prediction) == _norm(item.gold), protocol)


def per_model(
    deciders: dict[str, Callable[[JudgedItem], bool | float]], protocol: str = "rubric"
) -> Callable[[RecordedRequest], Reply]:
    """A judge whose verdict depends on the request's model (``deciders[model](item)``)."""
    return verdict_responder(lambda item: deciders[item.model](item), protocol)


class FakeAnthropicServer:
    """Threaded HTTP server imitating the Messages API (see module docstring).

    Args:
        latency_s: delay added to every reply, seconds.
        enforce_rules: apply the real API's version/model/temperature/auth rules.
    """

    def __init__(self, *, latency_s: float = 0.0, enforce_rules: bool = True) -> None:
        self.latency_s = latency_s
        self.enforce_rules = enforce_rules
        self.known_models: set[str] = set(KNOWN_MODELS)
        self.temperature_rejecting_models: set[str] = set(TEMPERATURE_REJECTING_MODELS)
        self.responder: Callable[[RecordedRequest], Reply] = lambda request: Reply()
        self.routes: dict[tuple[str, str], Callable[[RecordedRequest], Reply]] = {
            ("POST", "/v1/messages"): self._messages,
            ("POST", "/v1/messages/batches"): self._create_batch,
            ("GET", "/v1/messages/batches"): self._list_batches,
        }
        self.pattern_routes: list[
            tuple[str, re.Pattern[str], Callable[[RecordedRequest], Reply]]
        ] = [
            ("GET", re.compile(r"^/v1/messages/batches/[^/]+$"), self._retrieve_batch),
            ("GET", re.compile(r"^/v1/messages/batches/[^/]+/results$"), self._batch_results),
            ("POST", re.compile(r"^/v1/messages/batches/[^/]+/cancel$"), self._cancel_batch),
        ]
        self.batches: dict[str, FakeBatch] = {}
        self.batch_items: list[RecordedRequest] = []
        self.batch_processing_s = 0.0
        self.batch_shuffle_seed: int | None = 0
        self.expire_in_next_batch = 0
        self.requests: list[RecordedRequest] = []
        self.clock: Callable[[], float] = time.monotonic
        self.bucket: TokenBucket | None = None
        self.status_counts: dict[int, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies for the next Messages requests, in arrival order."""
        with self._lock:
            self._script.extend(replies)

    def rate_limit(self, rpm: float, burst: float | None = None) -> None:
        """Emulate a request rate limit of ``rpm`` (bucket capacity ``burst``, default rpm)."""
        capacity = float(burst if burst is not None else rpm)
        self.bucket = TokenBucket(rpm, capacity, capacity, self.clock())

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self.requests.clear()
            self._script.clear()
            self.batch_items.clear()
            self.max_in_flight = 0

    def messages_requests(self) -> list[RecordedRequest]:
        """Recorded ``POST /v1/messages`` requests."""
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/messages"]

    def batch_create_requests(self) -> list[RecordedRequest]:
        """Recorded ``POST /v1/messages/batches`` requests (accepted or not)."""
        with self._lock:
            return [
                r for r in self.requests if r.method == "POST" and r.path == "/v1/messages/batches"
            ]

    def batch_requests_submitted(self) -> int:
        """Requests in all accepted batches."""
        with self._lock:
            return sum(len(b.custom_ids) for b in self.batches.values())

    def wait_idle(self, quiet_s: float = 0.2, timeout_s: float = 10.0) -> None:
        """Wait until no request is in flight and none has arrived for ``quiet_s`` seconds.

        Use after killing a client: requests it sent just before dying may still be read.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                busy = self.in_flight > 0
                last = self.requests[-1].received_at if self.requests else 0.0
            if not busy and time.monotonic() - last >= quiet_s:
                return
            time.sleep(0.01)
        raise TimeoutError("fake server did not become idle")

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321``."""
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    # -- lifecycle -------------------------------------------------------------------
    def start(self, port: int = 0) -> FakeAnthropicServer:
        """Bind to 127.0.0.1 (a free port by default) and serve in a daemon thread."""
        server = self

        class Handler(_Handler):
            fake = server

        class _Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024
            allow_reuse_address = True

        self._httpd = _Server(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    # -- request handling ------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _next_scripted(self) -> Reply | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def _rule_violation(self, request: RecordedRequest) -> Reply | None:
        headers = request.headers
        if not headers.get("x-api-key") and not headers.get("authorization"):
            return error(401, "invalid x-api-key", "authentication_error")
        body = request.body if isinstance(request.body, dict) else {}
        version = headers.get("anthropic-version", "")
        if "temperature" in body and version != TEMPERATURE_API_VERSION:
            return error(
                400, "temperature: Extra inputs are not permitted", "invalid_request_error"
            )
        model = body.get("model")
        if model not in self.known_models:
            return error(404, f"model: {model}", "not_found_error")
        if "temperature" in body and model in self.temperature_rejecting_models:
            return error(400, "temperature is deprecated for this model", "invalid_request_error")
        return None

    def _messages(self, request: RecordedRequest) -> Reply:
        reply = self._messages_reply(request)
        with self._lock:
            self.status_counts[reply.status] = self.status_counts.get(reply.status, 0) + 1
        return reply

    def _messages_reply(self, request: RecordedRequest) -> Reply:
        if self.enforce_rules:
            violation = self._rule_violation(request)
            if violation is not None:
                return violation
        limits: dict[str, str] = {}
        if self.bucket is not None:
            with self._lock:
                allowed, limits = self.bucket.take(self.clock())
            if not allowed:
                limited = rate_limited(0)
                limited.headers = limits
                return limited
        scripted = self._next_scripted()
        reply = scripted if scripted is not None else self.responder(request)
        if limits:
            reply = dataclasses.replace(reply, headers={**limits, **reply.headers})
        return reply

    # -- message batches -------------------------------------------------------------
    def _batch_json(self, batch: FakeBatch) -> dict[str, Any]:
        ended = batch.canceled or time.monotonic() >= batch.ready_at
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if ended:
            for result in batch.results.values():
                counts[result["type"]] += 1
        else:
            counts["processing"] = len(batch.custom_ids)
        return {
            "id": batch.batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + 24 * 3600),
            "ended_at": _iso(time.time()) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": (
                f"{self.url}/v1/messages/batches/{batch.batch_id}/results" if ended else None
            ),
        }

    def _find_batch(self, request: RecordedRequest) -> FakeBatch | None:
        batch_id = request.path.split("/")[4]
        with self._lock:
            return self.batches.get(batch_id)

    def _create_batch(self, request: RecordedRequest) -> Reply:
        headers = request.headers
        if not headers.get("x-api-key") and not headers.get("authorization"):
            return error(401, "invalid x-api-key", "authentication_error")
        body = request.body if isinstance(request.body, dict) else {}
        entries = body.get("requests")
        if not isinstance(entries, list) or not entries:
            return error(400, "requests: must be a non-empty list", "invalid_request_error")
        if len(entries) > MAX_BATCH_REQUESTS:
            return error(400, "requests: too many requests", "invalid_request_error")
        seen: set[str] = set()
        items: list[tuple[str, RecordedRequest]] = []
        for index, entry in enumerate(entries):
            custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID_RE.match(custom_id):
                return error(400, f"requests.{index}.custom_id: invalid", "invalid_request_error")
            if custom_id in seen:
                return error(
                    400,
                    f"requests.{index}.custom_id: duplicate {custom_id}",
                    "invalid_request_error",
                )
            seen.add(custom_id)
            params = entry.get("params")
            item = RecordedRequest("POST", "/v1/messages", headers, params, time.monotonic())
            if (
                self.enforce_rules
                and isinstance(params, dict)
                and "temperature" in params
                and headers.get("anthropic-version", "") != TEMPERATURE_API_VERSION
            ):
                return error(
                    400,
                    f"requests.{index}.params.temperature: Extra inputs are not permitted",
                    "invalid_request_error",
                )
            items.append((custom_id, item))
        results: dict[str, dict[str, Any]] = {}
        with self._lock:
            expire = self.expire_in_next_batch
            self.expire_in_next_batch = 0
            self.batch_items.extend(item for _, item in items)
        for index, (custom_id, item) in enumerate(items):
            if index < expire:
                results[custom_id] = {"type": "expired"}
                continue
            reply = self._messages(item)
            if reply.status >= 400:
                results[custom_id] = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": reply.error_type, "message": reply.message},
                    },
                }
            else:
                results[custom_id] = {
                    "type": "succeeded",
                    "message": self._message_json(reply, item),
                }
        batch = FakeBatch(
            batch_id=f"msgbatch_fake_{next(self._ids)}",
            created_at=time.time(),
            ready_at=time.monotonic() + self.batch_processing_s,
            custom_ids=[c for c, _ in items],
            results=results,
        )
        with self._lock:
            self.batches[batch.batch_id] = batch
        return Reply(body=self._batch_json(batch))

    def _list_batches(self, request: RecordedRequest) -> Reply:
        with self._lock:
            batches = sorted(self.batches.values(), key=lambda b: b.created_at, reverse=True)
        data = [self._batch_json(b) for b in batches]
        return Reply(
            body={
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    def _retrieve_batch(self, request: RecordedRequest) -> Reply:
        batch = self._find_batch(request)
        if batch is None:
            return error(404, f"message_batch not found: {request.path}", "not_found_error")
        return Reply(body=self._batch_json(batch))

    def end_batches(self) -> None:
        """End every batch still processing now (its results become available), so tests
        never wait out ``batch_processing_s``."""
        with self._lock:
            now = time.monotonic()
            for batch in self.batches.values():
                batch.ready_at = min(batch.ready_at, now)

    def cancel_batch(self, batch_id: str) -> None:
        """Cancel a batch still processing: it ends with every request ``canceled``."""
        with self._lock:
            batch = self.batches[batch_id]
            if time.monotonic() < batch.ready_at and not batch.canceled:
                batch.canceled = True
                batch.results = dict.fromkeys(batch.custom_ids, {"type": "canceled"})

    def _cancel_batch(self, request: RecordedRequest) -> Reply:
        batch = self._find_batch(request)
        if batch is None:
            return error(404, f"message_batch not found: {request.path}", "not_found_error")
        self.cancel_batch(batch.batch_id)
        return Reply(body=self._batch_json(batch))

    def _batch_results(self, request: RecordedRequest) -> Reply:
        batch = self._find_batch(request)
        if batch is None:
            return error(404, f"message_batch not found: {request.path}", "not_found_error")
        if not (batch.canceled or time.monotonic() >= batch.ready_at):
            return error(400, "batch has not ended", "invalid_request_error")
        order = list(batch.custom_ids)
        if self.batch_shuffle_seed is not None:
            random.Random(self.batch_shuffle_seed).shuffle(order)
        with self._lock:
            batch.results_downloads += 1
        lines = [json.dumps({"custom_id": cid, "result": batch.results[cid]}) for cid in order]
        return Reply(body=("\n".join(lines) + "\n").encode(), content_type="application/binary")

    def _message_json(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        model = request.body.get("model", "") if isinstance(request.body, dict) else ""
        content = [] if reply.text is None else [{"type": "text", "text": reply.text}]
        return {
            "id": f"msg_fake_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def render(self, reply: Reply, request: RecordedRequest) -> bytes:
        """JSON body for a reply (a Messages response or an error)."""
        if isinstance(reply.body, bytes):
            return reply.body
        if reply.body is not None:
            return json.dumps(reply.body).encode()
        if reply.status >= 400:
            return json.dumps(
                {"type": "error", "error": {"type": reply.error_type, "message": reply.message}}
            ).encode()
        return json.dumps(self._message_json(reply, request)).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: headers and body go out in separate writes; with Nagle's algorithm and
    # the client's delayed ACK every reply would stall ~40 ms.
    disable_nagle_algorithm = True
    fake: FakeAnthropicServer
    _counted = False

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        return

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        path = self.path.split("?", 1)[0]
        request = RecordedRequest(
            method=self.command,
            path=path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            received_at=time.monotonic(),
            raw=raw,
        )
        fake = self.fake
        fake._record(request)
        self._counted = True
        try:
            self._respond(fake, request, path)
        finally:
            self._release(fake)

    def _release(self, fake: FakeAnthropicServer) -> None:
        # Leave the in-flight count before the reply is written, so that the client's next
        # request can never be counted while this one still is.
        if self._counted:
            self._counted = False
            fake._done()

    def _respond(self, fake: FakeAnthropicServer, request: RecordedRequest, path: str) -> None:
        route = fake.routes.get((self.command, path))
        if route is None:
            route = next(
                (
                    handler
                    for method, pattern, handler in fake.pattern_routes
                    if method == self.command and pattern.match(path)
                ),
                None,
            )
        reply = (
            route(request)
            if route
            else error(404, f"no route {self.command} {path}", "not_found_error")
        )
        delay = fake.latency_s + reply.delay_s
        if delay > 0:
            time.sleep(delay)
        self._release(fake)
        if reply.drop:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        payload = fake.render(reply, request)
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", f"req_fake_{id(request):x}")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if reply.drip_s > 0:
            self._drip(payload, reply.drip_s)
            return
        self.wfile.write(payload)

    def _drip(self, payload: bytes, interval_s: float) -> None:
        # One byte at a time until the client gives up (closes) or the body is sent.
        for index in range(len(payload)):
            try:
                self.wfile.write(payload[index : index + 1])
                self.wfile.flush()
            except OSError:
                self.close_connection = True
                return
            time.sleep(interval_s)

    do_POST = _handle
    do_GET = _handle
    do_DELETE = _handle


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """A started :class:`FakeAnthropicServer`, with a fake ``ANTHROPIC_API_KEY`` set.

    ``ANTHROPIC_BASE_URL`` and other credential variables are removed so nothing can
    reach the real API; pass ``server.url`` as ``judge.base_url``.
    """
    for name in (
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_CUSTOM_HEADERS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
    server = FakeAnthropicServer().start()
    try:
        yield server
    finally:
        server.stop()


def make_judge_config(server: FakeAnthropicServer, cache_dir: Any, **overrides: Any) -> Any:
    """A :class:`~locomo_exp.config.JudgeConfig` aimed at ``server`` with test-speed retries.

    Args:
        server: the fake server (its URL becomes ``base_url``).
        cache_dir: directory of the cache file.
        **overrides: any ``JudgeConfig`` field.
    """
    from locomo_exp.config import JudgeConfig

    values: dict[str, Any] = {
        "base_url": server.url,
        "cache_path": str(cache_dir) + "/judge_cache.sqlite",
        "retry_initial_backoff_s": 0.001,
        "retry_max_backoff_s": 0.01,
        "max_retries": 3,
        "timeout_s": 5.0,
        "progress": False,
        "max_concurrency": 8,
    }
    values.update(overrides)
    return JudgeConfig(**values)


def main() -> None:
    """Serve from this process until killed; prints the base URL on stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per reply")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = FakeAnthropicServer(latency_s=args.latency).start(args.port)
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
