"""Judge trust of judged LoCoMo-Plus runs: audit controls, human labels, a judge panel.

Invented items (no LoCoMo-Plus text): two conversations, each with four Cognitive items
(a cue, no reference answer) and two single-hop items. The fake OpenAI judge on 127.0.0.1
is scripted per prompt, so every count below is worked out by hand; each statistic is
checked against an independent computation (statsmodels' kappa, the Wilson interval and
the Rogan-Gladen estimate and bootstrap written out here).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_openai import FAKE_OPENAI_KEY, FakeOpenAIServer
from fake_server import Reply
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from locomo_exp.benchmarks.locomo_plus.job import run_locomo_plus
from locomo_exp.judge import JudgeError

Z95 = 1.959963984540054
REPLY_RE = re.compile(r"<reply>\n(.*?)\n</reply>", re.S)
CUE_RE = re.compile(r"<cue>\n(.*?)\n</cue>", re.S)
GOLD_RE = re.compile(r"<reference_answer>\n(.*?)\n</reference_answer>", re.S)
RELATIONS = ("causal", "state", "goal", "value")


def _items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for conv in range(2):
        for k, relation in enumerate(RELATIONS):
            items.append({
                "category": "Cognitive", "question_input": f"User: plans for day {conv}{k}?",
                "evidence": f"User: invented cue {conv}{k} about topic {relation}",
                "ground_truth": "", "prediction": f"Reply {conv}{k} using topic {relation}",
                "conversation": conv, "relation_type": relation})
        for k in range(2):
            items.append({
                "category": "single-hop", "question_input": f"Which colour {conv}{k}?",
                "evidence": "", "ground_truth": f"colour{conv}{k}",
                "prediction": f"answer{conv}{k}", "conversation": conv})
    return items


ITEMS = _items()
"""12 items; ids ``#0`` ... ``#11`` (the authors' layout numbers its rows)."""

JUDGE_ACCEPTS = {0, 1, 2, 4, 5, 6, 8, 10}
"""Rows whose real reply the main judge labels correct (8 of 12)."""


def _label(prompt: str, accepted_replies: set[str]) -> str:
    reply = REPLY_RE.search(prompt).group(1)  # type: ignore[union-attr]
    cue, gold = CUE_RE.search(prompt), GOLD_RE.search(prompt)
    own = (cue or gold).group(1)  # type: ignore[union-attr]
    if reply in accepted_replies:
        return "correct"
    if reply == own:  # gold_as_answer: the item's own cue or reference restated
        return "wrong" if own == "colour11" else "correct"  # one false reject
    if cue and reply.startswith("User: invented cue") and own.endswith("cue 00 about topic causal"):
        return "correct"  # another item's cue accepted for item #0: one false accept
    return "wrong"


def _responder(request: Any) -> Reply:
    accepted = {ITEMS[i]["prediction"] for i in JUDGE_ACCEPTS}
    if request.body["model"].startswith("gpt-4.1-mini"):  # the panel's second judge
        accepted = {ITEMS[i]["prediction"] for i in JUDGE_ACCEPTS - {0, 1}}
    label = _label(request.prompt, accepted)
    return Reply(text=json.dumps({"label": label, "reason": "invented"}))


@pytest.fixture
def run(typed_config: Any, fake_openai: FakeOpenAIServer, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(ITEMS), encoding="utf-8")
    fake_openai.responder = _responder

    def _run(*overrides: str, out: str = "out") -> Any:
        cfg = typed_config(
            "benchmark=locomo_plus", "scorer=judge", "data=file", f"data.path={answers}",
            "tracking.enabled=false", f"judge.base_url={fake_openai.base_url}",
            f"judge.cache_path={tmp_path}/cache.sqlite", "judge.progress=false",
            "report.bootstrap_samples=20", *overrides)
        return run_locomo_plus(cfg, tmp_path / out, tmp_path)

    return _run


