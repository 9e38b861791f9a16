"""A fake OpenAI API (Chat Completions, Files, Batches): a real HTTP server on 127.0.0.1.

Built on ``tests/fake_server.py``'s :class:`FakeApiServer` like the Anthropic fake (same
scripting: ``server.script``, ``server.responder``, ``fake_anthropic.verdict_responder``,
``latency_s``, ``status_counts``, ``wait_idle``), with OpenAI's routes, bodies and rules. The real ``openai`` SDK talks to it
through ``base_url=server.base_url`` (``<url>/v1``).

* ``POST /v1/chat/completions``: a ``Reply``'s text becomes ``choices[0].message.content``;
  its stop reason is mapped back (``end_turn`` -> ``stop``, ``max_tokens`` -> ``length``,
  ``refusal`` -> a ``refusal`` message); ``model`` in the response is the snapshot of the
  requested alias (``gpt-4o-mini`` -> ``gpt-4o-mini-2024-07-18``).
* Rules (``enforce_rules``): no ``Authorization: Bearer`` -> 401; a key other than
  ``server.api_key`` (when set) -> 401; an unknown model -> 404 ``model_not_found``; a
  reasoning model (o-series, gpt-5) given ``temperature`` or ``max_tokens`` -> 400.
* ``server.rate_limit(rpm, burst)``: a request token bucket whose state goes out as
  ``x-ratelimit-limit-requests``, ``-remaining-requests`` and ``-reset-requests`` (a
  duration such as ``1.5s`` or ``20ms``); an empty bucket is a 429 with ``retry-after``.
* Files and Batches: ``POST /v1/files`` (multipart, purpose ``batch``) stores a JSONL
  file; ``POST /v1/batches`` answers every line at creation through the same
  script/responder (an error status becomes a line of the error file); the batch is
  ``in_progress`` for ``batch_processing_s`` seconds, then ``completed`` with an output
  file and (if any) an error file. ``expire_in_next_batch = n`` leaves the first ``n``
  lines unprocessed (``batch_expired`` in the error file, batch status ``expired``).
  ``supports_batches = False`` removes ``/v1/batches`` (a local server).
  ``reject_next_batch = [{"code", "message", "line"}, ...]`` fails the next batch at
  validation, as the API does for a bad input file: no line is answered, the batch is
  ``validating`` for ``batch_processing_s``, then ``failed`` with those ``errors`` and
  neither output nor error file.

Run ``python tests/fake_openai.py --latency 0.1`` to serve from a separate process.
"""

from __future__ import annotations

import dataclasses
import email.parser
import email.policy
import json
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

try:  # the fixture is pytest's; serving (``python tests/fake_openai.py``) needs no pytest
    from pytest import fixture
except ImportError:  # the plain install (no '.[test]'): this module only serves

    def fixture(function: Any) -> Any:  # noqa: D103 - stands in for pytest.fixture
        return function


if TYPE_CHECKING:
    import pytest

from fake_server import (
    FakeApiServer,
    RecordedRequest,
    Reply,
    RequestBucket,
    judge_values,
    list_json,
    serve_fake,
    serve_main,
)

FAKE_OPENAI_KEY = "fake-openai-key-for-tests-0000"
SNAPSHOTS = {
    "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
    "gpt-4o-mini-2024-07-18": "gpt-4o-mini-2024-07-18",
    "gpt-4o": "gpt-4o-2024-08-06",
    "gpt-4o-2024-08-06": "gpt-4o-2024-08-06",
    "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
    "gpt-4.1-mini-2025-04-14": "gpt-4.1-mini-2025-04-14",
    "o3-mini": "o3-mini-2025-01-31",
    "gpt-5": "gpt-5-2025-08-07",
    "local-model": "local-model",
}
_FINISH = {"end_turn": "stop", "max_tokens": "length"}


def oa_error(status: int, message: str, code: str = "", error_type: str = "") -> Reply:
    """An OpenAI-style error reply (``{"error": {"message", "type", "code"}}``)."""
    kind = error_type or ("invalid_request_error" if status < 500 else "server_error")
    return Reply(
        status=status,
        body={"error": {"message": message, "type": kind, "param": None, "code": code or None}},
    )


