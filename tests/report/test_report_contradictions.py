"""A report never contradicts itself (issue 27 §5, "Report contradictions").

An interval beside a J that is n/a; a latency table whose every row is "not in input"; a note
on category 5 for a file without one; a J column of "n/a" beside stored verdicts.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import CONF_DIR
from hydra import compose, initialize_config_dir

from locomo_exp.benchmarks.longmemeval.compare_report import (
    DECIDES,
    console_lines,
    render_lme_compare,
    verdict,
)
from locomo_exp.config import (
    BaselineMetric,
    ExperimentConfig,
    register_configs,
    to_experiment_config,
)
from locomo_exp.report import render_report
from locomo_exp.report.baselines import render_latency_comparison
from locomo_exp.report.error_analysis import render_error_analysis
from locomo_exp.report.locomo_run import score_rows
from locomo_exp.report.uncertainty import render_uncertainty
from locomo_exp.results import QARecord, RunSummary
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.summary import analyse, build_summary

TRAP_NOTE = "For category 5 (adversarial) the ground truth column holds the *trap* answer"


@pytest.fixture(scope="module")
def config() -> ExperimentConfig:
    register_configs()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        return to_experiment_config(compose(config_name="config"))


def _record(qid: str, category: int, prediction: str = "blue car", **fields: Any) -> QARecord:
    return QARecord(question_id=qid, question=f"question {qid}?", ground_truth="blue car",
                    prediction=prediction, category=category, conversation_id="c1", **fields)


def _summary(
    records: list[QARecord], config: ExperimentConfig, judge: dict[str, Any] | None = None,
    judge_rows: dict[str, dict[str, Any]] | None = None,
) -> RunSummary:
    lexical = score_lexical(records, "locomo")
    rows = score_rows(records, lexical, config.category_names, judge_rows)
    analysis = analyse(rows, protocol=(judge or {}).get("protocol"), bootstrap_samples=200, seed=1)
    return build_summary(
        records, lexical, input_info={"path": "x.json", "sha256": "abc", "format": "qa_results"},
        versions={"f1": "v"}, category_names=config.category_names, judge=judge, analysis=analysis,
    )


def test_no_interval_for_overall_1_5_when_category_5_was_not_judged(config: ExperimentConfig) -> None:
    records = [_record("a", 1), _record("b", 1, "red car"), _record("c", 4), _record("d", 5, "no")]
    judged = {"a": 100.0, "b": 0.0, "c": 100.0}
    rows = {qid: {"j_mean": j, "j_runs": []} for qid, j in judged.items()}
    judge = {"protocol": "binary", "categories": [1, 2, 3, 4], "j": {}}
    text = render_uncertainty(_summary(records, config, judge, rows))
    table = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert table["overall (1-5)"].endswith("| n/a |")  # J of overall (1-5) is n/a: so is its CI
    assert not table["overall (1-4)"].endswith("| n/a |")  # 1-4 was judged: an interval
    assert "J of overall (1-5) is n/a, and so is its interval: category 5 was not judged" in text


def test_overall_1_5_keeps_its_interval_when_category_5_was_judged(config: ExperimentConfig) -> None:
    records = [_record("a", 1), _record("b", 1, "red car"), _record("d", 5, "no")]
    rows = {qid: {"j_mean": j, "j_runs": []} for qid, j in {"a": 100.0, "b": 0.0, "d": 100.0}.items()}
    judge = {"protocol": "binary", "categories": [1, 2, 3, 4, 5], "j": {}}
    text = render_uncertainty(_summary(records, config, judge, rows))
    row = next(line for line in text.splitlines() if line.startswith("| overall (1-5)"))
    assert not row.endswith("| n/a |") and "not judged" not in text


def test_a_latency_table_of_nothing_but_not_in_input_is_one_line(config: ExperimentConfig) -> None:
    summary = _summary([_record("a", 1), _record("b", 4)], config)
    latency_sets = [b for b in config.baselines.values() if b.metric == BaselineMetric.latency]
    assert latency_sets  # Mem0's latency table ships with the package
    text = render_latency_comparison(summary, latency_sets)
    assert "\n" not in text and "|" not in text
    assert text.startswith(
        "Latency and context tokens: not in input (no question has `search_latency_s`, "
        "`total_latency_s`, `context_tokens`), so nothing is compared with Mem0"
    )
    report = render_report(summary, config.baselines)
    assert "not in input |" not in report and "## Latency and context tokens" not in report


def test_a_latency_table_stays_when_one_field_is_there(config: ExperimentConfig) -> None:
    records = [_record("a", 1, search_latency_s=0.2), _record("b", 4, search_latency_s=0.4)]
    summary = _summary(records, config)
    latency_sets = [b for b in config.baselines.values() if b.metric == BaselineMetric.latency]
    text = render_latency_comparison(summary, latency_sets)
    assert text.startswith("## Latency and context tokens")
    assert "| search latency p50 (s) | 0.300 |" in text
    assert "| total latency p50 (s) | not in input |" in text


def test_error_analysis_speaks_of_category_5_only_when_one_is_listed(config: ExperimentConfig) -> None:
    without = _summary([_record("a", 1), _record("b", 4, "red car")], config)
    assert "category 5" not in render_error_analysis(without)
    with_5 = _summary([_record("a", 1), _record("b", 5, "red car")], config)
    assert TRAP_NOTE in render_error_analysis(with_5)


def test_error_analysis_shows_stored_verdicts_when_no_judge_ran(config: ExperimentConfig) -> None:
    records = [
        _record("a", 1, stored_judge_score=100.0),
        _record("b", 4, "red car", stored_judge_score=0.0),
        _record("c", 4, "green bike", stored_judge_score=100.0),
    ]
    text = render_error_analysis(_summary(records, config))
    assert "| id | cat | question | ground truth | prediction | F1 | stored J |" in text
    rows = [line for line in text.splitlines() if line.startswith("| a ") or line.startswith("| c ")]
    assert rows and all(line.endswith("| 100.00 |") for line in rows)
    assert "n/a |" not in text


def test_error_analysis_titles_this_runs_j_as_j(config: ExperimentConfig) -> None:
    records = [_record("a", 1, stored_judge_score=0.0), _record("b", 4, "red car", stored_judge_score=0.0)]
    rows = {"a": {"j_mean": 100.0, "j_runs": []}, "b": {"j_mean": 50.0, "j_runs": []}}
    summary = _summary(records, config, {"protocol": "binary", "categories": [1, 2, 3, 4], "j": {}}, rows)
    text = render_error_analysis(summary)
    assert "| F1 | J |" in text and "stored J" not in text
    line = next(line for line in text.splitlines() if line.startswith("| a "))
    assert line.endswith("| 100.00 |")  # this run's J, not the stored 0



# ----------------------------------------------------------------- LongMemEval compare verdict


def _lme_row(figure: str, diff: float, ci: tuple[float, float], mcnemar: float | None,
             holm: float | None = None) -> dict[str, Any]:
    return {"figure": figure, "n": 120, "a": 0.6, "b": 0.6 - diff / 100, "diff": diff,
            "ci": list(ci), "mcnemar_p": mcnemar, "holm_p": holm, "discordant": [9, 2]}


def test_lme_abstention_interval_excluding_0_with_mcnemar_0_07_says_the_test_decides() -> None:
    row = _lme_row("abstention", 5.83, (0.83, 11.67), 0.0703)
    assert verdict(row) == (
        "no difference shown (McNemar p 0.0703 ≥ 0.05 decides; the interval [+0.83, +11.67] "
        "excludes 0)"
    )
    pair = {"a": "A", "b": "B", "paired": 120, "only_a": 0, "only_b": 0, "warnings": [],
            "rows": [_lme_row("overall", 1.0, (-2.0, 4.0), 0.5),
                     _lme_row("task_avg", 1.0, (-2.0, 4.0), None), row]}
    markdown = render_lme_compare([pair])
    assert DECIDES in markdown
    assert markdown.count("| verdict |") == 1
    abstention = next(line for line in markdown.splitlines() if line.startswith("| abstention"))
    assert abstention.endswith("excludes 0) |")
    console = console_lines([pair]).splitlines()
    assert console[-1].endswith("≥ 0.05 decides; the interval [+0.83, +11.67] excludes 0)")


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (_lme_row("overall", 4.0, (1.0, 7.0), 0.003), "A higher (McNemar p 0.0030)"),
        (_lme_row("overall", -4.0, (-7.0, 1.0), 0.04), "B higher (McNemar p 0.0400)"),
        (_lme_row("multi-session", 4.0, (1.0, 7.0), 0.01, holm=0.06),
         "no difference shown (Holm p 0.0600 ≥ 0.05 decides; the interval [+1.00, +7.00] "
         "excludes 0)"),
        (_lme_row("task_avg", 3.0, (0.5, 5.5), None),
         "A higher (interval excludes 0; no McNemar test)"),
        (_lme_row("task_avg", 3.0, (-0.5, 5.5), None),
         "no difference shown (interval contains 0; no McNemar test)"),
        (_lme_row("overall", 1.0, (-1.0, 3.0), 0.4), "no difference shown (McNemar p 0.4000)"),
    ],
)
def test_lme_verdict_rules(row: dict[str, Any], expected: str) -> None:
    assert verdict(row) == expected
