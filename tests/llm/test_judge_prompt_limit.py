"""The prompt-size limit comes from the model: each preset carries its context window."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, openai_judge_config

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import JudgeError, run_judge
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


def test_the_same_prompt_is_refused_for_gpt_4o_before_any_call_with_its_record_named(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    # 1.05M characters: over gpt-4o's 128k window even at 5 characters per token (210,000)
    for dry_run in (True, False):
        cfg = openai_judge_config(fake_openai, tmp_path, preset="gpt-4o", dry_run=dry_run, runs=1)
        with pytest.raises(JudgeError) as info:
            run_judge([_long_record()], cfg, start_dir=tmp_path)
        assert str(info.value).startswith(
            "1 judge prompt(s) too long for model gpt-4o-2024-08-06: question_id q-long (record #1): "
        )
        assert (
            "at least 210" in str(info.value)
            and "over the model's context window judge.model_info.context_tokens=128000 even at "
            "5 characters per token" in str(info.value)
        )
    assert fake_openai.messages_requests() == []


def test_a_prompt_in_the_grey_zone_for_gpt_4o_is_warned_about_and_sent(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 540k characters: ~154k tokens at 3.5 characters per token, ~108k at 5: it may fit
    record = QARecord("q-grey", "What happened?", "gold", "x " * 270_000, 1)
    cfg = openai_judge_config(fake_openai, tmp_path, preset="gpt-4o", runs=1)
    caplog.set_level(logging.WARNING)
    result = run_judge([record], cfg, start_dir=tmp_path)
    assert (
        "1 prompt(s) estimated above the model's context window "
        "judge.model_info.context_tokens=128000: q-grey"
    ) in caplog.text
    assert len(fake_openai.messages_requests()) == 1
    assert result.per_question["q-grey"].mean_score is not None


def test_a_panel_member_whose_window_is_smaller_refuses_the_prompt_before_any_call(
    tmp_path: Path,
) -> None:
    """Claude (200k) takes a prompt of at most 160k tokens; the panel's gpt-4o (128k) cannot."""
    from locomo_exp.trust.plan import plan_trust

    record = QARecord("q-big", "What happened?", "gold", "x " * 400_000, 1)  # 800k characters
    cfg = panel_preset_config(JudgeConfig(dry_run=True), "sonnet-4-6")
    cfg.panel = ["sonnet-4-6", "gpt-4o"]
    with pytest.raises(JudgeError) as info:
        plan_trust([record], cfg, start_dir=tmp_path, source="answers.json")
    assert str(info.value).startswith(
        "answers.json: 1 judge.panel gpt-4o prompt(s) too long for model gpt-4o-2024-08-06: "
        "question_id q-big (record #1): "
    )
    cfg.panel = ["sonnet-4-6", "gpt-4.1-mini"]  # a 1M window: planned
    assert plan_trust([record], cfg, start_dir=tmp_path).panel_calls == 2 * cfg.runs