def oa_rate_limited(retry_after: float = 0.05) -> Reply:
    """429 with ``retry-after`` in seconds."""
    reply = oa_error(429, "Rate limit reached for requests", "rate_limit_exceeded")
    return dataclasses.replace(reply, headers={"retry-after": f"{retry_after:g}"})


def oa_server_error() -> Reply:
    """500 internal error."""
    return oa_error(500, "The server had an error while processing your request.")


def duration(seconds: float) -> str:
    """An OpenAI rate-limit duration: ``20ms`` under a second, else ``1.5s`` / ``6m0s``."""
    if seconds < 1.0:
        return f"{max(seconds * 1000.0, 0.0):.0f}ms"
    minutes, rest = divmod(seconds, 60.0)
    return f"{int(minutes)}m{rest:g}s" if minutes else f"{rest:.3g}s"


@dataclass
class OpenAITokenBucket(RequestBucket):
    """The request bucket, reported with OpenAI's ``x-ratelimit-*-requests`` headers."""

    def limit_headers(self, full_in_s: float) -> dict[str, str]:
        return {
            "x-ratelimit-limit-requests": str(int(self.rpm)),
            "x-ratelimit-remaining-requests": str(int(self.level)),
            "x-ratelimit-reset-requests": duration(full_in_s),
        }


@dataclass
class OpenAIBatch:
    """A batch held by the fake: its lines' answers are decided at creation."""

    batch_id: str
    input_file_id: str
    created_at: float
    ready_at: float
    total: int
    output_lines: list[str]
    error_lines: list[str]
    expired: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    output_file_id: str | None = None
    error_file_id: str | None = None
    validation_errors: list[dict[str, Any]] = field(default_factory=list)


def is_reasoning(model: str) -> bool:
    return bool(re.match(r"^(o\d|gpt-5)", model))


