"""The LongMemEval console: a dry run says so and shows its estimate (trial finding).

From a new user's trial, the dry run of a hypothesis file printed "LongMemEval: scored 500
questions" and "J: not measured (not measured: no stored verdicts)": nothing was scored, the
words were doubled and the reason was not the dry run.
"""

from __future__ import annotations

import json

from lme_helpers import HYPOTHESES, REFERENCE, need_shared

from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.benchmarks.longmemeval.report import console_table
from locomo_exp.benchmarks.longmemeval.summary import dry_run_of
from locomo_exp.report.console import dry_run_lines

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


def test_a_dry_run_records_its_judge_in_the_judge_section(typed_config, tmp_path, monkeypatch):
    """Provider, model and a custom endpoint in ``summary.json``'s ``judge`` (not a key of its
    own), never the key; the card names no judge, since nothing was judged."""
    need_shared()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-written-1234")
    cfg = typed_config(*DRY, "judge=gpt-4o", "judge.base_url='http://127.0.0.1:9/v1?k=1'",
                       f"data.path={HYPOTHESES}", f"data.reference={REFERENCE}")
    summary = run_longmemeval(cfg, tmp_path / "out", tmp_path).summary
    written = (tmp_path / "out" / "summary.json").read_text()
    assert json.loads(written) == summary
    assert "judge_dry_run_model" not in summary and "judge_dry_run" not in summary
    judge = summary["judge"]
    assert {k: judge["settings"][k] for k in ("provider", "model", "endpoint", "endpoint_kind")} == {
        "provider": "openai", "model": "gpt-4o-2024-08-06",
        "endpoint": "http://127.0.0.1:9/v1", "endpoint_kind": "custom",
    }
    assert judge["figures"] is None and judge["dry_run_estimate"]["calls_to_make"] == 500
    assert summary["headline"] is None  # a dry run's judge has no figures
    for secret in ("sk-test-never-written", "?k=1"):
        assert secret not in written
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["judge"] is None and card["verdicts"] == "none"
    assert console_table(summary).splitlines()[1:3] == [
        "  judge: openai gpt-4o-2024-08-06", "  endpoint: http://127.0.0.1:9/v1"
    ]


def test_a_dry_run_summary_of_the_old_shape_is_still_read():
    """Runs made before the judge section held the dry run: top-level keys."""
    old = {"status": {"j": "not measured: no stored verdicts"}, "judge": None,
           "judge_dry_run": {"calls_to_make": 3},
           "judge_dry_run_model": {"provider": "anthropic", "model": "claude-haiku-4-5"}}
    assert dry_run_of(old) == ({"calls_to_make": 3},
                               {"provider": "anthropic", "model": "claude-haiku-4-5"})
    assert console_table(old).splitlines() == [
        "Judge dry run (no call made):", "  judge: anthropic claude-haiku-4-5",
        "  calls_to_make: 3", "J: not measured (judge dry run: nothing judged)",
    ]
    assert dry_run_of({"status": {}, "judge": {"figures": {}, "settings": {}}}) is None