def wilson(k: int, n: int) -> tuple[float, float]:  # Wilson (1927), by hand
    p = k / n
    centre = p + Z95**2 / (2 * n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return (centre - half) / (1 + Z95**2 / n), (centre + half) / (1 + Z95**2 / n)


AUDIT = ("judge.audit.n=12", "judge.audit.max_share=null",
         "judge.audit.kinds=[gold_as_answer,other_gold,non_answer]")


def test_cognitive_controls_restate_the_cue_or_carry_another_items_cue(
    run: Any, fake_openai: FakeOpenAIServer
) -> None:
    result = run(*AUDIT)
    requests = fake_openai.messages_requests()
    # 12 items; controls: every item restated (12), every Cognitive item given another cue
    # of its conversation (8) and every single-hop item the other one's gold (4), and a
    # non-answer for each of the 12
    assert len(requests) == 12 + 12 + 12 + 12
    cue_controls = [r.prompt for r in requests if "<cue>" in r.prompt
                    and REPLY_RE.search(r.prompt).group(1)  # type: ignore[union-attr]
                    == CUE_RE.search(r.prompt).group(1)]  # type: ignore[union-attr]
    assert len(cue_controls) == 8  # the reply restating its own cue, judged with the cue
    audit = result.summary["judge"]["trust"]["audit"]
    assert audit["controls"] == 36
    kinds = audit["kinds"]
    assert {k: kinds[k]["accept"]["successes"] for k in kinds} == {
        "gold_as_answer": 11, "other_gold": 1, "non_answer": 0}
    fa, fr = audit["false_accept"], audit["false_reject"]
    assert (fa["successes"], fa["n"], fr["successes"], fr["n"]) == (1, 24, 1, 12)
    for got, (k, n) in ((fa, (1, 24)), (fr, (1, 12))):
        low, high = wilson(k, n)
        assert got["rate"] == pytest.approx(k / n)
        assert (got["ci_low"], got["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    # the figures are the 12 items' alone: 8 accepted
    assert result.summary["readings"]["ours"]["overall"] == pytest.approx(8 / 12, abs=1e-4)
    assert any(line.startswith("Judge audit (36 controls, one item each): false-accept 4.2%")
               for line in result.console)
    report = (result.output_dir / "report.md").read_text(encoding="utf-8")
    assert "## Judge audit" in report
    assert result.metrics["audit/false_accept_rate"] == pytest.approx(100 / 24)
    assert result.metrics["audit/false_reject_rate"] == pytest.approx(100 / 12)
    assert result.summary["run_log"]["trust"]["false_accept_rate"] == pytest.approx(1 / 24)
    # the run log's spend is the whole job's (issue 29): the 12 items and the 36 controls
    spend, judge = result.summary["run_log"]["judge"], result.summary["judge"]
    assert spend["calls"] == 48 == judge["counts"]["calls_made"] + audit["calls_made"]
    assert spend["cost_usd"] == pytest.approx(
        judge["estimated_cost_usd"] + audit["estimated_cost_usd"])
    assert spend["cost_usd"] == pytest.approx(judge["trust"]["total_cost_usd"])
    assert spend["cost_usd"] > judge["estimated_cost_usd"] > 0
    # a re-run pays nothing: the items and the controls are answered from the cache
    again = run(*AUDIT, out="again")
    assert len(fake_openai.messages_requests()) == 48
    assert again.summary["run_log"]["judge"]["calls"] == 0
    assert again.summary["run_log"]["judge"]["cost_usd"] == 0.0
    kinds_again = again.summary["judge"]["trust"]["audit"]["kinds"]
    assert {k: v["accept"] for k, v in kinds_again.items()} == {
        k: v["accept"] for k, v in kinds.items()}
    assert kinds_again["other_gold"]["cost_usd"] == 0.0  # cached: nothing paid


def test_the_audit_gate_fails_the_run_after_the_outputs_are_written(run: Any) -> None:
    result = run(*AUDIT, "judge.audit.max_false_accept=0.01")
    assert result.exit_status == 1
    assert result.console[-1].startswith("error: ") and "false-accept" in result.console[-1]
    assert (result.output_dir / "summary.json").exists()


def test_the_audit_is_capped_by_max_share_and_counted_in_the_spend_cap(
    run: Any, fake_openai: FakeOpenAIServer
) -> None:
    capped = run("judge.audit.n=12", "judge.dry_run=true", out="capped")
    estimate = capped.summary["judge"]["dry_run"]
    # 12 item calls, max_share 0.25: at most 3 control calls (one per default kind at n=...)
    assert estimate["calls_to_make"] == 12
    assert 0 < estimate["audit_calls_to_make"] <= 3
    dry = run(*AUDIT, "judge.dry_run=true", out="dry")
    estimate = dry.summary["judge"]["dry_run"]
    assert (estimate["calls_to_make"], estimate["audit_calls_to_make"]) == (12, 36)
    assert estimate["total_calls_to_make"] == 48
    assert any("with 36 audit control and 0 panel calls: 48 to make" in line
               for line in dry.console)
    assert fake_openai.messages_requests() == []  # a dry run calls nothing
    items_only = float(estimate["estimated_cost_usd"])
    between = (items_only + float(estimate["total_estimated_cost_usd"])) / 2
    with pytest.raises(JudgeError, match="max_cost_usd"):
        run(*AUDIT, f"judge.max_cost_usd={between:.8f}", out="refused")
    assert fake_openai.messages_requests() == []  # refused before any call
    assert not (Path(dry.output_dir).parent / "refused" / "summary.json").exists()


def _labels(tmp_path: Path) -> Path:
    # human: rows 0-5 and 8 correct, 6, 7, 9, 10, 11 wrong; row 3 left ambiguous
    human = {0: "correct", 1: "correct", 2: "correct", 3: "ambiguous", 4: "correct",
             5: "correct", 6: "wrong", 7: "wrong", 8: "correct", 9: "wrong", 10: "wrong",
             11: "wrong"}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps([{"id": f"#{i}", "label": v} for i, v in human.items()]),
                    encoding="utf-8")
    return path


def test_labels_give_cohens_kappa_and_the_rogan_gladen_corrected_accuracy(
    run: Any, tmp_path: Path
) -> None:
    result = run("judge.audit.n=0", f"judge.labels={_labels(tmp_path)}")
    trust = result.summary["judge"]["trust"]
    overall = trust["labels"]["overall"]
    # 11 labelled (row 3 ambiguous). Human correct: 0,1,2,4,5,8 (judge accepts all 6: tp 6,
    # fn 0); human wrong: 6,7,9,10,11 (judge accepts 6 and 10: fp 2, tn 3)
    assert (overall["tp"], overall["fn"], overall["fp"], overall["tn"]) == (6, 0, 2, 3)
    table = np.array([[6, 0], [2, 3]])
    assert overall["kappa"] == pytest.approx(sm_kappa(table).kappa)
    po, pe = 9 / 11, (6 * 8 + 5 * 3) / 121  # Cohen (1960), by hand
    assert overall["kappa"] == pytest.approx((po - pe) / (1 - pe))
    corrected = trust["corrected"]
    sens, spec, raw = 6 / 6, 3 / 5, 8 / 12
    assert corrected["source"] == "labels"
    assert corrected["raw"] == pytest.approx(raw)
    assert corrected["value"] == pytest.approx((raw + spec - 1) / (sens + spec - 1))  # 4/9
    # the interval: the two-sample percentile bootstrap, written out replicate by replicate
    accepts = np.array([i in JUDGE_ACCEPTS for i in range(12)])
    labelled = [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11]
    ref = np.array([i in {0, 1, 2, 4, 5, 8} for i in labelled])
    got = np.array([i in JUDGE_ACCEPTS for i in labelled])
    rng = np.random.default_rng(corrected["seed"])
    n_boot = corrected["n_boot"]
    j_star = [accepts[rng.integers(0, 12, size=12)].mean() for _ in range(n_boot)]
    estimates = []
    for j in j_star:
        idx = rng.integers(0, 11, size=11)
        r, g = ref[idx], got[idx]
        if r.all() or not r.any():
            continue
        se, sp = (r & g).sum() / r.sum(), (~r & ~g).sum() / (~r).sum()
        if se + sp - 1 > 0:
            estimates.append(min(1.0, max(0.0, (j + sp - 1) / (se + sp - 1))))
    low, high = np.quantile(estimates, [0.025, 0.975])
    assert (corrected["ci_low"], corrected["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert result.metrics["labels/overall/kappa"] == pytest.approx(overall["kappa"])
    assert result.metrics["j_corrected/overall"] == pytest.approx(100 * 4 / 9)
    report = (result.output_dir / "report.md").read_text(encoding="utf-8")
    # the report names the figure as the console does (issue 29: not LoCoMo's "Corrected J")
    assert "## Corrected accept rate" in report and "## Corrected J" not in report
    assert "- Corrected accept rate: **44.4%**" in report and "human labels" in report
    assert "The raw mean label score stays the headline." in report
    assert any("Cohen's kappa" in line for line in result.console)
    assert any(line.startswith("Corrected accept rate (Rogan-Gladen, from labels): 44.4%")
               for line in result.console)
    assert result.summary["run_log"]["trust"]["corrected"]["value"] == pytest.approx(4 / 9)


def test_a_bad_labels_file_is_refused_before_any_call(
    run: Any, tmp_path: Path, fake_openai: FakeOpenAIServer
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "#0", "label": "maybe"}]), encoding="utf-8")
    with pytest.raises(JudgeError, match=r"judge.labels: .*bad.json"):
        run(f"judge.labels={bad}")
    assert fake_openai.messages_requests() == []
    assert not (tmp_path / "out").exists() or not (tmp_path / "out" / "summary.json").exists()


def test_a_panel_judges_every_item_with_each_member(
    run: Any, fake_openai: FakeOpenAIServer
) -> None:
    result = run("judge.audit.n=0", "judge.panel=[gpt-4o-mini,gpt-4.1-mini]")
    models = [r.body["model"] for r in fake_openai.messages_requests()]
    # the run's judge is gpt-4o-mini: its panel calls are the items' own, from the cache
    assert len(models) == 24
    assert sum(m.startswith("gpt-4.1-mini") for m in models) == 12
    panel = result.summary["judge"]["trust"]["panel"]
    assert len(panel["models"]) == 2
    per_model = panel["accept_per_model"]
    accepts = sorted(v for v in per_model.values())
    assert accepts == pytest.approx([100 * 6 / 12, 100 * 8 / 12])
    # two raters on a nominal scale, no missing verdict: Krippendorff's alpha by hand
    a = [i in JUDGE_ACCEPTS for i in range(12)]
    b = [i in JUDGE_ACCEPTS - {0, 1} for i in range(12)]
    values = a + b
    n = len(values)
    ones = sum(values)
    disagree_pairs = sum(x != y for x, y in zip(a, b, strict=True))
    d_o = 2 * disagree_pairs / n  # observed disagreement (pairable values: 2 per unit)
    d_e = 2 * ones * (n - ones) / (n * (n - 1))  # expected
    assert panel["alpha"] == pytest.approx(1 - d_o / d_e)
    assert "## Judge panel" in (result.output_dir / "report.md").read_text(encoding="utf-8")
    assert result.metrics["panel/alpha"] == pytest.approx(panel["alpha"])
