"""The typed trust results: summary.json holds numbers and words, and reads back exactly.

``summary.json`` -> judge -> trust is a :class:`TrustSummary`: no Markdown section and no
MLflow metric name in it (the report renders it, ``tracking.trust`` names it); it survives
the JSON round trip unchanged; the judge's dict around it keeps its keys and their order;
the layout written before these types is refused with one line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropicServer, replay_truth

from locomo_exp.report.trust import render_trust_sections
from locomo_exp.results import (
    Agreement,
    AgreementResult,
    AuditKindResult,
    AuditResult,
    CallEstimate,
    CorrectedJResult,
    DisagreementRow,
    GateResult,
    JudgeSummary,
    OlderTrustLayout,
    PanelPair,
    PanelSummary,
    Rate,
    TrustDryRun,
    TrustSummary,
)
from locomo_exp.tracking.metrics import run_metrics
from locomo_exp.tracking.trust import trust_metrics

RATE = Rate(successes=3, n=4, rate=0.75, ci_low=0.30064, ci_high=0.95441)
AGREEMENT = Agreement(tp=2, fn=1, fp=0, tn=1, agreement=RATE, kappa=0.5, sensitivity=RATE,
                      specificity=Rate(1, 1, 1.0, 0.2065, 1.0))


def _every_part() -> TrustSummary:
    audit = AuditResult(
        controls=6, calls_made=5, cache_hits=1, runs_total=6, estimated_cost_usd=0.0123,
        threshold=50.0,
        kinds={
            "gold_as_answer": AuditKindResult(
                "gold_as_answer", True, 3, 0, RATE, Rate(0, 3, 0.0, 0.0, 0.5615),
                per_category={1: RATE, 4: Rate(0, 0, None, None, None)}, cost_usd=0.004,
            ),
            "other_gold": AuditKindResult(
                "other_gold", False, 3, 1, Rate(2, 2, 1.0, 0.342, 1.0), Rate(2, 2, 1.0, 0.342, 1.0),
                notes=(("built from 2 questions only", 3),),
            ),
        },
        false_accept=Rate(2, 2, 1.0, 0.342, 1.0),
        false_reject=Rate(0, 3, 0.0, 0.0, 0.5615),
        gate=GateResult("failed", ("false-accept rate 100.0% (2/2) on other_gold exceeds 20%",),
                        "judge audit failed: false-accept rate 100.0% (2/2) on other_gold"),
        max_false_accept=0.2,
        cost_usd=0.004,
        j_inflated="J inflated (the judge accepted 2/2 known-wrong other_gold controls)",
        verdicts={"audit:gold_as_answer:q1": 100.0, "audit:other_gold:q2": None},
        j_deflated="J deflated (the judge rejected 3/3 known-right gold_as_answer controls)",
        checks={"false_accept": "J inflated", "false_reject": "J deflated"},
    )
    labels = AgreementResult(
        "human labels", AGREEMENT, per_category={1: AGREEMENT}, n_ambiguous=2, n_unmatched=1,
        n_disagreements=1,
        disagreements=(DisagreementRow("q1", 1, "When?", "May", "June", True, 0.0),),
    )
    corrected = CorrectedJResult(
        source="labels", raw=0.5, sensitivity=0.75, specificity=1.0, value=0.6666, unclipped=0.6666,
        clipped=False, reason="", ci_low=0.2, ci_high=1.0, confidence=0.95, n_questions=8,
        n_labelled=4, n_boot=2000, n_boot_invalid=3, seed=0, method="percentile bootstrap",
    )
    panel = PanelSummary(
        models=("claude-haiku-4-5", "claude-sonnet-4-6"), protocol="rubric",
        j_per_model={"claude-haiku-4-5": 50.0, "claude-sonnet-4-6": None},
        n_per_model={"claude-haiku-4-5": 4, "claude-sonnet-4-6": 0}, panel_j=None,
        n_panel_scored=0, alpha=None, alpha_level="interval",
        unscored={"tie: 1 accept, 1 reject": 3, "no verdict": 1},
        pairs=(PanelPair("claude-haiku-4-5", "claude-sonnet-4-6", AGREEMENT),),
        cost_multiplier=1.3333333333333333, calls_made=4, estimated_cost_usd=None,
    )
    return TrustSummary(
        total_cost_usd=None, audit=audit, labels=labels, stored=labels, corrected=corrected,
        panel=panel, warnings=(str(audit.j_inflated), str(audit.j_deflated)),
    )


def _through_json(trust: TrustSummary) -> TrustSummary:
    return TrustSummary.from_json(json.loads(json.dumps(trust.to_json())))


@pytest.mark.parametrize(
    "trust",
    [
        pytest.param(_every_part(), id="every-part"),
        pytest.param(TrustSummary(total_cost_usd=0.5), id="nothing-ran"),
        pytest.param(
            TrustSummary(corrected_unavailable="no labels and no audit", total_cost_usd=0.1),
            id="corrected-unavailable",
        ),
        pytest.param(
            TrustSummary(
                total_cost_usd=0.0,
                dry_run=TrustDryRun(
                    audit=CallEstimate(20, 0, 20, 0.0324, 0.06),
                    panel={"haiku-4-5": CallEstimate(16, 0, 16, 0.005, None)},
                    panel_cost_multiplier=1.25,
                ),
            ),
            id="dry-run",
        ),
    ],
)
def test_trust_summary_reads_back_exactly_through_json(trust: TrustSummary) -> None:
    back = _through_json(trust)
    assert back == trust
    assert json.dumps(back.to_json()) == json.dumps(trust.to_json())  # same keys, same order


def test_report_and_mlflow_read_the_same_from_the_object_and_from_json() -> None:
    trust = _every_part()
    names = {1: "multi_hop", 4: "single_hop"}
    assert render_trust_sections(_through_json(trust), names) == render_trust_sections(trust, names)
    assert trust_metrics(_through_json(trust), names) == trust_metrics(trust, names)
    assert "panel/claude-haiku-4-5/j" in trust_metrics(trust, names)


def test_the_layout_before_typed_results_is_refused_with_one_line() -> None:
    older = {
        "audit": {"controls": 5, "gate": "not set", "gate_passed": False},
        "total_cost_usd": 0.05,
        "sections": ["## Judge audit\n\n| control | ..."],
        "metrics": {"audit/false_accept_rate": 0.0},
    }
    with pytest.raises(OlderTrustLayout) as info:
        TrustSummary.from_json(older)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("summary.json: judge.trust was written by an older locomo_exp")
    with pytest.raises(OlderTrustLayout):
        JudgeSummary.from_json({"protocol": "rubric", "trust": older})


def test_an_unknown_gate_state_is_refused() -> None:
    data = _every_part().to_json()
    data["audit"]["gate"]["state"] = "ok"
    with pytest.raises(ValueError, match=r"audit gate state 'ok' is not one of passed, failed"):
        TrustSummary.from_json(data)


def test_judge_summary_writes_its_keys_back_in_the_order_read() -> None:
    judge = {
        "protocol": "template",
        "prompt_version": "template/mine@1",
        "template": {"name": "mine", "version": "1", "sha256": "ab" * 32},
        "krippendorff_level": "nominal",
        "provider": "anthropic",
        "endpoint": "https://api.anthropic.com",
        "endpoint_kind": "default",
        "model": "claude-sonnet-4-6",
        "temperature": None,
        "runs": 1,
        "mode": "realtime",
        "categories": [1],
        "questions": 1,
        "j": {"overall": {"mean": 100.0, "count": 1, "questions": 1, "std_across_runs": None,
                          "pooled_within_std": None, "run_means": [100.0]}},
        "counts": {"valid": 1, "calls_made": 1},
        "model_snapshot": None,
        "response_models": {},
        "prompt_too_long_questions": [],
        "tokens": {"input": 10, "output": 2},
        "estimated_cost_usd": 0.001,
        "cache_path": None,
        "wall_time_s": 0.5,
        "trust": _every_part().to_json(),
    }
    typed = JudgeSummary.from_json(judge)
    assert json.dumps(typed.to_json()) == json.dumps(judge)
    assert typed.trust == _every_part()
    assert typed.template == judge["template"]
    assert typed.total_cost_usd is None  # the trust job's total (a price unknown), not 0.001
    assert typed.other == {
        "krippendorff_level": "nominal", "questions": 1, "response_models": {},
        "cache_path": None, "wall_time_s": 0.5,
    }


# -- a whole judge run: summary.json's trust part ---------------------------------------

_MARKDOWN = re.compile(r"\||\*\*|^#", re.M)


def _walk(value: Any, path: str = "trust") -> list[tuple[str, str, str]]:
    """Every ``(path, "key" | "value", text)`` of the trust part: its keys and its strings."""
    found: list[tuple[str, str, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((path, "key", key))
            found += _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _walk(item, f"{path}[{i}]")
    elif isinstance(value, str):
        found.append((path, "value", value))
    return found


def test_summary_json_trust_part_holds_numbers_and_words_not_markdown_or_metric_names(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, run_judged, typed_config,  # type: ignore[no-untyped-def]
) -> None:
    fake_anthropic.responder = replay_truth()
    labels = tmp_path / "labels.csv"
    labels.write_text("question_id,label\nex-1-q01,CORRECT\nex-1-q02,WRONG\nex-1-q03,CORRECT\n"
                      "ex-1-q04,WRONG\nex-1-q05,AMBIGUOUS\n")
    result = run_judged(
        "scorer=judge", "data=example", "judge.runs=1", "judge.min_successful_runs=1",
        "judge.audit.n=4", "judge.audit.max_share=null", "judge.audit.max_false_accept=0.5",
        "judge.audit.max_false_reject=0.5", f"judge.labels={labels}",
        "judge.panel=[haiku-4-5,sonnet-4-6]",
    )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    trust = summary["judge"]["trust"]
    assert list(trust) == ["audit", "labels", "corrected", "panel", "total_cost_usd",
                           "total_cost_including_cached_usd"]
    assert trust["audit"]["gate"]["state"] == "passed"
    entries = _walk(trust)
    keys = [text for _, kind, text in entries if kind == "key"]
    assert len(keys) > 100 and "sections" not in keys and "metrics" not in keys
    # no Markdown: no table bar, no bold, no heading, in any key or string
    assert [(path, text) for path, _, text in entries if _MARKDOWN.search(text)] == []
    # metric names (audit/..., labels/..., panel/...) are tracking's, never summary.json's
    assert [(path, key) for path, kind, key in entries if kind == "key" and "/" in key] == []
    metrics = run_metrics(result.summary, typed_config().category_names)  # the default names
    assert metrics["audit/gate_passed"] == 100.0 and "labels/overall/kappa" in metrics
    assert not set(metrics) & {text for _, _, text in entries}
    # the report's trust sections are exactly what the typed summary.json renders
    report = (tmp_path / "out" / "report.md").read_text()
    names = {int(k): v for k, v in summary["category_names"].items()}
    for section in render_trust_sections(TrustSummary.from_json(trust), names):
        assert section in report
    assert "## Judge audit" in report and "## Judge panel" in report
