"""A server whose replies carry no token usage: tokens and cost are unknown, never 0 / $0."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from conftest import Composer
from fake_openai import FakeOpenAIServer, openai_judge_config
from judge_helpers import make_records

from locomo_exp.experiment import run_experiment
from locomo_exp.judge import run_judge

QUESTIONS = 4


def test_replies_without_usage_give_unknown_tokens_and_cost_not_zero(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.send_usage = False
    cfg = openai_judge_config(fake_openai, tmp_path, runs=1)
    caplog.set_level(logging.INFO)
    result = run_judge(make_records(QUESTIONS), cfg, start_dir=tmp_path, category_names={})

    assert result.summary["counts"]["calls_made"] == QUESTIONS
    assert result.summary["tokens"]["unknown_usage_calls"] == QUESTIONS
    assert result.summary["estimated_cost_usd"] is None
    assert result.summary["estimated_cost_usd_including_cached"] is None
    assert f"tokens: unknown, cost: unknown ({QUESTIONS} calls made" in caplog.text
    with sqlite3.connect(tmp_path / "judge_cache.sqlite") as conn:
        stored = conn.execute("SELECT DISTINCT input_tokens, output_tokens FROM judge_calls")
        assert stored.fetchall() == [(-1, -1)]  # unknown, kept unknown for later runs

    again = run_judge(make_records(QUESTIONS), cfg, start_dir=tmp_path, category_names={})
    assert again.summary["counts"]["cache_hits"] == QUESTIONS
    assert again.summary["tokens"]["unknown_usage_calls"] == QUESTIONS
    assert again.summary["estimated_cost_usd"] == 0.0  # this run paid nothing: known
    assert again.summary["estimated_cost_usd_including_cached"] is None


def test_the_report_says_unknown_instead_of_zero_tokens(
    fake_openai: FakeOpenAIServer, tmp_path: Path, typed_config: Composer
) -> None:
    fake_openai.send_usage = False
    cfg = typed_config(
        "scorer=judge", "judge=gpt-4o-mini", f"judge.base_url={fake_openai.base_url}",
        "judge.runs=1", "judge.audit.n=0", "judge.progress=false", "tracking=none",
        f"judge.cache_path={tmp_path / 'cache.sqlite'}",
    )
    run_experiment(cfg, tmp_path / "out", tmp_path)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Tokens: unknown, cost: unknown (16 calls made; 16 replies carried no token usage)" in (
        report
    )
    assert "0 in, 0 out" not in report
