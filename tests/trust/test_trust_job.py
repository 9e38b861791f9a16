"""Judge trust wired into the judge job, against the fake Messages API.

Audit gate (accept-all judge), a truth-replaying judge, human labels with a hand-computed
kappa / sensitivity / specificity / corrected J, a two-model panel with a hand-computed
majority J and Krippendorff's alpha, and the dry run's calls and cost against a real run.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import mlflow
import pytest
from conftest import CONF_DIR, EXAMPLE, run_cli
from fake_anthropic import (
    FakeAnthropicServer,
    JudgedItem,
    Reply,
    accept_all,
    judged_item,
    make_judge_config,
    per_model,
    replay_truth,
    rubric,
)

from locomo_exp.config import JudgeAuditConfig
from locomo_exp.data.read_file import load_results
from locomo_exp.judge import run_judge
from locomo_exp.judge.estimate import ESTIMATED_OUTPUT_TOKENS
from locomo_exp.judge.preflight import estimate_prompt_tokens
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.llm.errors import JudgeError
from locomo_exp.report.trust import render_trust_sections
from locomo_exp.results import QARecord, TrustSummary
from locomo_exp.tracking.trust import trust_metrics
from locomo_exp.trust.job import plan_trust, run_trust


def _metrics(outcome: TrustSummary) -> dict[str, float]:
    """The MLflow numbers of a trust outcome, as the experiment logs them: from summary.json."""
    return trust_metrics(TrustSummary.from_json(outcome.to_json()))
REJECT_KINDS_IN_EXAMPLE = ("other_gold", "perturbed_date", "perturbed_number", "non_answer")


def _trust(records, cfg, tmp_path, category_names=None):
    plan = plan_trust(records, cfg, start_dir=tmp_path)
    main = run_judge(records, cfg, start_dir=tmp_path)
    outcome = run_trust(plan, records, cfg, main, start_dir=tmp_path, category_names=category_names)
    return plan, main, outcome


def test_accept_all_judge_fails_the_audit_gate_one_line_exit_1_outputs_kept_run_tagged(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = accept_all()
    db = tmp_path / "mlflow.db"
    out = tmp_path / "out"
    proc = run_cli(
        "scorer=judge", "data=example", f"tracking.uri=sqlite:///{db}",
        "judge.runs=1", "judge.min_successful_runs=1", "judge.audit.n=5",
        "judge.audit.max_share=null",
        "judge.audit.max_false_accept=0.2", f"judge.cache_path={tmp_path}/cache.sqlite",
        f"hydra.run.dir={out}",
        cwd=tmp_path, server=fake_anthropic,
    )
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: judge audit failed: "
        "false-accept rate 100.0% (5/5) on other_gold exceeds judge.audit.max_false_accept=20.0%; "
        "false-accept rate 100.0% (4/4) on perturbed_date exceeds judge.audit.max_false_accept=20.0%; "
        "false-accept rate 100.0% (1/1) on perturbed_number exceeds judge.audit.max_false_accept=20.0%; "
        "false-accept rate 100.0% (5/5) on non_answer exceeds judge.audit.max_false_accept=20.0%; "
        f"outputs are in {out}"
    ]
    # 16 answers + 20 controls, one run each
    assert len(fake_anthropic.messages_requests()) == 36
    summary = json.loads((out / "summary.json").read_text())
    trust = summary["judge"]["trust"]
    assert trust["audit"]["gate"]["state"] == "failed" and trust["audit"]["gate"]["passed"] is False
    assert summary["judge"]["j"]["overall"]["count"] == 16  # controls never in J
    metrics = _metrics(TrustSummary.from_json(trust))
    for kind in REJECT_KINDS_IN_EXAMPLE:
        assert metrics[f"audit/{kind}/error_rate"] == 100.0
    assert metrics["audit/gold_as_answer/error_rate"] == 0.0
    assert metrics["audit/false_accept_rate"] == 100.0
    report = (out / "report.md").read_text()
    j_at = report.index("## LLM-as-a-Judge J")
    audit_at = report.index("## Judge audit")
    assert j_at < audit_at < report.index("## J vs published baselines")
    assert "| non_answer | rejected | 5 | 0 | 100.0% [56.6, 100.0] (5/5) | false accept 100.0% |" in report
    assert "- Gate (max_false_accept 20.0%, per kind): **FAILED**" in report
    mlflow.set_tracking_uri(f"sqlite:///{db}")
    run = mlflow.search_runs(experiment_names=["locomo_exp"], output_format="list")[0]
    assert run.data.tags["judge.audit_gate"] == "failed"
    # MLflow holds the pooled rates (issue 20 §3); the per-kind bounds are in metrics.json
    assert run.data.metrics["audit/false_accept_rate"] == 100.0
    assert "audit/non_answer/accept_rate" not in run.data.metrics
    assert len(run.data.metrics) <= 60
    every = json.loads(Path(mlflow.artifacts.download_artifacts(
        run_id=run.info.run_id, artifact_path="metrics.json", dst_path=str(tmp_path / "dl"))).read_text())
    assert every["audit/non_answer/accept_rate"] == 100.0
    assert every["audit/non_answer/accept_rate_ci_low"] == pytest.approx(56.55, abs=0.01)


def test_truth_replaying_judge_has_zero_false_accepts_and_zero_false_rejects(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = replay_truth()
    records = load_results(EXAMPLE).records
    cfg = make_judge_config(
        fake_anthropic, tmp_path, runs=1, min_successful_runs=1,
        audit=JudgeAuditConfig(
            n=5, max_false_accept=0.0, max_false_reject=0.0, max_share=None
        ),
    )
    _, _, outcome = _trust(records, cfg, tmp_path)
    metrics = _metrics(outcome)
    assert outcome.audit is not None and outcome.audit.gate.passed
    assert metrics["audit/false_accept_rate"] == 0.0
    assert metrics["audit/false_reject_rate"] == 0.0
    assert metrics["audit/gold_as_answer/accept_rate"] == 100.0
    for kind in REJECT_KINDS_IN_EXAMPLE:
        assert metrics[f"audit/{kind}/accept_rate"] == 0.0
    assert outcome.audit.controls == 20


# 40 invented questions: human label and our (fake) judge's verdict per question.
# TP 15, FN 5 (humans correct), FP 4, TN 16 (humans wrong).
LABELS = [True] * 20 + [False] * 20
JUDGE = [True] * 15 + [False] * 5 + [True] * 4 + [False] * 16


def _forty() -> list[QARecord]:
    return [
        QARecord(f"q{i}", f"Invented question {i}?", f"gold {i}", f"answer {i}", 1 + i % 4)
        for i in range(40)
    ]


def test_labels_give_exact_kappa_sensitivity_specificity_and_corrected_j(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    by_question = {f"Invented question {i}?": JUDGE[i] for i in range(40)}
    fake_anthropic.responder = per_model({"claude-sonnet-4-6": lambda it: by_question[it.question]})
    labels = tmp_path / "labels.json"
    labels.write_text(
        json.dumps([
            {"question_id": f"q{i}", "label": "CORRECT" if LABELS[i] else "WRONG"} for i in range(40)
        ]
        + [{"question_id": "q-none", "label": "WRONG"}])
    )
    cfg = make_judge_config(
        fake_anthropic, tmp_path, runs=1, min_successful_runs=1,
        audit=JudgeAuditConfig(n=0), labels=str(labels),
    )
    _, _, outcome = _trust(_forty(), cfg, tmp_path)
    m = _metrics(outcome)
    # agreement (15 + 16) / 40; kappa: p_o 0.775, p_e 0.5*0.475 + 0.5*0.525 = 0.5
    assert m["labels/overall/agreement"] == pytest.approx(77.5)
    assert m["labels/overall/kappa"] == pytest.approx(0.55)
    assert m["labels/overall/sensitivity"] == pytest.approx(75.0)  # 15/20
    assert m["labels/overall/specificity"] == pytest.approx(80.0)  # 16/20
    assert m["labels/n_disagreements"] == 9
    # J = 19/40 = 0.475; (0.475 + 0.8 - 1) / (0.75 + 0.8 - 1) = 0.275 / 0.55
    assert m["j_corrected/overall"] == pytest.approx(50.0)
    assert m["j_corrected/overall_ci_low"] < 50.0 < m["j_corrected/overall_ci_high"]
    sections = "\n".join(render_trust_sections(outcome))
    assert "## Agreement with human labels" in sections
    assert "- Labels matching no question: 1" in sections
    assert "### Disagreements (9 of 9 shown)" in sections
    assert "sensitivity and specificity from human labels" in sections
    assert "- Raw accept rate (share of answers with a verdict ≥ 50, not J): 47.5% (40 questions)" in sections


def test_stored_verdicts_in_the_input_give_agreement_and_kappa_with_our_judge(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    by_question = {f"Invented question {i}?": JUDGE[i] for i in range(40)}
    fake_anthropic.responder = per_model({"claude-sonnet-4-6": lambda it: by_question[it.question]})
    records = [replace(r, stored_judge_score=100.0 if LABELS[i] else 0.0) for i, r in enumerate(_forty())]
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, min_successful_runs=1, audit=JudgeAuditConfig(n=0))
    _, _, outcome = _trust(records, cfg, tmp_path)
    m = _metrics(outcome)
    assert m["stored_agreement/overall/agreement"] == pytest.approx(77.5)
    assert m["stored_agreement/overall/kappa"] == pytest.approx(0.55)
    assert "## Agreement with stored verdicts" in "\n".join(render_trust_sections(outcome))


# panel: sonnet and haiku on 10 questions: both accept 0-3, both reject 4-6,
# sonnet only 7-8, haiku only 9
SONNET = [True] * 4 + [False] * 3 + [True, True, False]
HAIKU = [True] * 4 + [False] * 3 + [False, False, True]


def test_panel_of_two_fake_models_gives_exact_majority_j_alpha_and_kappa(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    def pick(answers: list[bool]):
        return lambda item: answers[int(item.question.split()[-1].rstrip("?"))]

    fake_anthropic.responder = per_model(
        {"claude-sonnet-4-6": pick(SONNET), "claude-haiku-4-5": pick(HAIKU)}
    )
    records = _forty()[:10]
    cfg = make_judge_config(
        fake_anthropic, tmp_path, runs=1, min_successful_runs=1,
        audit=JudgeAuditConfig(n=0), panel=["sonnet-4-6", "haiku-4-5"],
    )
    plan, _, outcome = _trust(records, cfg, tmp_path)
    panel = outcome.panel
    assert panel is not None
    assert panel.j_per_model == {"claude-sonnet-4-6": 60.0, "claude-haiku-4-5": 50.0}
    assert panel.panel_j == pytest.approx(400 / 7)  # 4 accepts of 7 agreed questions
    assert panel.n_unscored == 3  # 3 ties
    # coincidences: o00 = 6, o11 = 8, o01 = o10 = 3; D_o = 6/20, D_e = 2*9*11/(20*19)
    assert panel.alpha == pytest.approx(14 / 33)
    m = _metrics(outcome)
    assert m["panel/kappa/claude-sonnet-4-6__claude-haiku-4-5"] == pytest.approx(0.4)
    # sonnet is the main judge: its panel calls are cache hits; haiku adds 10 calls
    assert len(fake_anthropic.messages_requests()) == 20
    assert panel.calls_made == 10
    # (3900 + 1300) / 3900 USD per notional call (1000 in, 60 out)
    assert plan.panel_cost_multiplier == pytest.approx(4 / 3)
    assert "  - tie: 1 accept, 1 reject: 3" in "\n".join(render_trust_sections(outcome))


def _sized(decide):
    """Replies whose usage equals the dry run's token estimate, so costs can match."""
    system = get_protocol("rubric").system_prompt

    def respond(request):
        reply = rubric(100 if decide(judged_item(request)) else 0)
        return replace(
            reply,
            input_tokens=estimate_prompt_tokens(system, request.prompt),
            output_tokens=ESTIMATED_OUTPUT_TOKENS,
        )

    return respond


