"""A LoCoMo judge dry run says so everywhere: no "judge ok", no 0.0 cost beside the estimate.

The trial: ``scorer=both judge.dry_run=true`` wrote ``"status": {"judge": "ok"}``, an MLflow
description ending "Status: f1 ok, judge ok", a card.json judge block with nothing saying
no judge ran, and ``"estimated_cost_usd": 0.0`` beside the dry-run estimate. The
LongMemEval dry run already said "dry run: nothing judged"; both now do.
"""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
from conftest import Composer

from locomo_exp.experiment import run_experiment
from locomo_exp.report.card import render_card_markdown
from locomo_exp.report.console import dry_run_lines
from locomo_exp.results import JUDGE_DRY_RUN, RunSummary
from locomo_exp.results.trust import CallEstimate


def test_a_locomo_dry_run_is_a_dry_run_in_summary_card_report_and_mlflow(
    typed_config: Composer, tmp_path: Path
) -> None:
    out = tmp_path / "dry"
    result = run_experiment(typed_config("scorer=both", "judge.dry_run=true"), out, tmp_path)

    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == {"f1": "ok", "judge": "dry run: nothing judged"}
    assert JUDGE_DRY_RUN == "dry run: nothing judged"
    judge = summary["judge"]
    assert judge["j"] == {} and judge["counts"]["calls_made"] == 0
    assert "estimated_cost_usd" not in judge  # nothing was paid: no 0.0 beside the estimate
    assert "total_cost_usd" not in judge["trust"]
    estimate = judge["dry_run_estimate"]
    assert estimate["calls_to_make"] == 16 * 10  # 16 questions in categories 1-4, 10 runs
    assert estimate["total_estimated_cost_usd"] > estimate["estimated_cost_usd"] > 0

    card = json.loads((out / "card.json").read_text())
    assert card["judge"]["dry_run"] is True and card["judge"]["ran"] is False
    assert card["judge"]["model"] == "claude-sonnet-4-6"
    assert "- Judge (dry run: not run, no call made): claude-sonnet-4-6," in render_card_markdown(card)

    report = (out / "report.md").read_text()
    assert report.startswith("# LoCoMo evaluation report\n\n## Run status: JUDGE DRY RUN\n")
    assert "INCOMPLETE" not in report
    run_summary = RunSummary.from_json(summary)
    assert run_summary.judge_dry_run and not run_summary.incomplete

    assert result.run_id is not None
    run = mlflow.MlflowClient().get_run(result.run_id)
    assert run.info.status == "FINISHED"
    note = run.data.tags["mlflow.note.content"]
    assert note.startswith("J not measured (judge dry run: no judge call was made) · **F1")
    assert "Judge (dry run: not run): claude-sonnet-4-6 (rubric, temperature 0.5, 10 run(s)" in note
    assert "Status: f1 ok, judge dry run: nothing judged" in note
    assert "judge ok" not in note
    assert "judge/estimated_cost_usd" not in run.data.metrics
    assert run.data.metrics["judge/dry_run_estimated_cost_usd"] == estimate["estimated_cost_usd"]


def test_a_real_runs_card_and_status_are_unchanged(typed_config: Composer, tmp_path: Path) -> None:
    out = tmp_path / "f1"
    run_experiment(typed_config("tracking=none"), out, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == {"f1": "ok"}
    assert not RunSummary.from_json(summary).judge_dry_run
    assert "## Run status" not in (out / "report.md").read_text()


def test_the_estimates_upper_bound_is_not_named_like_the_spend_cap(
    typed_config: Composer, tmp_path: Path
) -> None:
    out = tmp_path / "dry"
    run_experiment(typed_config("scorer=judge", "judge.dry_run=true", "tracking=none"), out, tmp_path)
    judge = json.loads((out / "summary.json").read_text())["judge"]
    estimate = judge["dry_run_estimate"]
    assert "max_cost_usd" not in estimate  # judge.max_cost_usd is the spend cap, a setting
    assert estimate["cost_upper_bound_usd"] > estimate["estimated_cost_usd"] > 0
    audit = judge["trust"]["dry_run"]["audit"]
    assert set(audit) == {
        "calls_total", "calls_cached", "calls_to_make", "estimated_cost_usd", "cost_upper_bound_usd"
    }
    lines = dry_run_lines(estimate, judge)
    assert f"  cost_upper_bound_usd: {estimate['cost_upper_bound_usd']}" in lines
    assert not any("max_cost" in line for line in lines)


def test_an_older_summarys_max_cost_usd_is_read_as_the_upper_bound() -> None:
    older = {"calls_total": 4, "calls_cached": 1, "calls_to_make": 3,
             "estimated_cost_usd": 0.01, "max_cost_usd": 0.05}  # fmt: skip
    part = CallEstimate.from_json(older)
    assert part.cost_upper_bound_usd == 0.05
    assert part.to_json()["cost_upper_bound_usd"] == 0.05 and "max_cost_usd" not in part.to_json()
