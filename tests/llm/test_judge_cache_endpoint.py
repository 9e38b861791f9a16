"""The judge cache key names a custom endpoint: two servers with one model name never share verdicts.

With ``judge.provider=openai`` and a ``judge.base_url`` (vLLM, Ollama, a proxy), the model
name is whatever the server calls its weights: two servers can both serve ``local-model``.
The key's endpoint part is the custom URL, normalised; the provider's default endpoint adds
nothing, so caches made against the default APIs are still hit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_anthropic import verdict_responder
from fake_openai import FakeOpenAIServer, openai_judge_config
from judge_helpers import make_records

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import run_judge
from locomo_exp.judge.calls import build_call_specs
from locomo_exp.llm.cache import CacheKey
from locomo_exp.llm.providers import api_version, cache_endpoint, normalised_url

FIELDS = dict(
    model="m", api_version="v", temperature=0.5, protocol="rubric", prompt_version="p",
    max_tokens=256, structured_output=True, question="q", ground_truth="g",
    prediction="a", category=1, run_index=0,
)


@pytest.fixture
def second_openai(fake_openai: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """A second fake OpenAI-compatible server on another port (the first one's key set)."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


def _local(server: FakeOpenAIServer, tmp_path: Path) -> JudgeConfig:
    return openai_judge_config(  # type: ignore[no-any-return]
        server, tmp_path, preset="openai-compatible", model="local-model", protocol="binary",
        runs=1, temperature=0.0,
    )


def test_two_servers_with_one_model_name_are_judged_separately(
    fake_openai: FakeOpenAIServer, second_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = verdict_responder(lambda item: True, "binary")
    second_openai.responder = verdict_responder(lambda item: False, "binary")
    records = make_records(6)

    first = run_judge(records, _local(fake_openai, tmp_path), start_dir=tmp_path)
    second = run_judge(records, _local(second_openai, tmp_path), start_dir=tmp_path)

    # one cache file, the same model name: each server answered every call itself
    assert len(fake_openai.messages_requests()) == 6
    assert len(second_openai.messages_requests()) == 6
    assert first.summary["j"]["overall"]["mean"] == pytest.approx(100.0)
    assert second.summary["j"]["overall"]["mean"] == pytest.approx(0.0)

    fake_openai.clear()
    second_openai.clear()
    again = run_judge(records, _local(second_openai, tmp_path), start_dir=tmp_path)
    assert second_openai.requests == [] and fake_openai.requests == []  # each has its cache
    assert again.summary["j"]["overall"]["mean"] == pytest.approx(0.0)


def test_one_endpoint_spelled_two_ways_is_one_cache(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    cfg = _local(fake_openai, tmp_path)
    run_judge(make_records(3), cfg, start_dir=tmp_path)
    fake_openai.clear()
    respelled = fake_openai.base_url.replace("http://", "HTTP://") + "/"  # ".../v1/"
    cfg_again = openai_judge_config(
        fake_openai, tmp_path, preset="openai-compatible", model="local-model",
        protocol="binary", runs=1, temperature=0.0, base_url=respelled,
    )
    run_judge(make_records(3), cfg_again, start_dir=tmp_path)
    assert fake_openai.requests == []


def test_normalised_url_drops_credentials_default_ports_and_case() -> None:
    assert normalised_url("HTTP://user:secret@Example.COM:80/v1/?key=sk-1#x") == (
        "http://example.com/v1"
    )
    assert normalised_url("https://example.com:443/v1") == "https://example.com/v1"
    assert normalised_url("https://example.com:8443/v1") == "https://example.com:8443/v1"
    assert normalised_url("http://localhost:8000/v1") != normalised_url("http://127.0.0.1:8000/v1")


def test_the_default_endpoint_leaves_the_key_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert cache_endpoint(JudgeConfig()) is None  # Anthropic's API: no endpoint in the key
    assert cache_endpoint(JudgeConfig(base_url="https://API.anthropic.com/")) is None
    openai_default = JudgeConfig(provider="openai", base_url="https://api.openai.com:443/v1/")
    assert cache_endpoint(openai_default) is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu-box:8000/v1")
    assert cache_endpoint(JudgeConfig(provider="openai")) == "http://gpu-box:8000/v1"
    # keys without an endpoint are byte-identical to the keys made before endpoints existed
    plain = CacheKey(**FIELDS)  # type: ignore[arg-type]
    assert "endpoint" not in json.loads(plain.fields_json())
    assert plain.digest() == CacheKey(**FIELDS, endpoint=None).digest()  # type: ignore[arg-type]
    custom = CacheKey(**FIELDS, endpoint="http://gpu-box:8000/v1")  # type: ignore[arg-type]
    assert json.loads(custom.fields_json())["endpoint"] == "http://gpu-box:8000/v1"
    assert custom.digest() != plain.digest()


def test_the_default_anthropic_key_of_a_call_is_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The digest of a default Anthropic call, computed before endpoints were in the key."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    cfg = JudgeConfig()
    spec = build_call_specs(make_records(1), cfg, api_version=api_version(cfg))[0]
    assert spec.key.endpoint is None
    assert spec.digest == EXPECTED_DEFAULT_DIGEST


EXPECTED_DEFAULT_DIGEST = "0aab8698fd80d3c515ce64256db17b19cbd4ccc8c1baca43d81a121721bb4c51"
"""Computed with the code before this change (main at 104e73d) for the same call."""
