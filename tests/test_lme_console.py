"""The LongMemEval console: a dry run says so and shows its estimate (trial finding).

From a new user's trial, the dry run of a hypothesis file printed "LongMemEval: scored 500
questions" and "J: not measured (not measured: no stored verdicts)": nothing was scored, the
words were doubled and the reason was not the dry run.
"""

from __future__ import annotations

from lme_helpers import HYPOTHESES, REFERENCE, need_shared

from locomo_exp.longmemeval_job import run_longmemeval
from locomo_exp.report.console import dry_run_lines
from locomo_exp.report.lme import console_table

DRY = ("benchmark=longmemeval", "scorer=judge", "judge.dry_run=true", "data=file", "tracking=none")


def test_a_dry_run_shows_its_estimate_and_says_nothing_was_judged(typed_config, tmp_path):
    need_shared()
    cfg = typed_config(*DRY, f"data.path={HYPOTHESES}", f"data.reference={REFERENCE}")
    summary = run_longmemeval(cfg, tmp_path / "out", tmp_path).summary
    text = console_table(summary).splitlines()
    assert text[0] == "Judge dry run (no call made):"
    assert text[1] == "  judge: anthropic claude-sonnet-4-6"  # the judge it counted for
    # LongMemEval's protocol: one run per question, max_tokens 10
    assert "  calls_to_make: 500" in text and "  max_output_tokens: 5000" in text
    assert text[-1] == "J: not measured (judge dry run: nothing judged)"


def test_the_dry_run_names_a_custom_endpoint_and_never_a_key():
    estimate = {"calls_to_make": 3}
    judge = {"provider": "openai", "model": "qwen", "endpoint": "http://127.0.0.1:8000/v1",
             "endpoint_kind": "custom", "api_key_env": "OPENAI_API_KEY"}
    assert dry_run_lines(estimate, judge) == [
        "Judge dry run (no call made):",
        "  judge: openai qwen",
        "  endpoint: http://127.0.0.1:8000/v1",
        "  calls_to_make: 3",
    ]
    default = {**judge, "endpoint": "https://api.openai.com/v1", "endpoint_kind": "default"}
    assert dry_run_lines(estimate, default)[1:] == ["  judge: openai qwen", "  calls_to_make: 3"]


def test_not_measured_is_said_once():
    summary = {"status": {"j": "not measured: no stored verdicts"}}
    assert console_table(summary) == "J: not measured: no stored verdicts"
    assert console_table({"status": {"j": "failed: 401"}}) == "J: not measured (failed: 401)"
