"""The LLM runtime (``locomo_exp.llm``) knows no verdicts: it loads no judge code, and its pool
and batch mode turn replies into whatever results the caller's reader makes (here a reader
that knows nothing of scores), against the fake Anthropic server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config
from fake_server import Reply
from judge_helpers import make_records

from locomo_exp.config import JudgeBatchConfig, JudgeMode
from locomo_exp.judge.calls import build_call_specs
from locomo_exp.llm.batch import judge_batch_async
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.llm.messages import JudgeReply
from locomo_exp.llm.pool import JudgePool
from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient

RUNTIME_MODULES = (
    "locomo_exp.llm.pool", "locomo_exp.llm.batch", "locomo_exp.llm.session",
    "locomo_exp.llm.cache.__main__", "locomo_exp.llm.providers.anthropic",
    "locomo_exp.llm.providers.openai", "locomo_exp.llm.spend", "locomo_exp.llm.progress",
)  # fmt: skip


@dataclass(frozen=True)
class Echo:
    """A result that knows no verdicts: the reply's text and what the runtime reads."""

    outcome: str
    run: int
    text: str = ""
    cached: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    unparsed_scored: bool = False


@dataclass
class EchoReader:
    """A :class:`~locomo_exp.llm.calls.ReplyReader` of :class:`Echo`, counting its calls."""

    calls: list[str]

    def read(self, reply: JudgeReply, run: int, *, cached: bool) -> Echo:
        self.calls.append("read")
        return Echo("valid", run, reply.text, cached, reply.input_tokens, reply.output_tokens)

    def failed(self, run: int, error: str) -> Echo:
        self.calls.append("failed")
        return Echo("api_error", run, error)

    def no_verdict(self, reply: JudgeReply, run: int, attempts: int) -> Echo:
        self.calls.append("no_verdict")
        return Echo("no_verdict", run, reply.text)

    def with_run(self, result: Echo, run: int) -> Echo:
        self.calls.append("with_run")
        return replace(result, run=run)


def client_for(server: FakeAnthropicServer) -> AnthropicJudgeClient:
    return AnthropicJudgeClient(api_key="dummy-key-123", temperature=0.0, base_url=server.url)


@pytest.mark.slow
def test_the_runtime_loads_no_judge_trust_data_or_output_module() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for name in {RUNTIME_MODULES!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[:2] in ("
        "['locomo_exp', 'judge'], ['locomo_exp', 'trust'], ['locomo_exp', 'report'], "
        "['locomo_exp', 'tracking'], ['locomo_exp', 'data']))))\n"
    )  # (scoring.specs is loaded by config.schema: the metric registry, docs/development.md)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    assert json.loads(out.stdout) == []


def test_the_pool_returns_the_readers_results_fresh_then_from_the_cache(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    too_long = Reply(
        status=400, error_type="invalid_request_error",
        message="prompt is too long: 212345 tokens > 200000 maximum",
    )  # fmt: skip
    fake_anthropic.script(too_long)  # the canary: this call's API error, the pool goes on
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2, max_concurrency=2)
    specs = build_call_specs(make_records(3), cfg, api_version="2023-06-01")
    reader = EchoReader([])

    sent: list[int] = []  # requests the fake received after each pool

    async def go() -> tuple[dict[tuple[str, int], Echo], dict[tuple[str, int], Echo]]:
        client = client_for(fake_anthropic)
        try:
            with JudgeCache(tmp_path / "judge_cache.sqlite") as cache:
                pool = JudgePool(client, cfg, cache, reader=reader, handle_signals=False)
                first = await pool.run(specs)
                sent.append(len(fake_anthropic.messages_requests()))
                again = JudgePool(client, cfg, cache, reader=reader, handle_signals=False)
                second = await again.run(specs)
                sent.append(len(fake_anthropic.messages_requests()))
                return first, second
        finally:
            await client.aclose()

    first, again = asyncio.run(go())
    keys = [(s.question_id, s.run) for s in specs]
    assert sorted(first) == sorted(keys) and all(type(r) is Echo for r in first.values())
    canary = first[keys[0]]
    assert (canary.outcome, canary.run) == ("api_error", 0)
    assert canary.text == "400 prompt_too_long: prompt is too long: 212345 tokens > 200000 maximum"
    fresh = [first[k] for k in keys[1:]]
    assert [(r.outcome, r.cached, r.run) for r in fresh] == [
        ("valid", False, run) for _, run in keys[1:]
    ]
    assert {r.text for r in fresh} == {'{"score": 80, "explanation": "Matches the gold answer."}'}
    assert sent == [6, 7]  # 1 refused + 5 answered; then only the refused one again
    # the second pool pays only for the refused call; the 5 stored replies are read back
    assert [again[k].cached for k in keys] == [False] + [True] * 5
    assert again[keys[0]].outcome == "valid"
    assert reader.calls.count("failed") == 1 and reader.calls.count("read") == 5 + 6


def test_batch_mode_returns_the_readers_results_the_canary_given_its_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(
        fake_anthropic, tmp_path, runs=2, mode=JudgeMode.batch,
        batch=JudgeBatchConfig(poll_interval_s=0.02, max_poll_interval_s=0.1),
    )  # fmt: skip
    specs = build_call_specs(make_records(3), cfg, api_version="2023-06-01")
    reader = EchoReader([])

    async def go() -> dict[tuple[str, int], Echo]:
        client = client_for(fake_anthropic)
        try:
            with JudgeCache(tmp_path / "judge_cache.sqlite") as cache:
                results, info = await judge_batch_async(
                    specs, cfg, cache=cache, reader=reader, client=client
                )
        finally:
            await client.aclose()
        assert (info.realtime_calls, info.requests_submitted) == (1, 5)
        return results

    results = asyncio.run(go())
    keys = [(s.question_id, s.run) for s in specs]
    assert [(results[k].outcome, results[k].run) for k in keys] == [("valid", r) for _, r in keys]
    assert all(type(r) is Echo and not r.cached for r in results.values())
    assert len(fake_anthropic.messages_requests()) == 1  # the canary; the rest in one batch
    assert reader.calls.count("with_run") == 1  # the canary's reply, given its spec's run
    assert reader.calls.count("read") == 1 + 5 and "failed" not in reader.calls