class FakeOpenAIServer(FakeApiServer):
    """Threaded HTTP server imitating the OpenAI API (see module docstring)."""

    bucket_class = OpenAITokenBucket
    model_path = "/v1/chat/completions"
    batch_path = "/v1/batches"

    def __init__(self, *, latency_s: float = 0.0, enforce_rules: bool = True) -> None:
        super().__init__(latency_s=latency_s, enforce_rules=enforce_rules)
        self.known_models = set(SNAPSHOTS)
        self.api_key: str | None = None
        self.serve_as: str | None = None  # a proxy answering as another model
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, OpenAIBatch] = {}
        self.routes = {("POST", "/v1/chat/completions"): self._messages}
        self.pattern_routes = [
            ("GET", re.compile(r"^/v1/files/[^/]+/content$"), self._file_content),
        ]
        self.supports_batches = True
        self.reject_next_batch: list[dict[str, Any]] = []
        self.send_usage = True  # False: replies carry no "usage" (some compatible servers)

    @property
    def supports_batches(self) -> bool:
        return ("POST", "/v1/batches") in self.routes

    @supports_batches.setter
    def supports_batches(self, value: bool) -> None:
        batch_routes = {
            ("POST", "/v1/files"): self._upload,
            ("POST", "/v1/batches"): self._create_oa_batch,
            ("GET", "/v1/batches"): self._list_oa_batches,
        }
        patterns = [
            ("GET", re.compile(r"^/v1/batches/[^/]+$"), self._retrieve_oa_batch),
            ("POST", re.compile(r"^/v1/batches/[^/]+/cancel$"), self._retrieve_oa_batch),
        ]
        for key, handler in batch_routes.items():
            if value:
                self.routes[key] = handler
            else:
                self.routes.pop(key, None)
        self.pattern_routes = [p for p in self.pattern_routes if "batches" not in p[1].pattern]
        if value:
            self.pattern_routes.extend(patterns)

    @property
    def base_url(self) -> str:
        """The URL to give the SDK (``<url>/v1``)."""
        return f"{self.url}/v1"

    def batch_requests_submitted(self) -> int:
        with self._lock:
            return sum(b.total for b in self.batches.values())

    # -- rules and bodies ----------------------------------------------------------------
    def rule_violation(self, request: RecordedRequest) -> Reply | None:
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            return oa_error(401, "You didn't provide an API key.", "missing_api_key")
        if self.api_key is not None and auth[7:] != self.api_key:
            return oa_error(401, "Incorrect API key provided.", "invalid_api_key")
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model"))
        if model not in self.known_models:
            return oa_error(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                "model_not_found",
            )
        if is_reasoning(model) and "temperature" in body:
            return oa_error(
                400,
                "Unsupported parameter: 'temperature' is not supported with this model.",
                "unsupported_parameter",
            )
        if is_reasoning(model) and "max_tokens" in body:
            return oa_error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "unsupported_parameter",
            )
        return None

    def success_json(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        model = str(request.body.get("model", "")) if isinstance(request.body, dict) else ""
        message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
        finish = _FINISH.get(reply.stop_reason, reply.stop_reason)
        if reply.stop_reason == "refusal":
            message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
            finish = "stop"
        body: dict[str, Any] = {
            "id": f"chatcmpl-fake{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.serve_as or SNAPSHOTS.get(model, model),
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            },
            "system_fingerprint": "fp_fake",
        }
        if not self.send_usage:
            del body["usage"]
        return body

    def error_json(self, reply: Reply) -> dict[str, Any]:
        return {"error": {"message": reply.message, "type": reply.error_type, "code": None}}

    # -- files -------------------------------------------------------------------------
    def _upload(self, request: RecordedRequest) -> Reply:
        ctype = request.headers.get("content-type", "")
        parsed = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + request.raw
        )
        content = b""
        purpose = ""
        for part in parsed.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if name == "file":
                content = payload
            elif name == "purpose":
                purpose = payload.decode()
        if purpose != "batch" or not content:
            return oa_error(400, "file and purpose=batch are required")
        file_id = f"file-fake{next(self._ids)}"
        with self._lock:
            self.files[file_id] = content
        return Reply(
            body={
                "id": file_id,
                "object": "file",
                "bytes": len(content),
                "created_at": int(time.time()),
                "filename": "judge_batch.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        )

    def _file_content(self, request: RecordedRequest) -> Reply:
        file_id = request.path.split("/")[3]
        with self._lock:
            content = self.files.get(file_id)
        if content is None:
            return oa_error(404, f"No such File object: {file_id}")
        return Reply(body=content, content_type="application/octet-stream")

    # -- batches -----------------------------------------------------------------------
    def _create_oa_batch(self, request: RecordedRequest) -> Reply:
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return oa_error(401, "You didn't provide an API key.", "missing_api_key")
        body = request.body if isinstance(request.body, dict) else {}
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return oa_error(400, "endpoint or completion_window invalid")
        with self._lock:
            content = self.files.get(str(body.get("input_file_id")))
            expire = self.expire_in_next_batch
            self.expire_in_next_batch = 0
        if content is None:
            return oa_error(400, "input_file_id not found")
        with self._lock:
            rejected, self.reject_next_batch = self.reject_next_batch, []
        if rejected:  # failed at validation: no line is answered
            batch = OpenAIBatch(
                batch_id=f"batch_fake{next(self._ids)}",
                input_file_id=str(body["input_file_id"]),
                created_at=time.time(),
                ready_at=time.monotonic() + self.batch_processing_s,
                total=0,
                output_lines=[],
                error_lines=[],
                metadata=dict(body.get("metadata") or {}),
                validation_errors=[{"param": None, **e} for e in rejected],
            )
            with self._lock:
                self.batches[batch.batch_id] = batch
            return Reply(body=self._oa_batch_json(batch))
        output: list[str] = []
        errors: list[str] = []
        seen: set[str] = set()
        lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        for index, line in enumerate(lines):
            custom_id = line.get("custom_id")
            if custom_id in seen or line.get("url") != "/v1/chat/completions":
                return oa_error(400, f"line {index + 1}: duplicate custom_id or bad url")
            seen.add(custom_id)
            item = RecordedRequest(
                "POST", "/v1/chat/completions", request.headers, line.get("body"), time.monotonic()
            )
            with self._lock:
                self.batch_items.append(item)
            head = {"id": f"batch_req_{index}", "custom_id": custom_id}
            if index < expire:
                expired = {"code": "batch_expired", "message": "not completed within 24h"}
                errors.append(json.dumps({**head, "response": None, "error": expired}))
                continue
            reply = self._messages(item)
            body_json = json.loads(self.render(reply, item))
            response = {"status_code": reply.status, "request_id": "r", "body": body_json}
            into = errors if reply.status >= 400 else output
            into.append(json.dumps({**head, "response": response, "error": None}))
        if self.batch_shuffle_seed is not None:
            random.Random(self.batch_shuffle_seed).shuffle(output)
        batch = OpenAIBatch(
            batch_id=f"batch_fake{next(self._ids)}",
            input_file_id=str(body["input_file_id"]),
            created_at=time.time(),
            ready_at=time.monotonic() + self.batch_processing_s,
            total=len(lines),
            output_lines=output,
            error_lines=errors,
            expired=expire > 0,
            metadata=dict(body.get("metadata") or {}),
        )
        with self._lock:
            self.batches[batch.batch_id] = batch
        return Reply(body=self._oa_batch_json(batch))

    def _store_lines(self, prefix: str, lines: list[str]) -> str | None:
        """Store ``lines`` as a JSONL file (caller holds the lock); its id, ``None`` if empty."""
        if not lines:
            return None
        file_id = f"{prefix}{next(self._ids)}"
        self.files[file_id] = ("\n".join(lines) + "\n").encode()
        return file_id

    def _oa_batch_json(self, batch: OpenAIBatch) -> dict[str, Any]:
        ended = time.monotonic() >= batch.ready_at
        if ended and batch.output_file_id is None and batch.error_file_id is None:
            with self._lock:
                batch.output_file_id = self._store_lines("file-out", batch.output_lines)
                batch.error_file_id = self._store_lines("file-err", batch.error_lines)
        failed = sum(1 for line in batch.error_lines if '"batch_expired"' not in line)
        status = ("expired" if batch.expired else "completed") if ended else "in_progress"
        errors = None
        if batch.validation_errors:
            status = "failed" if ended else "validating"
            errors = {"object": "list", "data": batch.validation_errors} if ended else None
        now = int(time.time())
        return {
            "id": batch.batch_id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": errors,
            "failed_at": now if ended and errors else None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file_id if ended else None,
            "error_file_id": batch.error_file_id if ended else None,
            "created_at": int(batch.created_at),
            "in_progress_at": int(batch.created_at),
            "expires_at": int(batch.created_at) + 24 * 3600,
            "completed_at": now if ended and not batch.expired and not errors else None,
            "expired_at": now if ended and batch.expired else None,
            "request_counts": {
                "total": batch.total,
                "completed": len(batch.output_lines) if ended else 0,
                "failed": failed if ended else 0,
            },
            "metadata": batch.metadata,
        }

    def _list_oa_batches(self, request: RecordedRequest) -> Reply:
        with self._lock:
            batches = sorted(self.batches.values(), key=lambda b: b.created_at, reverse=True)
        return Reply(body=list_json([self._oa_batch_json(b) for b in batches], object="list"))

    def _retrieve_oa_batch(self, request: RecordedRequest) -> Reply:
        batch_id = request.path.split("/")[3]
        with self._lock:
            batch = self.batches.get(batch_id)
        if batch is None:
            return oa_error(404, f"No batch found with id '{batch_id}'.")
        return Reply(body=self._oa_batch_json(batch))


@fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer`, with a fake ``OPENAI_API_KEY`` set.

    ``OPENAI_BASE_URL`` and other OpenAI variables are removed so nothing can reach the
    real API; pass ``server.base_url`` as ``judge.base_url``.
    """
    yield from serve_fake(
        FakeOpenAIServer,
        monkeypatch,
        key_var="OPENAI_API_KEY",
        key=FAKE_OPENAI_KEY,
        remove=("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_WEBHOOK_SECRET"),
    )


def openai_judge_config(
    server: FakeOpenAIServer, cache_dir: Any, preset: str = "gpt-4o-mini", **overrides: Any
) -> Any:
    """A judge config from a shipped preset, aimed at ``server``, with test-speed retries."""
    from omegaconf import OmegaConf

    from locomo_exp.config import JudgeConfig
    from locomo_exp.trust.job import panel_preset_config

    base = panel_preset_config(JudgeConfig(), preset)
    values = judge_values(server.base_url, cache_dir, **overrides)
    merged = OmegaConf.merge(OmegaConf.structured(base), values)
    cfg = OmegaConf.to_object(merged)
    assert isinstance(cfg, JudgeConfig)
    return cfg


if __name__ == "__main__":
    serve_main(FakeOpenAIServer, __doc__.splitlines()[0])
