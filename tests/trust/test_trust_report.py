"""Report sections and MLflow numbers of judge trust; the Zep audit of the closing note."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trust_labels import _records as _labelled_records
from test_trust_labels import _verdicts as _labelled_verdicts

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.report.trust import (
    render_audit_section,
    render_corrected_section,
    render_labels_section,
    render_panel_section,
)
from locomo_exp.results import QARecord, TrustSummary
from locomo_exp.stats.correction import corrected_j
from locomo_exp.tracking.trust import trust_metrics
from locomo_exp.trust.audit import summarise_audit
from locomo_exp.trust.controls import GOLD_AS_ANSWER, NON_ANSWER, build_controls
from locomo_exp.trust.labels import compare_with_labels, compare_with_stored, load_labels
from locomo_exp.trust.panel import judge_panel
from locomo_exp.trust.summary import (
    agreement_report_result,
    audit_result,
    corrected_result,
    panel_summary,
)

ACCEPT = get_protocol("rubric").accept_threshold
"""The accept threshold of the built-in protocols (50)."""
BINARY = get_protocol("binary")


def _audit():
    records = [
        QARecord("a", "When did Anna go?", "7 May 2023", "x", 2, "c", position=0),
        QARecord("b", "What did Ben buy?", "a red car", "x", 4, "c", position=1),
    ]
    controls = build_controls(records, kinds=[GOLD_AS_ANSWER, NON_ANSWER])
    verdicts = {
        "audit:gold_as_answer:a": 100.0,
        "audit:gold_as_answer:b": 100.0,
        "audit:non_answer:a": 100.0,
        "audit:non_answer:b": None,
    }
    costs = {c.control_id: 0.002 for c in controls}
    judged = summarise_audit(
        controls, verdicts, threshold=ACCEPT, max_false_accept=0.2, cost_usd=costs
    )
    return audit_result(judged, controls=4, counts={}, estimated_cost_usd=0.008, verdicts=verdicts)


def _read_back(trust: TrustSummary) -> TrustSummary:
    """What the report and MLflow get: the summary.json round trip."""
    return TrustSummary.from_json(trust.to_json())


def test_audit_section_renders_rates_intervals_gate_and_categories() -> None:
    text = render_audit_section(_audit(), DEFAULT_CATEGORY_NAMES)
    assert text.splitlines()[0] == "## Judge audit"
    assert (
        "| gold_as_answer | accepted | 2 | 0 | 100.0% [34.2, 100.0] (2/2) | false reject 0.0% | 0.0040 |"
        in text
    )
    assert (
        "| non_answer | rejected | 1 | 1 | 100.0% [20.7, 100.0] (1/1) | false accept 100.0% | 0.0040 |"
        in text
    )
    assert (
        "- False-accept rate over all should-be-rejected controls: 100.0% [20.7, 100.0] (1/1)"
        in text
    )
    assert "- Gate (max_false_accept 20.0%, per kind): **FAILED**" in text
    assert (
        "  - false-accept rate 100.0% (1/1) on non_answer exceeds judge.audit.max_false_accept=20.0%"
        in text
    )
    assert "| control | 2 (temporal) | 4 (single_hop) |" in text
    assert "| non_answer | 100.0% (1/1) | n/a |" in text
    assert "- Audit cost: 0.0080 USD" in text


def test_audit_metrics_are_named_per_kind_on_a_0_100_scale() -> None:
    metrics = trust_metrics(_read_back(TrustSummary(audit=_audit())))
    assert metrics["audit/gold_as_answer/accept_rate"] == 100.0
    assert metrics["audit/gold_as_answer/accept_rate_ci_low"] == pytest.approx(34.2380227506653)
    assert metrics["audit/gold_as_answer/accept_rate_ci_high"] == 100.0
    assert metrics["audit/non_answer/n"] == 1.0
    assert metrics["audit/non_answer/error_rate"] == 100.0
    assert metrics["audit/non_answer/cat2_temporal/accept_rate"] == 100.0
    assert "audit/non_answer/cat4_single_hop/accept_rate" not in metrics  # unscored: no value
    assert metrics["audit/false_accept_rate"] == 100.0 and metrics["audit/false_reject_rate"] == 0.0
    assert metrics["audit/gate_passed"] == 0.0
    assert metrics["audit/cost_usd"] == pytest.approx(0.008)
    assert all(isinstance(v, float) for v in metrics.values())


def test_labels_section_and_metrics_for_the_40_question_file(fixtures_dir: Path) -> None:
    report = compare_with_labels(
        _labelled_records(),
        _labelled_verdicts(),
        load_labels(fixtures_dir / "trust" / "labels_40.csv"),
        threshold=ACCEPT,
    )
    report = agreement_report_result(report)
    text = render_labels_section(report, DEFAULT_CATEGORY_NAMES)
    assert text.splitlines()[0] == "## Agreement with human labels"
    assert (
        "| overall | 38 | 81.6% [66.6, 90.8] (31/38) | 0.610 | 87.0% [67.9, 95.5] (20/23) "
        "| 73.3% [48.0, 89.1] (11/15) |"
    ) in text
    assert "| correct | 20 | 3 |" in text and "| wrong | 4 | 11 |" in text
    assert "- AMBIGUOUS labels left out: 2" in text
    assert "### Disagreements (7 of 7 shown)" in text
    assert "| q20 | 1 | Invented question number 20? | gold 20 | answer 20 | correct | 0 |" in text
    metrics = trust_metrics(_read_back(TrustSummary(labels=report)))
    assert metrics["labels/overall/kappa"] == pytest.approx(416 / 682)
    assert metrics["labels/overall/sensitivity"] == pytest.approx(100 * 20 / 23)
    assert metrics["labels/overall/specificity"] == pytest.approx(100 * 11 / 15)
    assert metrics["labels/cat1_multi_hop/kappa"] == pytest.approx(7 / 12)
    assert metrics["labels/n_ambiguous"] == 2.0 and metrics["labels/n_disagreements"] == 7.0


def test_stored_verdicts_section_is_titled_for_the_other_judge() -> None:
    from dataclasses import replace

    records = [replace(r, stored_judge_score=100.0) for r in _labelled_records()[:4]]
    report = compare_with_stored(records, {r.question_id: 100.0 for r in records}, threshold=ACCEPT)
    assert report is not None
    report = agreement_report_result(report)
    text = render_labels_section(report)
    assert text.splitlines()[0] == "## Agreement with stored verdicts"
    assert "| stored judge \\ our judge | accepted | rejected |" in text
    assert "AMBIGUOUS" not in text
    metrics = trust_metrics(_read_back(TrustSummary(stored=report)))
    assert metrics["stored_agreement/overall/agreement"] == 100.0
    assert "stored_agreement/overall/kappa" not in metrics  # undefined: both always accept


def test_corrected_section_shows_raw_and_corrected_with_the_method(fixtures_dir: Path) -> None:
    report = compare_with_labels(
        _labelled_records(),
        _labelled_verdicts(),
        load_labels(fixtures_dir / "trust" / "labels_40.csv"),
        threshold=ACCEPT,
    )
    accepts = [v >= 50 for v in _labelled_verdicts().values()]
    result = corrected_result(
        corrected_j(accepts, report.reference, report.judge, n_boot=200, seed=0)
    )
    text = render_corrected_section(result)
    assert text.splitlines()[0] == "## Corrected J"
    assert "- Raw accept rate (share of answers with a verdict ≥ 50, not J): 62.5% (40 questions)" in text
    assert "- Sensitivity 87.0%, specificity 73.3% (38 items)" in text
    assert "- Corrected J: **59.4%**, 95% interval [" in text
    assert "Rogan & Gladen 1978" in text
    assert "resampling the 40 judged questions and, independently, the 38 labelled items" in text
    metrics = trust_metrics(_read_back(TrustSummary(corrected=result)))
    assert metrics["j_corrected/overall"] == pytest.approx(100 * 1978 / 3328)
    assert metrics["j_corrected/overall_ci_low"] == pytest.approx(100 * result.ci_low)
    assert metrics["j_corrected/clipped"] == 0.0


def test_corrected_section_notes_clipping() -> None:
    result = corrected_result(
        corrected_j([False] * 20, [True, False] * 10, [True, True, True, False] * 5, n_boot=50)
    )
    text = render_corrected_section(result)
    assert "- Corrected J: **0.0%**" in text
    assert "- Note: the estimate -100.0% fell outside [0, 100] and was clipped" in text


def test_panel_section_and_metrics() -> None:
    a = {"q1": 100.0, "q2": 100.0, "q3": 0.0, "q4": 0.0}
    b = {"q1": 100.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}
    panel = panel_summary(
        judge_panel({"claude-haiku-4-5": a, "claude-sonnet-4-6": b}, protocol=BINARY),
        calls_made=8,
        estimated_cost_usd=None,
    )
    text = render_panel_section(panel)
    assert text.splitlines()[0] == "## Judge panel"
    assert "Cost: 2× a single judge." in text
    assert "| claude-haiku-4-5 | 4 | 50.00 | 50.00 |" in text  # binary: J = accept rate
    assert "| **panel (majority)** | 3 | n/a (accept or reject) | 33.33 |" in text
    assert "  - tie: 1 accept, 1 reject: 1" in text
    assert (
        "| claude-haiku-4-5 vs claude-sonnet-4-6 | 4 | 75.0% [30.1, 95.4] (3/4) | 0.500 |" in text
    )
    metrics = trust_metrics(_read_back(TrustSummary(panel=panel)))
    assert metrics["panel/claude-haiku-4-5/j"] == 50.0
    assert metrics["panel/claude-sonnet-4-6/accept_rate"] == 25.0
    assert metrics["panel/j"] == pytest.approx(100 / 3)
    assert metrics["panel/kappa/claude-haiku-4-5__claude-sonnet-4-6"] == pytest.approx(0.5)
    assert metrics["panel/n_unscored"] == 1.0 and metrics["panel/cost_multiplier"] == 2.0
    assert "panel/alpha" in metrics


def test_zep_file_audited_by_a_judge_replaying_zeps_own_grades(shared_data: Path) -> None:
    """The closing note: a 'judge' that replays Zep's stored grade of the source question
    ignores the control answer, and the audit table shows exactly that."""
    from locomo_exp.config import DataConfig, FieldMap
    from locomo_exp.data import load_results

    fields = FieldMap(ground_truth="golden_answer", prediction="answer", judge_score="grade")
    records = load_results(
        shared_data / "predictions" / "zep_locomo_grades.json",
        DataConfig(format="fields", fields=fields),
    ).records
    controls = build_controls(records, n=50, seed=0, categories=[1, 2, 3, 4])
    assert len(controls) == 274  # 17.8% of the 1,540 judged questions
    stored = {r.question_id: r.stored_judge_score for r in records}
    summary = summarise_audit(
        controls,
        {c.control_id: stored[c.source_question_id] for c in controls},
        threshold=ACCEPT,
        max_false_accept=0.1,
        max_false_reject=0.1,
    )
    accepted = {k: (s.accept.successes, s.accept.n) for k, s in summary.kinds.items()}
    assert accepted == {
        "gold_as_answer": (37, 50),
        "other_gold": (39, 50),
        "perturbed_date": (38, 50),
        "perturbed_number": (20, 50),
        "perturbed_name": (18, 24),
        "non_answer": (33, 50),
    }
    assert (summary.false_accept.successes, summary.false_accept.n) == (148, 224)
    assert not summary.gate.passed and len(summary.gate.failures) == 6
