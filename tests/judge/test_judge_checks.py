"""The judge's checks: J inflated or deflated, wherever the status appears (trial 4, finding 4).

A broken judge's J was reported as ``judge: ok``: (a) a LongMemEval judge that rejected every
gold answer, (b) a LoCoMo judge that accepts everything (the warning was in the report but
not in summary.json's status nor MLflow), (c) the README's small audit, 1 control per kind,
where no per-kind interval can lie above 50%. The checks' intervals are checked against
statsmodels' Wilson interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, accept_all, judged_item, text
from lme_helpers import GPT4O, REFERENCE, need_shared
from statsmodels.stats.proportion import proportion_confint

from locomo_exp.benchmark import LOCOMO
from locomo_exp.benchmarks.longmemeval.facts import JUDGE_CHECKS as LME_CHECKS
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.report.run_dir import run_dir_state
from locomo_exp.results import QARecord, RunSummary
from locomo_exp.stats.agreement import wilson_interval
from locomo_exp.trust.audit import summarise_audit
from locomo_exp.trust.checks import agreement_checks, warning_status
from locomo_exp.trust.controls import AuditControl
from locomo_exp.trust.summary import check_audit

ACCEPT = get_protocol("rubric").accept_threshold


def _controls(kind: str, n: int, expected_accept: bool) -> list[AuditControl]:
    return [
        AuditControl(
            record=QARecord(
                question_id=f"audit:{kind}:q{i}", question=f"q{i}?", ground_truth="gold",
                prediction="answer", category=1 + i % 4, conversation_id="c1",
            ),
            kind=kind,
            expected_accept=expected_accept,
            source_question_id=f"q{i}",
        )
        for i in range(n)
    ]


def _ci(successes: int, n: int) -> str:
    low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    return f"{100 * successes / n:.1f}%, 95% CI [{100 * low:.1f}, {100 * high:.1f}]"


WRONG_KINDS = ("other_gold", "perturbed_date", "perturbed_number", "non_answer")


@pytest.mark.parametrize(
    ("kinds", "verdict"),
    [
        pytest.param(4, "J inflated", id="4-kinds-4-of-4-pooled-low-51"),
        pytest.param(3, "not measured (n too small: pooled false-accept 3/3", id="3-of-3"),
    ],
)
def test_a_small_audit_is_checked_pooled_over_its_kinds(kinds: int, verdict: str) -> None:
    controls = [c for kind in WRONG_KINDS[:kinds] for c in _controls(kind, 1, False)]
    checks = check_audit(summarise_audit(controls, dict.fromkeys(
        (c.control_id for c in controls), 100.0), threshold=ACCEPT))
    assert checks.verdicts["false_accept"].startswith(verdict)
    low = proportion_confint(kinds, kinds, alpha=0.05, method="wilson")[0]
    assert (low > LOCOMO.judge_checks.inflated_above) is (kinds == 4)  # the rule, by statsmodels
    if kinds == 4:
        assert checks.warnings == (
            "J inflated (the judge accepted 4/4 known-wrong controls of 4 kinds pooled: "
            f"false-accept {_ci(4, 4)})",
        )
    else:
        assert checks.warnings == ()
    assert checks.verdicts["false_reject"] == (
        "not measured (no should-be-accepted control got a verdict)"
    )


def test_a_measured_sound_judge_is_said_not_inflated_with_its_interval() -> None:
    controls = _controls("other_gold", 40, False) + _controls("gold_as_answer", 40, True)
    verdicts = {c.control_id: 100.0 if c.expected_accept else 0.0 for c in controls}
    checks = check_audit(summarise_audit(controls, verdicts, threshold=ACCEPT))
    assert checks.warnings == ()
    assert checks.verdicts == {
        "false_accept": f"not inflated: pooled false-accept 0/40 ({_ci(0, 40)}) lies below 50%",
        "false_reject": f"not deflated: pooled false-reject 0/40 ({_ci(0, 40)}) lies below 50%",
    }


def test_a_judge_that_rejects_the_gold_is_said_to_deflate_j() -> None:
    controls = _controls("gold_as_answer", 50, True) + _controls("other_gold", 50, False)
    checks = check_audit(summarise_audit(controls, dict.fromkeys(
        (c.control_id for c in controls), 0.0), threshold=ACCEPT))
    assert checks.warnings == (
        "J deflated (the judge rejected 50/50 known-right gold_as_answer controls: "
        f"false-reject {_ci(50, 50)})",
    )
    assert checks.verdicts["false_reject"] == "J deflated"


def test_agreement_with_a_reference_checks_sensitivity_specificity_and_kappa() -> None:
    limits = LME_CHECKS
    found = agreement_checks(
        "the stored verdicts", sensitivity=wilson_interval(0, 362),
        specificity=wilson_interval(138, 138), kappa=0.0, n=500, limits=limits,
    )
    assert found.warnings == (
        "J deflated (the judge accepted 0/362 of the answers the stored verdicts call correct: "
        f"sensitivity {_ci(0, 362)})",
        "low agreement with the stored verdicts (Cohen's κ 0.000 over 500 answers, below 0.2)",
    )
    few = agreement_checks(  # kappa over fewer answers than kappa_min_n: no verdict on it
        "the human labels", sensitivity=wilson_interval(3, 5), specificity=wilson_interval(3, 5),
        kappa=0.0, n=limits.kappa_min_n - 1, limits=limits,
    )
    assert few.warnings == ()


def test_a_warning_status_is_a_finished_part(tmp_path: Path) -> None:
    assert warning_status("ok", ["J inflated (x)", "J deflated (y)"]) == (
        "warning: J inflated (x); J deflated (y)"
    )
    assert warning_status("ok", []) == "ok"
    assert warning_status("failed: boom", ["J inflated (x)"]) == "failed: boom"
    (tmp_path / "report.md").write_text("r")
    (tmp_path / "summary.json").write_text(
        json.dumps({"status": {"f1": "ok", "judge": "warning: J inflated (x)"}})
    )
    assert run_dir_state(tmp_path) == "finished"  # never resumed, never "incomplete"


def test_the_readme_example_with_an_accept_all_judge_is_flagged_everywhere(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    run_judged,  # type: ignore[no-untyped-def]
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Trial 4 finding 4c: ``scorer=both judge.runs=2`` audits 1 control per kind."""
    from locomo_exp.cli import print_result
    from locomo_exp.tracking.headline import run_description

    fake_anthropic.responder = accept_all()
    result = run_judged("scorer=both", "data=example", "judge.runs=2")
    trust = result.summary["judge"]["trust"]
    kinds = [k for k, v in trust["audit"]["kinds"].items() if not v["expected_accept"]]
    n_wrong = trust["audit"]["false_accept"]["n"]
    assert all(trust["audit"]["kinds"][k]["error"]["n"] <= 2 for k in kinds)  # no kind alone
    assert trust["warnings"] == [
        f"J inflated (the judge accepted {n_wrong}/{n_wrong} known-wrong controls of "
        f"{len(kinds)} kinds pooled: false-accept {_ci(n_wrong, n_wrong)})"
    ]
    status = "warning: " + trust["warnings"][0]
    assert result.summary["status"] == {"f1": "ok", "judge": status}
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["status"]["judge"] == status
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["judge"]["warnings"] == trust["warnings"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"- **Warning: {trust['warnings'][0]}.**" in report
    assert "## Run status: WARNING" in report and "INCOMPLETE" not in report
    assert "- Check of false accepts (is J inflated?): J inflated" in report
    description = run_description(result.metrics, card, saved["status"])
    assert f"judge {status}" in description
    assert not RunSummary.from_json(saved).incomplete
    print_result(result)
    assert f"WARNING: {trust['warnings'][0]}" in capsys.readouterr().out


def test_a_longmemeval_judge_that_says_no_to_everything_is_flagged(
    typed_config, tmp_path, fake_anthropic, capsys  # type: ignore[no-untyped-def]
) -> None:
    """Trial 4 finding 4a: 0% with the judge's verdicts headlined was "j: ok (stored verdicts)"."""
    need_shared()
    fake_anthropic.responder = lambda request: text("no")
    from locomo_exp.benchmarks.longmemeval.job import run_longmemeval

    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={GPT4O}", f"data.reference={REFERENCE}", "judge.audit.n=12",
        f"judge.base_url={fake_anthropic.url}", "judge.progress=false",
    )
    result = run_longmemeval(cfg, tmp_path / "out", tmp_path)
    summary = result.summary
    assert summary["headline"]["source"] == "judge"
    warnings = summary["warnings"]
    gold = summary["audit"]["kinds"]["gold_as_answer"]["false_reject"]
    assert gold["count"] == gold["n"] == 12
    agreement = summary["judge"]["agreement_with_stored"]
    yes = agreement["stored_yes"]
    assert yes == 362 and agreement["kappa"] == 0.0
    assert warnings == [
        "J deflated (the judge rejected 12/12 expected-yes gold_as_answer controls: "
        f"false-reject {_ci(12, 12)})",
        f"J deflated (the judge accepted 0/{yes} of the answers the stored verdicts call "
        f"correct: sensitivity {_ci(0, yes)})",
        "low agreement with the stored verdicts (Cohen's κ 0.000 over 500 answers, below 0.2)",
    ]
    status = "warning: " + "; ".join(warnings)
    assert summary["status"] == {"j": status, "judge": status}
    report = (result.output_dir / "report.md").read_text()
    assert "## Run status: WARNING" in report and f"- **Warning: {warnings[0]}.**" in report
    assert "Check of false rejects (is J deflated?): J deflated." in report
    from locomo_exp.benchmarks.longmemeval import tracking as lme_tracking

    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert f"j {status}" in lme_tracking.run_description(result.metrics, summary, card)


