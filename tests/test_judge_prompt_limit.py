"""The prompt-size limit comes from the model: each preset carries its context window."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, openai_judge_config

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import run_judge
from locomo_exp.llm.models import prompt_limit
from locomo_exp.results import QARecord
from locomo_exp.trust.job import panel_preset_config

LONG_TOKENS = 300_000
"""A prompt this long fits gpt-4.1's 1M window, not gpt-4o's 128k nor Claude's 200k."""


@pytest.mark.parametrize(
    ("preset", "window"),
    [
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("sonnet-4-6", 200_000),
        ("haiku-4-5", 200_000),
        ("opus-4-7", 200_000),
        ("openai-compatible", None),
    ],
)
def test_each_preset_carries_its_models_context_window(preset: str, window: int | None) -> None:
    assert prompt_limit(panel_preset_config(JudgeConfig(), preset)) == window


def test_the_users_setting_wins_and_an_undescribed_model_has_no_known_limit() -> None:
    compatible = panel_preset_config(JudgeConfig(), "openai-compatible")
    compatible.max_prompt_tokens = 32_000
    assert prompt_limit(compatible) == 32_000
    other = panel_preset_config(JudgeConfig(), "gpt-4o")
    other.model = "some-other-model"
    assert prompt_limit(other) is None


def _long_record() -> QARecord:
    return QARecord("q-long", "What happened?", "gold", "x " * int(LONG_TOKENS * 1.75), 1)


def test_a_long_prompt_that_gpt_4_1_accepts_is_priced_not_free(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = openai_judge_config(fake_openai, tmp_path, preset="gpt-4.1-mini", dry_run=True, runs=1)
    caplog.set_level(logging.WARNING)
    estimate = run_judge([_long_record()], cfg, start_dir=tmp_path).dry_run_estimate
    assert estimate is not None
    assert "prompts_over_max_prompt_tokens" not in estimate
    assert estimate["estimated_input_tokens"] > LONG_TOKENS
    assert estimate["estimated_cost_usd"] > LONG_TOKENS * 0.40 / 1e6
    assert "prompt(s) estimated above" not in caplog.text
    assert fake_openai.messages_requests() == []


def test_the_same_prompt_is_flagged_for_gpt_4o_with_its_record_named(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = openai_judge_config(fake_openai, tmp_path, preset="gpt-4o", dry_run=True, runs=1)
    caplog.set_level(logging.WARNING)
    estimate = run_judge([_long_record()], cfg, start_dir=tmp_path).dry_run_estimate
    assert estimate is not None
    assert estimate["prompts_over_max_prompt_tokens"] == ["q-long"]
    assert (
        "1 prompt(s) estimated above the model's context window "
        "judge.model_info.context_tokens=128000: q-long"
    ) in caplog.text
