"""The HTTP plumbing every fake judge API shares: a real server on 127.0.0.1 in a thread.

:class:`FakeApiServer` records every request (method, path, lower-cased headers, JSON body,
raw bytes), answers through ``routes`` (``(method, path) -> handler``) and
``pattern_routes`` (``(method, regex, handler)``), and injects faults: scripted replies
(``server.script(*replies)``), a ``responder`` for every other request, ``latency_s`` on
every reply, a reply's own ``delay_s``, ``drop`` (close without answering) and ``drip_s``
(the body one byte at a time). ``server.rate_limit(rpm, burst)`` emulates a request token
bucket on ``server.clock``; ``status_counts`` counts the model calls' replies by status.

The API's own parts come from a subclass (``fake_anthropic.FakeAnthropicServer``,
``fake_openai.FakeOpenAIServer``): its routes, its rules (:meth:`~FakeApiServer.rule_violation`),
its bodies (:meth:`~FakeApiServer.success_json`, :meth:`~FakeApiServer.error_json`), its
rate-limit headers (:attr:`~FakeApiServer.bucket_class`) and its batches.

Not a pytest plugin: the fixtures live in the per-API modules.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    import pytest

Handler = Callable[["RecordedRequest"], "Reply"]
S = TypeVar("S", bound="FakeApiServer")


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
        text: reply text of a 200 model response (``None``: no text).
        stop_reason: ``end_turn``, ``max_tokens``, ``refusal``, ...
        error_type: ``error.type`` of an error body.
        message: ``error.message`` of an error body.
        headers: extra response headers (e.g. ``retry-after``).
        body: a full JSON body (dict) or raw ``bytes`` that replaces the generated one.
        delay_s: extra delay before answering, seconds.
        drop: close the connection without answering.
        input_tokens: input tokens of the usage block.
        output_tokens: output tokens of the usage block.
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


def dropped() -> Reply:
    """Close the connection without a response."""
    return Reply(drop=True)


@dataclass
class RequestBucket:
    """A request rate limit: capacity ``burst``, refilled at ``rpm / 60`` per second.

    Subclasses name the API's headers in :meth:`limit_headers`.

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
        headers = self.limit_headers(full_in_s=(self.burst - self.level) / rate)
        if not allowed:
            headers["retry-after"] = f"{(1.0 - self.level) / rate:.3f}"
        return allowed, headers

    def limit_headers(self, full_in_s: float) -> dict[str, str]:
        """The API's rate-limit headers; ``full_in_s``: seconds until the bucket is full."""
        return {}


