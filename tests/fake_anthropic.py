"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 in a background thread.

The HTTP plumbing (request recording, ``server.script(*replies)``, ``server.responder``,
``latency_s``, dropped and dripping replies, ``rate_limit(rpm, burst)``, ``status_counts``,
routes) is ``tests/fake_server.py``'s :class:`FakeApiServer`; this module adds the Messages
API. The real ``anthropic`` SDK talks to it through ``base_url`` (respx does not intercept
the SDK's ``httpx2`` transport; docs/field_notes.md §4).

* Verdicts per prompt: ``server.responder = verdict_responder(decide)`` with
  ``decide(JudgedItem) -> bool | score`` (``accept_all()``, ``replay_truth()``,
  ``per_model({...})`` are ready-made).
* Rules (``enforce_rules``): a ``temperature`` in the body with an ``anthropic-version``
  other than 2023-06-01 is a 400, an unknown model a 404, a temperature for a model that
  rejects one a 400, and a request without credentials a 401.
* Rate limits: every Messages reply carries ``anthropic-ratelimit-requests-limit``,
  ``-remaining`` and ``-reset`` (RFC 3339, when the bucket is full again); an empty bucket
  is a 429 with ``retry-after`` (seconds until one token).
* Message Batches (``/v1/messages/batches``: create, list, retrieve, results, cancel): each
  request of a created batch is answered at creation by the same script/responder as a
  realtime call (a reply with an error status becomes an ``errored`` entry), and the batch
  ends ``server.batch_processing_s`` seconds later. Results are served as JSONL in a
  shuffled order (``server.batch_shuffle_seed``); ``server.expire_in_next_batch = n`` makes
  the first ``n`` requests of the next batch ``expired``; ``POST .../cancel`` ends a batch
  with its requests ``canceled``. Created batches are in ``server.batches``; batch creates
  are not in ``messages_requests()``.

Run ``python tests/fake_anthropic.py --latency 0.1`` to serve from a separate process
(prints the URL on stdout); the benchmark does this.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

try:  # the fixture is pytest's; serving (``python tests/fake_anthropic.py``) needs no pytest
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
    dripping,
    dropped,
    judge_values,
    list_json,
    serve_fake,
    serve_main,
)

__all__ = ["RecordedRequest", "Reply", "dripping", "dropped"]  # re-exported for the tests

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
class TokenBucket(RequestBucket):
    """The request bucket, reported with the ``anthropic-ratelimit-requests-*`` headers
    (``-reset``: RFC 3339, when the bucket is full again)."""

    def limit_headers(self, full_in_s: float) -> dict[str, str]:
        reset = datetime.fromtimestamp(time.time() + full_in_s, timezone.utc)
        return {
            "anthropic-ratelimit-requests-limit": str(int(self.rpm)),
            "anthropic-ratelimit-requests-remaining": str(int(self.level)),
            "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
        }


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
    polls: int = 0


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


class FakeAnthropicServer(FakeApiServer):
    """Threaded HTTP server imitating the Messages API (see module docstring).

    Args:
        latency_s: delay added to every reply, seconds.
        enforce_rules: apply the real API's version/model/temperature/auth rules.
    """

    bucket_class = TokenBucket
    model_path = "/v1/messages"
    batch_path = "/v1/messages/batches"

    def __init__(self, *, latency_s: float = 0.0, enforce_rules: bool = True) -> None:
        super().__init__(latency_s=latency_s, enforce_rules=enforce_rules)
        self.known_models: set[str] = set(KNOWN_MODELS)
        self.temperature_rejecting_models: set[str] = set(TEMPERATURE_REJECTING_MODELS)
        self.serve_as: str | None = None  # a proxy answering as another model
        self.routes = {
            ("POST", "/v1/messages"): self._messages,
            ("POST", "/v1/messages/batches"): self._create_batch,
            ("GET", "/v1/messages/batches"): self._list_batches,
        }
        self.pattern_routes = [
            ("GET", re.compile(r"^/v1/messages/batches/[^/]+$"), self._retrieve_batch),
            ("GET", re.compile(r"^/v1/messages/batches/[^/]+/results$"), self._batch_results),
            ("POST", re.compile(r"^/v1/messages/batches/[^/]+/cancel$"), self._cancel_batch),
        ]
        self.batches: dict[str, FakeBatch] = {}
        # a batch processing ends at its n-th retrieve (a batch that stays "in progress"
        # until told, told by the client's own polls: no wall clock in tests)
        self.end_batches_after_polls: int | None = None

    def batch_requests_submitted(self) -> int:
        """Requests in all accepted batches."""
        with self._lock:
            return sum(len(b.custom_ids) for b in self.batches.values())

    def rule_violation(self, request: RecordedRequest) -> Reply | None:
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
                    "message": self.success_json(reply, item),
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
        return Reply(body=list_json([self._batch_json(b) for b in batches]))

    def _retrieve_batch(self, request: RecordedRequest) -> Reply:
        batch = self._find_batch(request)
        if batch is None:
            return error(404, f"message_batch not found: {request.path}", "not_found_error")
        with self._lock:
            batch.polls += 1
            if self.end_batches_after_polls is not None and (
                batch.polls >= self.end_batches_after_polls
            ):
                batch.ready_at = min(batch.ready_at, time.monotonic())
        return Reply(body=self._batch_json(batch))

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

    def success_json(self, reply: Reply, request: RecordedRequest) -> dict[str, Any]:
        model = request.body.get("model", "") if isinstance(request.body, dict) else ""
        content = [] if reply.text is None else [{"type": "text", "text": reply.text}]
        return {
            "id": f"msg_fake_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": self.serve_as or model,
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def error_json(self, reply: Reply) -> dict[str, Any]:
        return {"type": "error", "error": {"type": reply.error_type, "message": reply.message}}


@fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """A started :class:`FakeAnthropicServer`, with a fake ``ANTHROPIC_API_KEY`` set.

    ``ANTHROPIC_BASE_URL`` and other credential variables are removed so nothing can
    reach the real API; pass ``server.url`` as ``judge.base_url``.
    """
    yield from serve_fake(
        FakeAnthropicServer,
        monkeypatch,
        key_var="ANTHROPIC_API_KEY",
        key=FAKE_API_KEY,
        remove=(
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_PROFILE",
            "ANTHROPIC_CUSTOM_HEADERS",
        ),
    )


def make_judge_config(server: FakeAnthropicServer, cache_dir: Any, **overrides: Any) -> Any:
    """A :class:`~locomo_exp.config.JudgeConfig` aimed at ``server`` with test-speed retries.

    Args:
        server: the fake server (its URL becomes ``base_url``).
        cache_dir: directory of the cache file.
        **overrides: any ``JudgeConfig`` field.
    """
    from locomo_exp.config import JudgeConfig

    return JudgeConfig(**judge_values(server.url, cache_dir, **overrides))


if __name__ == "__main__":
    serve_main(FakeAnthropicServer, __doc__.splitlines()[0])