def test_a_longmemeval_judge_whose_verdicts_are_headlined_is_not_called_stored(
    typed_config, tmp_path, fake_anthropic
) -> None:
    need_shared()
    fake_anthropic.responder = lambda request: text(
        "yes" if judged_item(request).prediction else "no"
    )
    from locomo_exp.benchmarks.longmemeval.job import run_longmemeval

    cfg = typed_config(
        "data=file", "tracking=none", "benchmark=longmemeval", "scorer=judge",
        f"data.path={GPT4O}", f"data.reference={REFERENCE}", "judge.audit.n=0",
        f"judge.base_url={fake_anthropic.url}", "judge.progress=false",
    )
    summary = run_longmemeval(cfg, tmp_path / "out", tmp_path).summary
    assert summary["status"]["j"] != "ok (stored verdicts)"
    assert summary["status"]["j"].startswith(("ok (this tool's judge)", "warning: "))


def test_a_flagged_run_says_so_first_on_its_mlflow_page(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    typed_config,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Trial 5 #16: MLflow shows a green "Finished"; the warning was behind "Show more"."""
    import mlflow

    from locomo_exp.experiment import run_experiment

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake")
    fake_anthropic.responder = accept_all()
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    cfg = typed_config(
        "scorer=judge", "data=example", f"tracking.uri={uri}", "tracking.experiment=e",
        "judge.runs=2", f"judge.base_url={fake_anthropic.url}",
        f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false",
    )
    result = run_experiment(cfg, tmp_path / "out", tmp_path)
    warnings = result.summary["judge"]["trust"]["warnings"]
    assert warnings and warnings[0].startswith("J inflated (")
    client = mlflow.MlflowClient(uri)
    (run,) = client.search_runs([client.get_experiment_by_name("e").experiment_id])
    note = run.data.tags["mlflow.note.content"].splitlines()
    assert note[0] == f"**⚠ Run status: WARNING — {warnings[0]}**"
    assert run.data.tags["run.status"] == "WARNING: J inflated"
    assert run.data.tags["run.warnings"] == warnings[0]
