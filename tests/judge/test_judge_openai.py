"""judge.provider=openai against a fake Chat Completions / Batch API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
from pathlib import Path

import pytest
from fake_anthropic import JudgedItem, text, verdict_responder
from fake_openai import (
    FAKE_OPENAI_KEY,
    FakeOpenAIServer,
    oa_rate_limited,
    oa_server_error,
    openai_judge_config,
)
from judge_helpers import make_records

from locomo_exp.judge import JudgeError, JudgeFatalAPIError, run_judge
from locomo_exp.llm.cache import CacheKey
from locomo_exp.llm.errors import JudgeJobStopped
from locomo_exp.llm.providers import PROVIDERS, endpoint
from locomo_exp.llm.providers.openai import parse_duration, parse_rate_limit_headers


def accepts_even(item: JudgedItem) -> bool:
    return int(item.question.split()[-1].rstrip("?")) % 2 == 0


def judge(records, cfg, tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_judge(records, cfg, start_dir=tmp_path)


def test_sync_run_sends_chat_completions_and_reports_provider_and_snapshot(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = verdict_responder(accepts_even, "binary")
    cfg = openai_judge_config(fake_openai, tmp_path, protocol="binary", runs=2, temperature=0.0)
    records = make_records(8)
    result = judge(records, cfg, tmp_path)

    # 4 of 8 questions accepted (even weeks), every run valid
    assert result.summary["j"]["overall"]["mean"] == pytest.approx(50.0)
    assert result.summary["counts"]["valid"] == 16
    requests = fake_openai.messages_requests()
    assert len(requests) == 16
    body = requests[0].body
    assert body["model"] == "gpt-4o-mini-2024-07-18"
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == cfg.max_tokens
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert requests[0].headers["authorization"] == f"Bearer {FAKE_OPENAI_KEY}"
    summary = result.summary
    assert summary["provider"] == "openai"
    assert summary["endpoint"] == fake_openai.base_url
    assert summary["endpoint_kind"] == "custom"
    assert summary["model_snapshot"] == "gpt-4o-mini-2024-07-18"
    assert FAKE_OPENAI_KEY not in json.dumps(summary)
    # price of the preset: $0.15 / $0.60 per million tokens; the fake bills 420 in, 24 out
    expected = 16 * (420 * 0.15 + 24 * 0.60) / 1e6
    assert summary["estimated_cost_usd"] == pytest.approx(expected)

    fake_openai.clear()
    again = judge(records, cfg, tmp_path)
    assert fake_openai.requests == []  # the durable cache answers every call
    assert again.summary["j"] == summary["j"]


def test_cache_keys_of_anthropic_are_unchanged_and_openai_keys_differ() -> None:
    fields = dict(
        model="m", api_version="v", temperature=0.5, protocol="rubric", prompt_version="p",
        max_tokens=256, structured_output=True, question="q", ground_truth="g",
        prediction="a", category=1, run_index=0,
    )
    anthropic_key = CacheKey(**fields)  # type: ignore[arg-type]
    assert "provider" not in json.loads(anthropic_key.fields_json())
    # the digest of these fields before providers existed (computed on main at 6c2dbd0)
    assert anthropic_key.digest() == CacheKey(**fields, provider="anthropic").digest()  # type: ignore[arg-type]
    openai_key = CacheKey(**fields, provider="openai")  # type: ignore[arg-type]
    assert json.loads(openai_key.fields_json())["provider"] == "openai"
    assert openai_key.digest() != anthropic_key.digest()


def test_rate_limit_durations_and_headers() -> None:
    assert parse_duration("1s") == 1.0
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert parse_duration("soon") is None
    info = parse_rate_limit_headers(
        {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "499",
            "x-ratelimit-reset-requests": "120ms",
        }
    )
    assert info is not None
    assert (info.limit, info.remaining, info.reset_in_s) == (500, 499, pytest.approx(0.12))


def test_faults_are_retried_nothing_lost_nothing_paid_twice(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.script(
        text('{"score": 100, "explanation": "ok"}'),
        oa_rate_limited(0.01),
        oa_server_error(),
        oa_rate_limited(0.01),
    )
    cfg = openai_judge_config(fake_openai, tmp_path, runs=1, max_concurrency=2)
    result = judge(make_records(6), cfg, tmp_path)
    assert result.summary["counts"]["valid"] == 6
    assert result.summary["counts"]["api_error"] == 0
    assert result.summary["counts"]["calls_made"] == 9  # 6 answers + 3 faults
    assert fake_openai.status_counts == {200: 6, 429: 2, 500: 1}


def test_parse_failure_api_error_and_low_score_stay_apart(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.script(
        text('{"score": 0, "explanation": "wrong"}'),
        text("I would rather not say."),
        *[oa_server_error()] * 4,
    )
    cfg = openai_judge_config(
        fake_openai, tmp_path, runs=1, max_concurrency=1, max_retries=3, max_error_rate=1.0
    )
    result = judge(make_records(3), cfg, tmp_path)
    outcomes = [a.runs[0].outcome for a in result.per_question.values()]
    scores = [a.runs[0].score for a in result.per_question.values()]
    assert outcomes == ["valid", "parse_failure", "api_error"]
    assert scores == [0.0, None, None]


def test_401_stops_after_one_call_naming_the_variable(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.api_key = "another-key"
    cfg = openai_judge_config(fake_openai, tmp_path, runs=3)
    with pytest.raises(JudgeFatalAPIError, match="OPENAI_API_KEY") as info:
        judge(make_records(5), cfg, tmp_path)
    assert info.value.status_code == 401
    assert len(fake_openai.messages_requests()) == 1
    assert FAKE_OPENAI_KEY not in str(info.value)


def test_unknown_model_404_stops_after_one_call(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    cfg = openai_judge_config(fake_openai, tmp_path, model="gpt-4o-mini-2099-01-01")
    with pytest.raises(JudgeFatalAPIError, match="gpt-4o-mini-2099-01-01") as info:
        judge(make_records(5), cfg, tmp_path)
    assert info.value.status_code == 404
    assert len(fake_openai.messages_requests()) == 1


def test_endpoint_that_does_not_answer_stops_at_once(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = openai_judge_config(fake_openai, tmp_path, base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(JudgeJobStopped) as info:
        judge(make_records(5), cfg, tmp_path)
    message = str(info.value)
    assert f"http://127.0.0.1:{port}/v1" in message
    assert "OPENAI_BASE_URL" in message
    assert "\n" not in message


def test_reasoning_model_takes_max_completion_tokens_and_no_temperature(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    cfg = openai_judge_config(fake_openai, tmp_path, model="gpt-5", temperature=None, runs=1)
    result = judge(make_records(2), cfg, tmp_path)
    assert result.summary["counts"]["valid"] == 2
    body = fake_openai.messages_requests()[0].body
    assert "temperature" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == cfg.max_tokens
    with_temperature = openai_judge_config(fake_openai, tmp_path, model="o3-mini", temperature=0.0)
    with pytest.raises(JudgeError, match="reasoning model and accepts no temperature"):
        judge(make_records(2), with_temperature, tmp_path)


def test_bad_input_is_one_line_before_any_call(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = openai_judge_config(fake_openai, tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(JudgeError, match="OPENAI_API_KEY is not set") as info:
        judge(make_records(2), cfg, tmp_path)
    assert "\n" not in str(info.value)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "openai" else real_find_spec(name, *a),
    )
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    with pytest.raises(JudgeError, match=r"pip install 'locomo_exp\[openai\]'"):
        judge(make_records(2), cfg, tmp_path)
    assert fake_openai.requests == []


def test_local_server_without_key(
    fake_openai: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    cfg = openai_judge_config(
        fake_openai, tmp_path, preset="openai-compatible", model="local-model", api_key_env=None
    )
    result = judge(make_records(2), cfg, tmp_path)
    assert result.summary["counts"]["valid"] == 2 * cfg.runs
    assert result.summary["estimated_cost_usd"] is None  # no price: unknown, never 0
    assert "response_format" not in fake_openai.messages_requests()[0].body


def test_dry_run_prices_with_the_preset_and_unknown_without(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    server = fake_openai
    records = make_records(10)
    cfg = openai_judge_config(server, tmp_path, dry_run=True, runs=3)
    estimate = judge(records, cfg, tmp_path).summary["dry_run_estimate"]
    assert estimate["calls_to_make"] == 30
    expected = (
        estimate["estimated_input_tokens"] * 0.15 + estimate["estimated_output_tokens"] * 0.60
    ) / 1e6
    assert estimate["estimated_cost_usd"] == pytest.approx(expected)
    local = openai_judge_config(server, tmp_path, preset="openai-compatible", model="x", dry_run=True)
    assert judge(records, local, tmp_path).summary["dry_run_estimate"]["estimated_cost_usd"] is None
    assert server.requests == []


def test_endpoint_is_default_or_custom_never_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from locomo_exp.config import JudgeConfig

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    cfg = JudgeConfig(provider="openai", model="gpt-4o-mini")
    assert endpoint(cfg) == {
        "provider": "openai",
        "api": PROVIDERS["openai"].title,
        "endpoint": "https://api.openai.com/v1",
        "endpoint_kind": "default",
    }
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert endpoint(cfg)["endpoint"] == "http://localhost:11434/v1"
    assert endpoint(cfg)["endpoint_kind"] == "custom"


# -- batch mode -----------------------------------------------------------------------


def test_batch_mode_through_the_batch_api_gives_the_same_j(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = verdict_responder(accepts_even, "binary")
    records = make_records(10)
    realtime = judge(
        records, openai_judge_config(fake_openai, tmp_path / "rt", protocol="binary", runs=2),
        tmp_path,
    )
    fake_openai.clear()
    cfg = openai_judge_config(
        fake_openai, tmp_path / "b", protocol="binary", runs=2, mode="batch",
        batch={"poll_interval_s": 0.01, "max_poll_interval_s": 0.01},
    )
    result = judge(records, cfg, tmp_path)
    assert result.summary["j"]["overall"]["mean"] == realtime.summary["j"]["overall"]["mean"]
    assert result.summary["counts"]["valid"] == 20
    (create,) = fake_openai.batch_create_requests()
    assert create.body["endpoint"] == "/v1/chat/completions"
    assert create.body["completion_window"] == "24h"
    assert fake_openai.batch_requests_submitted() == 19  # the canary went realtime
    upload = next(iter(fake_openai.files.values()))
    line = json.loads(upload.decode().splitlines()[0])
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert line["body"]["model"] == "gpt-4o-mini-2024-07-18"
    # batch replies at half the list price
    batch_tokens = result.summary["tokens"]
    assert batch_tokens["batch_input"] == 19 * 420
    fake_openai.clear()
    judge(records, cfg, tmp_path)
    assert fake_openai.requests == []


def test_batch_expired_lines_are_errors_now_and_resubmitted_next_run(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.expire_in_next_batch = 3
    cfg = openai_judge_config(
        fake_openai, tmp_path, runs=1, mode="batch", max_error_rate=1.0,
        batch={"poll_interval_s": 0.01, "max_poll_interval_s": 0.01, "canary": False},
    )
    records = make_records(8)
    first = judge(records, cfg, tmp_path)
    assert first.summary["counts"]["valid"] == 5
    assert first.summary["counts"]["api_error"] == 3
    assert first.summary["batch"]["results"]["expired"] == 3
    second = judge(records, cfg, tmp_path)
    assert second.summary["counts"]["valid"] == 8
    assert fake_openai.batch_requests_submitted() == 8 + 3


def test_server_without_batch_api_is_one_line_before_anything_is_submitted(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.supports_batches = False
    cfg = openai_judge_config(fake_openai, tmp_path, mode="batch")
    with pytest.raises(JudgeError, match="has no Batch API") as info:
        judge(make_records(4), cfg, tmp_path)
    assert "\n" not in str(info.value)
    assert fake_openai.messages_requests() == []
    assert [r.path for r in fake_openai.requests] == ["/v1/batches"]


def test_json_object_requests_send_response_format_json_object() -> None:
    from locomo_exp.llm.messages import JudgeRequest
    from locomo_exp.llm.providers.openai import build_chat_kwargs

    body = build_chat_kwargs(
        JudgeRequest(model="gpt-4o-mini", system="", prompt="p", max_tokens=8,
                     temperature=0.0, response_format="json_object")
    )
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "p"}],
        "max_tokens": 8,
        "temperature": 0.0,
        "response_format": {"type": "json_object"},
    }


def test_sdk_client_closes(fake_openai: FakeOpenAIServer) -> None:
    from locomo_exp.llm.providers.openai import OpenAIJudgeClient

    client = OpenAIJudgeClient(api_key="k", base_url=fake_openai.base_url)
    assert client.base_url == fake_openai.base_url
    asyncio.run(client.aclose())


def test_openai_compatible_without_a_model_is_one_line(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    cfg = openai_judge_config(fake_openai, tmp_path, preset="openai-compatible")
    assert cfg.model == ""
    with pytest.raises(JudgeError, match=r"judge.model is empty; .*judge=openai-compatible judge.model="):
        judge(make_records(2), cfg, tmp_path)
    assert fake_openai.requests == []


def test_batch_submitted_with_wait_false_is_collected_by_the_same_command(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    from locomo_exp.judge import JudgeBatchPending

    fake_openai.batch_processing_s = 3600.0
    cfg = openai_judge_config(
        fake_openai, tmp_path, runs=2, mode="batch",
        batch={"wait": False, "poll_interval_s": 0.01, "max_poll_interval_s": 0.01},
    )
    records = make_records(6)
    with pytest.raises(JudgeBatchPending):
        judge(records, cfg, tmp_path)
    assert len(fake_openai.batch_create_requests()) == 1
    assert fake_openai.batch_requests_submitted() == 11  # 12 calls, the canary realtime
    fake_openai.end_batches()
    fake_openai.clear()
    result = judge(records, cfg, tmp_path)
    assert result.summary["counts"]["valid"] == 12
    assert fake_openai.batch_create_requests() == []  # polled and collected, not resubmitted
    assert fake_openai.messages_requests() == []
    assert result.summary["batch"]["resumed_batch_ids"]