class FakeApiServer:
    """Threaded HTTP server with request recording and fault injection (module docstring).

    Args:
        latency_s: delay added to every reply, seconds.
        enforce_rules: apply the API's rules (:meth:`rule_violation`) to model calls.
    """

    bucket_class: ClassVar[type[RequestBucket]] = RequestBucket
    """The rate-limit bucket :meth:`rate_limit` makes (it names the API's headers)."""
    model_path: ClassVar[str] = ""
    """The path of a model call (recorded ones are :meth:`messages_requests`)."""
    batch_path: ClassVar[str] = ""
    """The path batches are created at (recorded ones are :meth:`batch_create_requests`)."""

    def __init__(self, *, latency_s: float = 0.0, enforce_rules: bool = True) -> None:
        self.latency_s = latency_s
        self.enforce_rules = enforce_rules
        self.responder: Handler = lambda request: Reply()
        self.routes: dict[tuple[str, str], Handler] = {}
        self.pattern_routes: list[tuple[str, Any, Handler]] = []
        self.batches: dict[str, Any] = {}
        self.batch_items: list[RecordedRequest] = []
        self.batch_processing_s = 0.0
        self.batch_shuffle_seed: int | None = 0
        self.expire_in_next_batch = 0
        self.requests: list[RecordedRequest] = []
        self.clock: Callable[[], float] = time.monotonic
        self.bucket: RequestBucket | None = None
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
        """Queue replies for the next model calls, in arrival order."""
        with self._lock:
            self._script.extend(replies)

    def rate_limit(self, rpm: float, burst: float | None = None) -> None:
        """Emulate a request rate limit of ``rpm`` (bucket capacity ``burst``, default rpm)."""
        capacity = float(burst if burst is not None else rpm)
        self.bucket = self.bucket_class(rpm, capacity, capacity, self.clock())

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self.requests.clear()
            self._script.clear()
            self.batch_items.clear()
            self.max_in_flight = 0

    def messages_requests(self) -> list[RecordedRequest]:
        """Recorded model calls (``POST`` to :attr:`model_path`)."""
        with self._lock:
            return [r for r in self.requests if r.path == self.model_path]

    def batch_create_requests(self) -> list[RecordedRequest]:
        """Recorded batch creates (``POST`` to :attr:`batch_path`, accepted or not)."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path == self.batch_path]

    def end_batches(self) -> None:
        """End every batch still processing now (its results become available), so tests
        never wait out ``batch_processing_s``."""
        with self._lock:
            now = time.monotonic()
            for batch in self.batches.values():
                batch.ready_at = min(batch.ready_at, now)

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
    def start(self: S, port: int = 0) -> S:
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
            name=f"fake-{type(self).__name__}",
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

    # -- what a subclass provides ------------------------------------------------------
    def rule_violation(self, request: RecordedRequest) -> Reply | None:
        """The error the real API gives this model call, or ``None`` (it is allowed)."""
        return None

    def success_json(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        """The body of a 200 model reply."""
        return {"text": reply.text}

    def error_json(self, reply: Reply) -> dict[str, Any]:
        """The body of an error reply without a ``body`` of its own."""
        return {"error": {"type": reply.error_type, "message": reply.message}}

    # -- request handling ------------------------------------------------------------
    def render(self, reply: Reply, request: RecordedRequest) -> bytes:
        """The body's bytes: the reply's own ``body``, else an error or a model reply."""
        if isinstance(reply.body, bytes):
            return reply.body
        if reply.body is not None:
            return json.dumps(reply.body).encode()
        if reply.status >= 400:
            return json.dumps(self.error_json(reply)).encode()
        return json.dumps(self.success_json(reply, request)).encode()

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

    def _messages(self, request: RecordedRequest) -> Reply:
        reply = self._messages_reply(request)
        with self._lock:
            self.status_counts[reply.status] = self.status_counts.get(reply.status, 0) + 1
        return reply

    def _messages_reply(self, request: RecordedRequest) -> Reply:
        if self.enforce_rules:
            violation = self.rule_violation(request)
            if violation is not None:
                return violation
        limits: dict[str, str] = {}
        if self.bucket is not None:
            with self._lock:
                allowed, limits = self.bucket.take(self.clock())
            if not allowed:
                return Reply(
                    status=429,
                    error_type="rate_limit_error",
                    message="Number of requests has exceeded your rate limit.",
                    headers=limits,
                )
        scripted = self._next_scripted()
        reply = scripted if scripted is not None else self.responder(request)
        if limits:
            reply = dataclasses.replace(reply, headers={**limits, **reply.headers})
        return reply

    def _route(self, method: str, path: str) -> Handler | None:
        route = self.routes.get((method, path))
        if route is not None:
            return route
        return next(
            (h for m, pattern, h in self.pattern_routes if m == method and pattern.match(path)),
            None,
        )


def list_json(data: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A list page of both APIs: ``data``, ``has_more`` false, ``first_id``, ``last_id``."""
    return {
        **extra,
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: headers and body go out in separate writes; with Nagle's algorithm and
    # the client's delayed ACK every reply would stall ~40 ms.
    disable_nagle_algorithm = True
    fake: FakeApiServer
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

    def _release(self, fake: FakeApiServer) -> None:
        # Leave the in-flight count before the reply is written, so that the client's next
        # request can never be counted while this one still is.
        if self._counted:
            self._counted = False
            fake._done()

    def _respond(self, fake: FakeApiServer, request: RecordedRequest, path: str) -> None:
        route = fake._route(self.command, path)
        reply = (
            route(request)
            if route
            else Reply(
                status=404, error_type="not_found_error", message=f"no route {self.command} {path}"
            )
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


def serve_fake(
    server_class: type[S],
    monkeypatch: pytest.MonkeyPatch,
    *,
    key_var: str,
    key: str,
    remove: tuple[str, ...],
) -> Iterator[S]:
    """The body of a fake's fixture: a started server, with a fake key set.

    Args:
        server_class: the fake to start.
        monkeypatch: the test's monkeypatch.
        key_var: the SDK's key variable, set to ``key``.
        key: the fake key.
        remove: the SDK's other variables (base URL, credentials), removed so nothing can
            reach the real API.
    """
    for name in remove:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(key_var, key)
    server = server_class().start()
    try:
        yield server
    finally:
        server.stop()


def judge_values(base_url: str, cache_dir: Any, /, **overrides: Any) -> dict[str, Any]:
    """Judge config values aimed at a fake, with test-speed retries.

    Args:
        base_url: the fake's URL as the SDK wants it (``judge.base_url``).
        cache_dir: directory of the cache file.
        **overrides: any ``JudgeConfig`` field.
    """
    values: dict[str, Any] = {
        "base_url": base_url,
        "cache_path": str(cache_dir) + "/judge_cache.sqlite",
        "retry_initial_backoff_s": 0.001,
        "retry_max_backoff_s": 0.01,
        "max_retries": 3,
        "timeout_s": 5.0,
        "progress": False,
        "max_concurrency": 8,
    }
    values.update(overrides)
    return values


def serve_main(server_class: type[FakeApiServer], description: str) -> None:
    """A fake's ``__main__``: serve until killed, printing the SDK's base URL on stdout.

    ``--latency`` seconds per reply, ``--port`` (0: any free one), ``--reply TEXT``: the
    text of every judge reply (default ``{"score": 80, ...}``, which the rubric reads; a
    template or ``judge.protocol=binary`` needs a reply in its own format).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per reply")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--reply",
        default=None,
        help="the reply text to every judge request (default: "
        f"{Reply().text}); e.g. '{{\"label\": \"CORRECT\"}}' for judge.protocol=binary "
        "or a template whose json_key is label",
    )
    args = parser.parse_args()
    server = server_class(latency_s=args.latency).start(args.port)
    if args.reply is not None:  # a reply format the run's protocol or template reads
        text = str(args.reply)
        server.responder = lambda request: Reply(text=text)
    print(getattr(server, "base_url", server.url), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
