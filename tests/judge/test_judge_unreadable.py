"""Replies the judge's parser could not read are parse failures, even when a template's
``on_unparsed: {score: N}`` scores them, and a run where many are gets its own warning
instead of "J deflated" (trial 5, finding 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, run_job
from fake_anthropic import FakeAnthropicServer, make_judge_config, text

from locomo_exp.benchmark import LOCOMO
from locomo_exp.config import ScorerName
from locomo_exp.config.schema import JudgeAuditConfig
from locomo_exp.trust.checks import UNREADABLE, unreadable_checks

LABEL_JSON_ZERO = """\
name: test-label-unparsed-zero
version: "1"
user: |
  Question: {question}
  Reference: {gold_answer}
  Candidate: {generated_answer}
  Reply with JSON {{"label": "CORRECT"}} or {{"label": "WRONG"}}.
fields: {generated_answer: predicted_answer}
response_format: json_object
json_key: label
labels: {CORRECT: 100, WRONG: 0}
on_unparsed: {score: 0}
temperature: 0
"""


@pytest.mark.parametrize(
    ("failures", "total", "warned"),
    [
        pytest.param(1540, 1540, True, id="all"),
        pytest.param(5, 100, False, id="5-of-100-is-the-limit-not-above-it"),
        pytest.param(6, 100, True, id="6-of-100-above-5pct"),
        pytest.param(0, 0, False, id="nothing-judged"),
    ],
)
def test_the_unreadable_check_warns_only_above_five_percent_of_the_runs(
    failures: int, total: int, warned: bool
) -> None:
    checks = unreadable_checks(failures, total, LOCOMO.judge_checks, "")
    assert bool(checks.warnings) is warned
    if warned:
        [warning] = checks.warnings
        assert warning.startswith(f"{UNREADABLE} ({failures} of {total} judge runs could not be read, ")
        assert f"{100 * failures / total:.1f}%" in warning and "limit 5%" in warning


def test_all_replies_unreadable_and_scored_0_is_a_warning_with_the_count_not_j_deflated(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    template = tmp_path / "t.yaml"
    template.write_text(LABEL_JSON_ZERO, encoding="utf-8")
    fake_anthropic.responder = lambda request: text("CORRECT, it matches.")  # no JSON label
    judge = make_judge_config(
        fake_anthropic, tmp_path, protocol="template", template=str(template), runs=1,
        temperature=0.0, audit=JudgeAuditConfig(n=2, max_share=None),
    )  # fmt: skip
    result = run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)

    summary = json.loads((result.output_dir / "summary.json").read_text())
    counts = summary["judge"]["counts"]
    total = counts["runs_total"]
    assert total == 16
    assert counts["parse_failure"] == counts["unparsed_scored"] == total
    assert counts["valid"] == 0
    assert summary["judge"]["j"]["overall"]["mean"] == 0.0  # scored as the template asks
    status = summary["status"]["judge"]
    assert status.startswith(f"warning: {UNREADABLE} (16 of 16 judge runs could not be read, 100.0%; 16 scored 0 by on_unparsed; limit 5%)")
    warnings = summary["judge"]["trust"]["warnings"]
    assert len(warnings) == 1 and warnings[0].startswith(UNREADABLE)
    assert not any("J deflated" in w or "J inflated" in w for w in warnings)  # not the judge's fault
    # the audit got no verdict of the judge: every control's reply was unreadable
    assert summary["judge"]["trust"]["audit"]["checks"]["false_reject"].startswith("not measured")

    report = (result.output_dir / "report.md").read_text()
    assert "## Run status: WARNING" in report
    assert "- Parse failures: 16 of 16 judge runs (16 scored 0 by on_unparsed); API errors: 0" in report
    assert "unreadable replies counted as 0 for parity with the harness (16 of 16 run(s))" in report
    assert "not counted" not in report  # trial 5 finding 13: one count, said once
    rows = [json.loads(line) for line in (result.output_dir / "scores.jsonl").read_text().splitlines()]
    runs = [run for row in rows for run in row.get("j_runs") or ()]
    assert runs and all(run["unparsed_scored"] is True and run["score"] == 0.0 for run in runs)


def test_a_longmemeval_run_with_unreadable_replies_gets_the_same_warning() -> None:
    from locomo_exp.benchmarks.longmemeval.checks import with_lme_checks

    summary = with_lme_checks({
        "judge": {"counts": {"parse_failure": 30, "runs_total": 500}},
        "status": {"j": "ok", "judge": "ok"},
    })  # fmt: skip
    [warning] = summary["warnings"]
    assert warning.startswith(f"{UNREADABLE} (30 of 500 judge runs could not be read, 6.0%; limit 5%)")
    assert summary["status"]["judge"] == f"warning: {warning}"
    assert with_lme_checks({
        "judge": {"counts": {"parse_failure": 25, "runs_total": 500}},
        "status": {"j": "ok", "judge": "ok"},
    }).get("warnings") is None  # 5.0%: at the limit, not above it
