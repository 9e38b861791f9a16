"""The provider registry: every entry is handled everywhere, and a new one is one module + one entry."""

from __future__ import annotations

import sys
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from judge_helpers import make_records

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import JudgeError, run_judge
from locomo_exp.llm.messages import JudgeReply, JudgeRequest
from locomo_exp.llm.providers import PROVIDERS, ProviderSpec, get_provider, make_client

CONF_JUDGE = Path(__file__).resolve().parents[2] / "locomo_exp" / "conf" / "judge"
CLIENT_METHODS = (
    "complete", "batch_entry", "create_batch", "retrieve_batch", "batch_results",
    "list_batches", "aclose",
)


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_provider_builds_a_batch_client_and_has_a_preset(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = PROVIDERS[name]
    assert spec.name == name
    monkeypatch.setenv(spec.key_env, "k")
    client = make_client(JudgeConfig(provider=name, model="m", base_url="http://127.0.0.1:9"))
    assert all(callable(getattr(client, method)) for method in CLIENT_METHODS)
    assert isinstance(client.api_version, str) and client.base_url.startswith("http://127.0.0.1:9")
    presets = [yaml.safe_load(p.read_text()) for p in CONF_JUDGE.glob("*.yaml")]
    assert any((p.get("provider") or "anthropic") == name for p in presets)


def test_an_unknown_provider_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match=r"judge.provider='nope' is not a provider; use one of anthropic, openai"):
        run_judge(make_records(1), JudgeConfig(provider="nope", dry_run=True), start_dir=tmp_path)


class _EchoClient:
    """A dummy provider's client: accepts every answer."""

    api_version = "echo-v1"
    base_url = "http://echo.invalid"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        return JudgeReply(text='{"score": 100, "explanation": "ok"}', stop_reason="end_turn",
                          input_tokens=10, output_tokens=5, model=request.model + "-snap")

    def batch_entry(self, custom_id: str, request: JudgeRequest) -> dict[str, Any]:
        return {"custom_id": custom_id}

    async def aclose(self) -> None:
        return None


def test_a_new_provider_is_one_module_and_one_registry_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module = types.ModuleType("echo_provider")
    module.make_client = lambda cfg, *, api_key, base_url: _EchoClient()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "echo_provider", module)
    spec = ProviderSpec(
        name="echo", title="Echo API", module="echo_provider", sdk="json", extra=None,
        key_env="ECHO_KEY", base_url_env="ECHO_BASE_URL", default_base_url="http://echo.invalid",
        api_version=lambda temperature: "echo-v1", max_batch_requests=10, max_batch_bytes=4096,
    )
    monkeypatch.setitem(PROVIDERS, "echo", spec)
    monkeypatch.setenv("ECHO_KEY", "k")
    assert get_provider("echo") is spec
    cfg = replace(
        JudgeConfig(), provider="echo", model="echo-1", runs=2, progress=False,
        cache_path=str(tmp_path / "cache.sqlite"),
    )
    result = run_judge(make_records(3), cfg, start_dir=tmp_path)
    summary = result.summary
    assert (summary["provider"], summary["endpoint"], summary["endpoint_kind"]) == (
        "echo", "http://echo.invalid", "default")
    assert summary["model_snapshot"] == "echo-1-snap"
    assert summary["counts"]["valid"] == 6
    monkeypatch.delenv("ECHO_KEY")
    with pytest.raises(JudgeError, match="ECHO_KEY is not set"):
        run_judge(make_records(3), cfg, start_dir=tmp_path)
