"""A verdict only where something was measured (issue 18 §1).

The audit gate says "not set" without limits and "not measured" (failing) when its kinds
got no verdict; J is flagged as inflated when a reject kind's false-accept Wilson interval
lies above 50%; a judge that produced no valid verdict ends the run with a non-zero exit and
the INCOMPLETE block.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, accept_all, error, text
from statsmodels.stats.proportion import proportion_confint

from locomo_exp.judge.protocols import get_protocol
from locomo_exp.report.header import render_status
from locomo_exp.report.trust import render_audit_section
from locomo_exp.results import AuditResult, QARecord, RunSummary, TrustSummary
from locomo_exp.tracking.metrics import judge_tags
from locomo_exp.tracking.trust import trust_metrics
from locomo_exp.trust.audit import AuditSummary, summarise_audit
from locomo_exp.trust.controls import AuditControl
from locomo_exp.trust.summary import audit_result, check_audit

ACCEPT = get_protocol("rubric").accept_threshold


def _typed(summary: AuditSummary) -> AuditResult:
    """The audit as summary.json holds it (what the report and MLflow read)."""
    typed = audit_result(summary, controls=0, counts={}, estimated_cost_usd=None, verdicts={})
    audit = TrustSummary.from_json(TrustSummary(audit=typed).to_json()).audit
    assert audit is not None
    return audit


def _controls(kind: str, n: int, expected_accept: bool) -> list[AuditControl]:
    return [
        AuditControl(
            record=QARecord(
                question_id=f"audit:{kind}:q{i}",
                question=f"q{i}?",
                ground_truth="gold",
                prediction="answer",
                category=1 + i % 4,
                conversation_id="c1",
            ),
            kind=kind,
            expected_accept=expected_accept,
            source_question_id=f"q{i}",
        )
        for i in range(n)
    ]


# -- the gate ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "limits", "state", "fails_run", "metric"),
    [
        pytest.param(None, {}, "not set", False, None, id="no-limit-all-unscored"),
        pytest.param(0.0, {}, "not set", False, None, id="no-limit-all-scored"),
        pytest.param(
            None, {"max_false_accept": 0.1}, "not measured", True, 0.0, id="limit-all-unscored"
        ),
        pytest.param(0.0, {"max_false_accept": 0.1}, "passed", False, 100.0, id="limit-passed"),
        pytest.param(100.0, {"max_false_accept": 0.1}, "failed", True, 0.0, id="limit-failed"),
    ],
)
def test_gate_is_not_set_without_limits_and_not_measured_without_verdicts(
    verdict: float | None,
    limits: dict[str, float],
    state: str,
    fails_run: bool,
    metric: float | None,
) -> None:
    controls = _controls("other_gold", 6, expected_accept=False)
    summary = summarise_audit(
        controls, {c.control_id: verdict for c in controls}, threshold=ACCEPT, **limits
    )
    assert summary.gate.state == state
    assert summary.gate.passed is (state == "passed")
    assert summary.gate.fails_run is fails_run
    typed = _typed(summary)
    metrics = trust_metrics(TrustSummary(audit=typed))
    assert metrics.get("audit/gate_passed") == metric  # percent scale, absent when not set
    tags = judge_tags({"mode": "realtime", "trust": TrustSummary(audit=typed).to_json()})
    assert tags["judge.audit_gate"] == state
    section = render_audit_section(typed)
    assert "**passed**" not in section or state == "passed"


def test_unmeasured_gate_names_the_kind_and_fails_with_one_line() -> None:
    controls = _controls("non_answer", 4, expected_accept=False)
    summary = summarise_audit(controls, {}, threshold=ACCEPT, max_false_accept=0.2)
    assert summary.gate.message == (
        "judge audit not measured: false-accept rate not measured on non_answer: none of its "
        "4 control(s) got a verdict (judge.audit.max_false_accept=20.0%)"
    )
    section = render_audit_section(_typed(summary))
    assert "- Gate (max_false_accept 20.0%, per kind): **NOT MEASURED (fails)**" in section


def test_gate_with_one_kind_measured_and_one_not_fails() -> None:
    controls = _controls("other_gold", 4, False) + _controls("non_answer", 4, False)
    verdicts = {c.control_id: 0.0 for c in controls if c.kind == "other_gold"}
    summary = summarise_audit(controls, verdicts, threshold=ACCEPT, max_false_accept=0.2)
    assert summary.gate.state == "failed" and summary.gate.fails_run
    assert summary.gate.failures == (
        "false-accept rate not measured on non_answer: none of its 4 control(s) got a verdict "
        "(judge.audit.max_false_accept=20.0%)",
    )


def test_gate_without_limits_is_reported_as_not_set() -> None:
    controls = _controls("other_gold", 3, expected_accept=False)
    section = render_audit_section(_typed(summarise_audit(controls, {}, threshold=ACCEPT)))
    assert (
        "- Gate: not set (no judge.audit.max_false_accept or judge.audit.max_false_reject)"
        in section
    )
    assert "passed" not in section


# -- inflated J -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accepted", "n", "warned"),
    [
        pytest.param(149, 149, True, id="149-of-149"),
        pytest.param(4, 4, True, id="4-of-4-low-bound-51"),
        pytest.param(3, 3, False, id="3-of-3-low-bound-44"),
        pytest.param(70, 100, True, id="70-of-100"),
        pytest.param(58, 100, False, id="58-of-100-interval-spans-50"),
    ],
)
def test_j_is_flagged_inflated_when_a_false_accept_interval_lies_above_half(
    accepted: int, n: int, warned: bool
) -> None:
    controls = _controls("other_gold", n, expected_accept=False)
    controls += _controls("gold_as_answer", 5, expected_accept=True)  # accept kinds never warn
    verdicts = {c.control_id: 100.0 for c in controls if c.kind == "gold_as_answer"}
    verdicts.update(
        {c.control_id: 100.0 if i < accepted else 0.0 for i, c in enumerate(controls[:n])}
    )
    low, high = proportion_confint(accepted, n, alpha=0.05, method="wilson")
    assert (low > 0.5) is warned  # the rule, checked against statsmodels
    warnings = check_audit(summarise_audit(controls, verdicts, threshold=ACCEPT)).warnings
    if not warned:
        assert warnings == ()
        return
    assert warnings == (
        f"J inflated (the judge accepted {accepted}/{n} known-wrong other_gold controls: "
        f"false-accept {100 * accepted / n:.1f}%, 95% CI [{100 * low:.1f}, {100 * high:.1f}])",
    )


def test_inflated_warning_opens_the_report_status_block_without_marking_it_incomplete() -> None:
    from dataclasses import replace

    controls = _controls("other_gold", 3, expected_accept=False)
    audit = replace(
        _typed(summarise_audit(controls, {}, threshold=ACCEPT)),
        j_inflated="J inflated (the judge accepted 5/5 x)",
    )
    summary = _summary(
        status={"f1": "ok", "judge": "ok"},
        judge={"trust": TrustSummary(audit=audit).to_json()},
    )
    assert not summary.incomplete
    assert render_status(summary) == (
        "## Run status: WARNING\n\n- **Warning: J inflated (the judge accepted 5/5 x).**"
    )


def _summary(status: dict[str, str], judge: dict[str, object]) -> RunSummary:
    from locomo_exp.scoring.summary import build_summary

    return build_summary(
        [],
        [],
        input_info={"path": "x.json", "sha256": "0", "format": "qa_results"},
        versions={},
        category_names={1: "multi_hop"},
        judge=judge,
        status=status,
    )


# -- whole runs against the fake Messages API -------------------------------------------


ONE_RUN = (
    "scorer=both", "judge.runs=1", "judge.min_successful_runs=1",
    "judge.retry_initial_backoff_s=0.001", "judge.retry_max_backoff_s=0.01", "judge.max_retries=0",
)


@pytest.mark.parametrize(
    ("reply", "extra", "reason"),
    [
        pytest.param(text("I cannot decide."), (), "parse failure", id="all-unparseable"),
        pytest.param(
            error(500, "boom"), ("judge.max_error_rate=1.0",), "API error", id="all-api-errors"
        ),
    ],
)
def test_a_judge_without_one_valid_verdict_fails_the_run_and_marks_it_incomplete(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    run_judged,  # type: ignore[no-untyped-def]
    reply,  # type: ignore[no-untyped-def]
    extra: tuple[str, ...],
    reason: str,
) -> None:
    from locomo_exp.experiment import JudgeErrorRateExceeded

    fake_anthropic.responder = lambda request: reply
    with pytest.raises(JudgeErrorRateExceeded, match="^no valid judge verdict: "):
        run_judged(*ONE_RUN, "judge.audit.n=0", *extra)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"]["judge"].startswith("failed: no valid judge verdict: ")
    assert reason in summary["status"]["judge"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Run status: INCOMPLETE" in report
    assert "- judge: failed: no valid judge verdict" in report


def test_accept_all_judge_prints_and_reports_that_j_is_inflated(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    run_judged,  # type: ignore[no-untyped-def]
    capsys: pytest.CaptureFixture[str],
) -> None:
    from locomo_exp.cli import print_result

    fake_anthropic.responder = accept_all()
    result = run_judged(*ONE_RUN, "judge.audit.n=5", "judge.audit.max_share=null")
    audit = result.summary["judge"]["trust"]["audit"]
    warnings = result.summary["judge"]["trust"]["warnings"]
    assert warnings[0].startswith("J inflated (the judge accepted 5/5 known-wrong")
    # the same warning wherever the status appears (trial 4, finding 4b): not "judge ok"
    assert result.summary["status"] == {"f1": "ok", "judge": "warning: " + "; ".join(warnings)}
    assert audit["gate"] == {"state": "not set", "passed": False, "failures": [], "message": ""}
    assert audit["j_inflated"].startswith("J inflated (the judge accepted 5/5 known-wrong")
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["judge"]["warnings"] == warnings
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Run status: WARNING" in report
    assert report.index("## Run status: WARNING") < report.index("## LLM-as-a-Judge J")
    print_result(result)
    out = capsys.readouterr().out
    assert "WARNING: J inflated (the judge accepted 5/5 known-wrong" in out
