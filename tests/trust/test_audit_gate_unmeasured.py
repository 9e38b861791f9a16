"""A gate asked for when the audit judges no control is "not measured", never passed,
and fails the run after the outputs are written (trial 5, finding 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE, run_job
from fake_anthropic import FakeAnthropicServer, accept_all, make_judge_config

from locomo_exp.cli.jobs import print_result
from locomo_exp.config import ScorerName
from locomo_exp.config.schema import JudgeAuditConfig
from locomo_exp.results import RunSummary
from locomo_exp.tracking.headline import run_description
from locomo_exp.tracking.metrics import judge_tags
from locomo_exp.trust.job import JudgeAuditFailed


@pytest.mark.parametrize(
    ("audit", "why"),
    [
        pytest.param(  # 16 answer calls x 25% = 4 audit calls: 0 controls per kind
            JudgeAuditConfig(max_false_accept=0.1),
            "no control judged: each control judged 1x (judge.audit.runs); capped at 25% of "
            "the 16 answer calls",
            id="capped-by-max_share",
        ),
        pytest.param(
            JudgeAuditConfig(n=0, max_false_reject=0.2),
            "no control judged: judge.audit.n=0 turns the audit off",
            id="audit-off",
        ),
    ],
)
def test_a_gate_with_no_control_judged_is_not_measured_and_fails_the_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, audit: JudgeAuditConfig, why: str
) -> None:
    fake_anthropic.responder = accept_all()
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1, audit=audit)
    with pytest.raises(JudgeAuditFailed) as raised:
        run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)
    message = str(raised.value)
    assert message.startswith(f"judge audit not measured: {why}")
    assert len(fake_anthropic.messages_requests()) == 16  # the answers only; J is measured

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["judge"]["j"]["overall"]["count"] == 16
    trust_audit = summary["judge"]["trust"]["audit"]
    assert trust_audit["controls"] == 0
    assert trust_audit["gate"]["state"] == "not measured"
    assert trust_audit["gate"]["passed"] is False
    assert trust_audit["gate"]["failures"][0].startswith(why)
    assert summary["status"]["judge_audit"].startswith("failed: judge audit not measured: ")
    assert judge_tags(summary["judge"])["judge.audit_gate"] == "not measured"

    report = (tmp_path / "out" / "report.md").read_text()
    section = report[report.index("## Judge audit"):]
    assert "No control was judged, so nothing about the judge was measured here." in section
    assert "**NOT MEASURED (fails)**" in section
    assert f"  - {why}" in section
    assert "| control |" not in section.split("\n## ")[0]  # no empty table


def test_no_gate_and_no_control_judged_stays_silent_about_a_gate(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = accept_all()
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1)  # capped to 0, no gate asked
    run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["judge"]["trust"].get("audit") is None
    assert "judge_audit" not in summary["status"]


def test_an_audit_capped_to_no_control_says_not_measured_wherever_j_is(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    # 16 answer calls x 25% = 4 audit calls < 7 kinds: the cap leaves 0 controls per kind
    fake_anthropic.responder = accept_all()
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1)
    run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)
    warning = "audit: not measured (0 controls: judge.audit.max_share of 16 calls)"
    assert len(fake_anthropic.messages_requests()) == 16

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["judge"]["j"]["overall"]["mean"] == pytest.approx(100.0)
    assert summary["judge"]["trust"]["warnings"] == [warning]
    assert summary["status"]["judge"] == f"warning: {warning}"
    run = RunSummary.from_json(summary)
    assert run.warnings == [warning]  # the console prints "WARNING: <each>"

    report = (tmp_path / "out" / "report.md").read_text()
    head = report.split("\n## ", 2)[:2]
    assert f"- **Warning: {warning}.**" in "\n## ".join(head)

    card = json.loads((tmp_path / "out" / "card.json").read_text())
    description = run_description({"j/overall": 100.0}, card, summary["status"], warnings=run.warnings)
    assert description.splitlines()[0] == f"**⚠ Run status: WARNING — {warning}**"


def test_the_console_prints_the_unmeasured_audit(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_anthropic.responder = accept_all()
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1)
    result = run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)
    capsys.readouterr()
    print_result(result)
    out = capsys.readouterr().out
    assert "WARNING: audit: not measured (0 controls: judge.audit.max_share of 16 calls)\n" in out


def test_an_audit_asked_off_is_not_a_warning(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = accept_all()
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1, audit=JudgeAuditConfig(n=0))
    run_job(tmp_path, scorer=ScorerName.judge, judge=judge, path=EXAMPLE)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "warnings" not in summary["judge"]["trust"]
    assert summary["status"]["judge"] == "ok"
