"""Typed results: ``RunSummary.to_json()`` is the ``summary.json`` layout, and reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CONF_DIR
from hydra import compose, initialize_config_dir

from locomo_exp.config import register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment
from locomo_exp.report.console import console_table
from locomo_exp.results import (
    SCHEMA_VERSION,
    BootstrapCI,
    GroupStats,
    InputInfo,
    JudgeSummary,
    LatencyStats,
    QARecord,
    RunSummary,
)
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.summary import build_summary

JUDGE = {
    "protocol": "rubric",
    "prompt_version": "rubric/v3",
    "model": "claude-sonnet-4-6",
    "temperature": 0.5,
    "runs": 2,
    "mode": "realtime",
    "categories": [1, 4],
    "j": {
        "1": {
            "mean": 80.0,
            "count": 1,
            "questions": 1,
            "std_across_runs": 1.0,
            "pooled_within_std": 0.0,
            "run_means": [80.0, 80.0],
        },
        "overall": {
            "mean": 85.0,
            "count": 2,
            "questions": 2,
            "std_across_runs": 0.5,
            "pooled_within_std": None,
            "run_means": [85.0, 85.0],
        },
    },
    "counts": {"valid": 4, "parse_failure": 0, "api_error": 0},
    "tokens": {"input": 1200, "output": 80},
    "estimated_cost_usd": 0.0048,
    "a_key_a_later_judge_adds": {"nested": [1, 2]},
}


def _example_summary(tmp_path: Path, *overrides: str) -> dict:
    register_configs()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(CONF_DIR)
    ):
        cfg = to_experiment_config(
            compose(config_name="config", overrides=["tracking=none", *overrides])
        )
    result = run_experiment(cfg, tmp_path / "out", tmp_path)
    return json.loads((result.output_dir / "summary.json").read_text(encoding="utf-8"))


def test_summary_json_of_the_example_reads_back_to_the_same_text(tmp_path: Path) -> None:
    written = _example_summary(tmp_path, "data=example")
    assert list(written) == [
        "schema_version",
        "scales",
        "input",
        "versions",
        "category_names",
        "counts",
        "conversations",
        "metrics",
        "latency",
        "status",
        "analysis",
        "run_log",  # schema 2: the typed run log (tests/results/test_run_log.py)
    ]
    assert written["schema_version"] == SCHEMA_VERSION == 2
    del written["run_log"]  # built from the summary by results/locomo_log.py, not RunSummary
    again = RunSummary.from_json(written).to_json()
    assert json.dumps(again, indent=2) == json.dumps(written, indent=2)  # same keys, order, values


def test_run_summary_attributes_carry_the_example_numbers(tmp_path: Path) -> None:
    summary = RunSummary.from_json(_example_summary(tmp_path, "data=example"))
    assert summary.counts["overall"] == 20
    assert summary.input.name == "qa_results.json"
    assert summary.metrics["f1"]["4"] == GroupStats(mean=2 / 3, count=4, min=0.0, max=1.0)
    assert round(summary.metrics["f1"]["overall"].mean * 100, 2) == 48.41
    assert summary.latency["context_tokens"] == LatencyStats(
        count=20, p50=1405.0, p95=2384.0, mean=1501.0
    )
    assert summary.status == {"f1": "ok"}
    assert summary.analysis is not None and summary.analysis.reliability is None
    ci = summary.analysis.bootstrap["f1"]["overall"]
    assert isinstance(ci, BootstrapCI) and ci.low < summary.metrics["f1"]["overall"].mean < ci.high


def test_judge_summary_keeps_every_key_of_the_judge_dict() -> None:
    judge = JudgeSummary.from_json(JUDGE)
    assert judge.to_json() == JUDGE
    assert judge.j["1"].std_across_runs == 1.0
    assert judge.j["overall"].pooled_within_std is None
    assert judge.overall_label == "overall (1, 4)"
    assert judge.tokens == {"input": 1200, "output": 80}


def test_summary_with_judge_and_stored_verdicts_round_trips() -> None:
    records = [
        QARecord(
            question_id="a",
            question="q?",
            ground_truth="cat",
            prediction="cat",
            category=1,
            stored_judge_score=100.0,
        ),
        QARecord(
            question_id="b",
            question="q?",
            ground_truth="dog",
            prediction="cow",
            category=4,
            stored_judge_score=0.0,
        ),
    ]
    summary = build_summary(
        records,
        score_lexical(records),
        input_info={"path": "/d/x.json", "sha256": "ab", "format": "mem0"},
        versions={"f1": "v"},
        category_names={1: "multi_hop", 4: "single_hop"},
        judge=JUDGE,
        status={"f1": "ok", "judge": "ok"},
    )
    data = summary.to_json()
    assert data["stored_judge"]["overall"] == {"mean": 50.0, "count": 2, "min": 0.0, "max": 100.0}
    assert data["judge"] == JUDGE
    assert data["input"]["name"] == "x.json"
    assert "analysis" not in data
    assert RunSummary.from_json(data) == summary
    assert RunSummary.from_json(data).to_json() == data


def test_input_info_keeps_keys_it_does_not_know() -> None:
    data = {"path": "/d/x.json", "sha256": "ab", "format": "fields", "n_limited": 5}
    info = InputInfo.from_json(data)
    assert info.extra == {"n_limited": 5}
    assert info.to_json()["n_limited"] == 5


def test_summary_without_schema_version_reads_and_writes_the_current_layout(
    tmp_path: Path,
) -> None:
    written = _example_summary(tmp_path, "data=example")
    del written["schema_version"], written["run_log"]  # as written before either existed
    assert RunSummary.from_json(written).to_json()["schema_version"] == 2


def test_newer_schema_version_is_refused_with_one_line() -> None:
    with pytest.raises(ValueError) as info:
        RunSummary.from_json({"schema_version": 3})
    assert str(info.value) == (
        "summary.json schema_version 3 is newer than this locomo_exp reads (2); upgrade locomo_exp"
    )


def test_console_table_reads_typed_results_and_their_json_alike(tmp_path: Path) -> None:
    written = _example_summary(tmp_path, "data=example")
    table = console_table(RunSummary.from_json(written))
    assert table == console_table(written)
    assert table.splitlines()[0] == "category               n        F1    BLEU-1"
    assert table.splitlines()[-1] == "overall               20     48.41     39.36"


def test_console_table_shows_j_overall_only_on_the_judged_row() -> None:
    records = [
        QARecord(question_id="a", question="q?", ground_truth="cat", prediction="cat", category=1),
        QARecord(question_id="b", question="q?", ground_truth="dog", prediction="dog", category=4),
    ]
    judge = {
        **JUDGE,
        "categories": [1, 2, 3, 4],
        "j": {**JUDGE["j"], "4": {"mean": 90.0, "count": 1}},
    }
    summary = build_summary(
        records,
        [],
        input_info={"path": "x", "sha256": "s", "format": "qa_results"},
        versions={},
        category_names={1: "multi_hop", 4: "single_hop"},
        judge=judge,
    )
    lines = console_table(summary).splitlines()
    assert lines[-2].startswith("J: judge ") and lines[-1].startswith("Judge cost ")
    lines = lines[:-2]  # which judge produced J and its cost: tests/cli/test_console_judge_line.py
    assert lines[0] == "category               n         J"
    assert lines[1 + 1] == "1 multi_hop            1     80.00"
    assert lines[-2] == "overall_1_4            2     85.00"
    # no category-5 question: the overall (1-5) row would repeat overall_1_4's questions
    assert lines[-1] == (
        "No overall (1-5) row: the input has no category-5 question, so it equals overall (1-4)."
    )