def test_dry_run_calls_and_cost_match_the_real_run_with_audit_and_panel(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = _sized(lambda item: item.prediction == item.gold)
    records = load_results(EXAMPLE).records
    base = dict(
        runs=2, min_successful_runs=1, audit=JudgeAuditConfig(n=5, max_share=None),
        panel=["sonnet-4-6", "haiku-4-5"],
    )
    dry_cfg = make_judge_config(fake_anthropic, tmp_path, dry_run=True, **base)
    _, main, _ = _trust(records, dry_cfg, tmp_path)
    estimate = main.dry_run_estimate
    assert fake_anthropic.messages_requests() == []
    # answers 16 x 2, controls 20 x 1 (judge.audit.runs), haiku 16 x 2 (sonnet's panel
    # calls are the answers')
    assert estimate["calls_to_make"] == 32
    assert estimate["audit_calls_to_make"] == 20
    assert estimate["panel_calls_to_make"] == 32
    assert estimate["total_calls_to_make"] == 84
    # the dry-run block names each member: provider and model (and the endpoint, custom here)
    at = fake_anthropic.url.rstrip("/")
    assert estimate["panel_members"] == (
        f"anthropic claude-sonnet-4-6 at {at}; anthropic claude-haiku-4-5 at {at}"
    )

    real_cfg = make_judge_config(fake_anthropic, tmp_path, **base)
    _, real, outcome = _trust(records, real_cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 84
    assert outcome.audit is not None and outcome.panel is not None
    real_cost = (
        real.summary["estimated_cost_usd"]
        + outcome.audit.estimated_cost_usd
        + outcome.panel.estimated_cost_usd
    )
    assert outcome.total_cost_usd == pytest.approx(real_cost)
    assert real_cost == pytest.approx(estimate["total_estimated_cost_usd"], abs=5e-7)
    # the total is shown to a millionth of a dollar, without float noise
    assert estimate["total_estimated_cost_usd"] == round(real_cost, 6)


def test_unknown_panel_preset_and_bad_labels_file_fail_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = _forty()[:4]
    cfg = make_judge_config(fake_anthropic, tmp_path, panel=["sonnet-4-6", "gpt-9"])
    with pytest.raises(JudgeError, match=r"^judge.panel: unknown judge preset 'gpt-9' \(known: "):
        plan_trust(records, cfg, start_dir=tmp_path)
    bad = tmp_path / "labels.csv"
    bad.write_text("question_id,label\nq0,maybe\n")
    cfg = make_judge_config(fake_anthropic, tmp_path, labels=str(bad))
    with pytest.raises(JudgeError) as info:
        plan_trust(records, cfg, start_dir=tmp_path)
    assert str(info.value) == (
        f"judge.labels: labels file {bad}, row 2: field 'label': 'maybe' is not CORRECT, "
        "WRONG, AMBIGUOUS, 1 or 0"
    )
    cfg = make_judge_config(fake_anthropic, tmp_path, audit=JudgeAuditConfig(max_false_accept=5.0))
    with pytest.raises(JudgeError, match=r"^judge.audit.max_false_accept=5.0 must be a rate"):
        plan_trust(records, cfg, start_dir=tmp_path)
    assert fake_anthropic.messages_requests() == []


def test_user_control_file_is_judged_as_its_own_kind(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = accept_all()
    wrong = tmp_path / "wrong_answers.json"
    wrong.write_text(json.dumps([
        {"question_id": f"w{i}", "question": f"Q{i}?", "ground_truth": f"gold {i}",
         "predicted_answer": f"plausible but wrong {i}", "category": 1}
        for i in range(3)
    ]))
    from locomo_exp.config import AuditControlFile

    cfg = make_judge_config(
        fake_anthropic, tmp_path, runs=1, min_successful_runs=1,
        audit=JudgeAuditConfig(n=1, kinds=["gold_as_answer"], max_share=None,
                               controls=[AuditControlFile(path=str(wrong), expected="wrong")]),
    )
    _, _, outcome = _trust(_forty()[:4], cfg, tmp_path)
    m = _metrics(outcome)
    assert m["audit/user_wrong_answers/n"] == 3.0
    assert m["audit/user_wrong_answers/error_rate"] == 100.0
    assert outcome.audit is not None and outcome.audit.controls == 4


def test_judged_item_reads_the_prompt_back(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    seen: list[JudgedItem] = []

    def record(request) -> Reply:
        seen.append(judged_item(request))
        return rubric(50)

    fake_anthropic.responder = record
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, min_successful_runs=1)
    run_judge([QARecord("a", "Is 1 < 2 & 3?", "yes <b>", "no", 2)], cfg, start_dir=tmp_path)
    assert seen == [JudgedItem("claude-sonnet-4-6", 2, "Is 1 < 2 & 3?", "yes <b>", "no")]


def test_trust_config_defaults_audit_on_and_overrides_compose() -> None:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from locomo_exp.config import register_configs, to_experiment_config

    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        default = to_experiment_config(compose(config_name="config")).judge
        custom = to_experiment_config(compose(config_name="config", overrides=[
            "judge.audit.n=0", "judge.audit.max_false_accept=0.1", "judge.labels=l.csv",
            "judge.panel=[haiku-4-5,sonnet-4-6]",
            "judge.audit.controls=[{path: w.json, expected: wrong}]",
        ])).judge
    GlobalHydra.instance().clear()
    assert (default.audit.n, default.audit.seed, default.labels, list(default.panel)) == (50, 0, None, [])
    assert default.audit.max_false_accept is None and len(default.audit.kinds) == 7
    assert (custom.audit.n, custom.audit.max_false_accept, custom.labels) == (0, 0.1, "l.csv")
    assert list(custom.panel) == ["haiku-4-5", "sonnet-4-6"]
    assert (custom.audit.controls[0].path, custom.audit.controls[0].expected) == ("w.json", "wrong")


def test_audit_off_makes_no_control_call_and_no_audit_section(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = accept_all()
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, min_successful_runs=1, audit=JudgeAuditConfig(n=0))
    plan, _, outcome = _trust(load_results(EXAMPLE).records, cfg, tmp_path)
    assert plan.controls == [] and plan.audit_calls == 0
    assert len(fake_anthropic.messages_requests()) == 16
    assert outcome.audit is None and render_trust_sections(outcome) == []
