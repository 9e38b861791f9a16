"""Human labels, corrected accept rate and a judge panel of judged BEAM runs (per rubric item).

Invented answers and rubrics (no BEAM excerpt): two chats, three abilities, two rubric items
per question (12 items). The fake Anthropic judge gives item 0 of every question a 1 and
item 1 a 0 (claude-haiku-4-5 also accepts item 1 of chat 0), so every count is worked out
by hand; each statistic is checked against an independent computation (statsmodels' kappa,
Cohen's formula, Rogan-Gladen and its bootstrap written out here, Krippendorff's alpha by
hand).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from beam_helpers import mem0_file, mem0_row
from fake_anthropic import Reply, text
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.judge import JudgeError

ABILITIES = ("abstention", "summarization", "knowledge_update")
ITEM_RE = re.compile(r"<rubric_item>\n(.*?)\n</rubric_item>", re.S)


def _rows() -> list[dict[str, Any]]:
    rows = []
    for chat in range(2):
        for position, ability in enumerate(ABILITIES):
            row = mem0_row(chat, position, ability, [None, None],
                           answer=f"Invented answer of chat {chat}.")
            row["rubric"] = [f"invented fact {chat}.{position}.{k} is named" for k in range(2)]
            row["cutoff_results"]["top_10"]["nugget_scores"] = []
            rows.append(row)
    return rows


ROWS = _rows()
ITEM_IDS = [f"{r['question_id']}#item{k}" for r in ROWS for k in range(2)]
"""The 12 judged units in file order (question by question, item by item)."""
MAIN_ACCEPTS = [k == 0 for _ in ROWS for k in range(2)]
HAIKU_ACCEPTS = [k == 0 or r["conversation_idx"] == 0 for r in ROWS for k in range(2)]


def _respond(request: Any) -> Reply:
    item = ITEM_RE.search(request.prompt).group(1)  # type: ignore[union-attr]
    chat, _, k = (int(x) for x in item.split()[2].split("."))
    accept = k == 0 or (request.body["model"] == "claude-haiku-4-5" and chat == 0)
    return text(json.dumps({"score": 1 if accept else 0, "reason": "invented"}))


def _cfg(typed_config: Any, tmp_path: Path, server: Any, *extra: str) -> Any:
    mem0_file(tmp_path / "answers.json", ROWS)
    return typed_config(
        "data=file", "tracking=none", "benchmark=beam", "scorer=judge", "judge.audit.n=0",
        f"data.path={tmp_path / 'answers.json'}", f"judge.base_url={server.url}",
        "judge.progress=false", f"judge.cache_path={tmp_path / 'cache.sqlite'}", *extra)


HUMAN = [True, False, True, True, False, False, True, False, False, True, True, False]
"""Human verdict per item: judge accepts items 0, 2, 4, 6, 8, 10 (item 0 of each question).
Human correct: 0, 2, 3, 6, 9, 10 -> tp 0, 2, 6, 10 (4); fn 3, 9 (2); fp 4, 8 (2); tn 1, 5,
7, 11 (4)."""


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text("question_id,label\n" + "".join(
        f"{qid},{'correct' if ok else 'wrong'}\n" for qid, ok in zip(ITEM_IDS, HUMAN, strict=True)),
        encoding="utf-8")
    return path


def test_item_labels_give_kappa_and_the_rogan_gladen_corrected_accept_rate(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic,
                           f"judge.labels={_labels(tmp_path)}"), tmp_path / "out", tmp_path)
    assert len(fake_anthropic.messages_requests()) == 12  # labels cost no call
    trust = result.summary["judge"]["trust"]
    overall = trust["labels"]["overall"]
    assert (overall["tp"], overall["fn"], overall["fp"], overall["tn"]) == (4, 2, 2, 4)
    assert overall["kappa"] == pytest.approx(sm_kappa(np.array([[4, 2], [2, 4]])).kappa)
    po, pe = 8 / 12, (6 * 6 + 6 * 6) / 144  # Cohen (1960), by hand: 1/3
    assert overall["kappa"] == pytest.approx((po - pe) / (1 - pe))
    # per ability (its 4 items): abstention items 0-1, 6-7; summarization 2-3, 8-9;
    # knowledge_update 4-5, 10-11
    tables = {k: (v["tp"], v["fn"], v["fp"], v["tn"])
              for k, v in trust["labels"]["per_category"].items()}
    assert sorted(tables.values()) == sorted([(2, 0, 0, 2), (1, 2, 1, 0), (1, 0, 1, 2)])
    corrected = trust["corrected"]
    raw, sens, spec = 6 / 12, 4 / 6, 4 / 6
    assert corrected["raw"] == pytest.approx(raw)
    assert corrected["value"] == pytest.approx((raw + spec - 1) / (sens + spec - 1))  # 0.5
    rng = np.random.default_rng(corrected["seed"])
    accepts, ref, got = np.array(MAIN_ACCEPTS), np.array(HUMAN), np.array(MAIN_ACCEPTS)
    j_star = [accepts[rng.integers(0, 12, size=12)].mean() for _ in range(corrected["n_boot"])]
    estimates = []
    for j in j_star:
        idx = rng.integers(0, 12, size=12)
        r, g = ref[idx], got[idx]
        if r.all() or not r.any():
            continue
        se, sp = (r & g).sum() / r.sum(), (~r & ~g).sum() / (~r).sum()
        if se + sp - 1 > 0:
            estimates.append(min(1.0, max(0.0, (j + sp - 1) / (se + sp - 1))))
    low, high = np.quantile(estimates, [0.025, 0.975])
    assert (corrected["ci_low"], corrected["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    # the report names the figure as the console does (issue 28: not LoCoMo's "Corrected J")
    assert "## Corrected accept rate" in report and "## Corrected J" not in report
    assert "- Corrected accept rate: **50.0%**" in report and "summarization" in report
    assert "(12 rubric items)" in report
    assert any(line.startswith("Judge vs human labels (12 rubric items): agreement 66.7%")
               for line in result.console)
    assert result.metrics["labels/overall/kappa"] == pytest.approx(1 / 3)
    assert result.metrics["j_corrected/overall"] == pytest.approx(50.0)
    assert result.summary["run_log"]["trust"]["corrected"]["value"] == pytest.approx(0.5)


def test_a_labels_file_naming_no_item_field_is_refused_before_any_call(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("question_id,label\nx#item0,perhaps\n", encoding="utf-8")
    with pytest.raises(JudgeError, match=r"judge.labels: .*bad.csv"):
        run_beam(_cfg(typed_config, tmp_path, fake_anthropic, f"judge.labels={bad}"),
                 tmp_path / "out", tmp_path)
    assert fake_anthropic.messages_requests() == []
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_panel_judges_every_rubric_item_with_each_member(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond
    cfg = _cfg(typed_config, tmp_path, fake_anthropic, "judge.panel=[sonnet-4-6,haiku-4-5]")
    dry = run_beam(_cfg(typed_config, tmp_path, fake_anthropic,
                        "judge.panel=[sonnet-4-6,haiku-4-5]", "judge.dry_run=true"),
                   tmp_path / "dry", tmp_path)
    estimate = dry.summary["judge"]["dry_run_estimate"]
    assert estimate["panel_calls_to_make"] == 12  # haiku's; sonnet's are the items' own
    assert estimate["total_calls_to_make"] == 24
    assert fake_anthropic.messages_requests() == []
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    models = [r.body["model"] for r in fake_anthropic.messages_requests()]
    assert sorted(models) == ["claude-haiku-4-5"] * 12 + ["claude-sonnet-4-6"] * 12
    panel = result.summary["judge"]["trust"]["panel"]
    assert sorted(panel["accept_per_model"].values()) == pytest.approx([50.0, 75.0])
    a, b = MAIN_ACCEPTS, HAIKU_ACCEPTS  # nominal, two raters, no missing value
    values = a + b
    n, ones = len(values), sum(values)
    d_o = 2 * sum(x != y for x, y in zip(a, b, strict=True)) / n
    d_e = 2 * ones * (n - ones) / (n * (n - 1))
    assert panel["alpha"] == pytest.approx(1 - d_o / d_e)
    assert result.metrics["panel/alpha"] == pytest.approx(panel["alpha"])
    assert "## Judge panel" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    # the run log's spend is the whole job's: the 12 item calls and the panel's 12
    spend, judge = result.summary["run_log"]["judge"], result.summary["judge"]
    assert spend["calls"] == 24 == judge["counts"]["calls_made"] + panel["calls_made"]
    assert spend["cost_usd"] == pytest.approx(
        judge["estimated_cost_usd"] + panel["estimated_cost_usd"])
    assert spend["cost_usd"] == pytest.approx(judge["trust"]["total_cost_usd"])
    assert panel["estimated_cost_usd"] > 0
    # a re-run pays nothing: items and panel are cached
    run_beam(cfg, tmp_path / "out2", tmp_path)
    assert len(fake_anthropic.messages_requests()) == 24


def test_the_panel_counts_in_the_spend_cap_before_any_call(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    dry = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.dry_run=true"),
                   tmp_path / "dry", tmp_path)
    items_only = float(dry.summary["judge"]["dry_run_estimate"]["estimated_cost_usd"])
    # haiku costs less than sonnet: a cap just above the items alone refuses the panel
    with pytest.raises(JudgeError, match="max_cost_usd"):
        run_beam(_cfg(typed_config, tmp_path, fake_anthropic,
                      "judge.panel=[sonnet-4-6,haiku-4-5]",
                      f"judge.max_cost_usd={items_only * 1.05:.8f}"), tmp_path / "out", tmp_path)
    assert fake_anthropic.messages_requests() == []


def test_audit_rates_reach_mlflow_under_locomos_names(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.n=2",
                           "judge.audit.max_share=null",
                           "judge.audit.kinds=[gold_as_answer,non_answer]"),
                      tmp_path / "out", tmp_path)
    audit = result.summary["judge"]["audit"]
    # gold_as_answer: the item's own text as the answer; the judge gives item 1 a 0
    fr = audit["false_reject"]
    assert result.metrics["audit/false_reject_rate"] == pytest.approx(100 * fr["rate"])
    assert result.metrics["audit/false_reject_rate_ci_low"] == pytest.approx(100 * fr["ci_low"])
    assert result.metrics["audit/gold_as_answer/n"] == 2.0
    assert result.metrics["audit/non_answer/error_rate"] == pytest.approx(
        100 * audit["kinds"]["non_answer"]["rate"])


ANSWER_RE = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)


def _respond_to_controls(request: Any) -> Reply:
    item = ITEM_RE.search(request.prompt).group(1)  # type: ignore[union-attr]
    answer = ANSWER_RE.search(request.prompt).group(1)  # type: ignore[union-attr]
    chat, position, k = (int(x) for x in item.split()[2].split("."))
    if answer == item:  # gold_as_answer: rejected for item 1 of chat 0 (3 false rejects)
        accept = not (chat == 0 and k == 1)
    elif answer == "I don't know.":  # non_answer: accepted once (one false accept)
        accept = (chat, position, k) == (1, 1, 0)
    else:  # the real answers: item 0 of every question
        accept = k == 0
    return text(json.dumps({"score": 1 if accept else 0, "reason": "invented"}))


def test_without_labels_the_accept_rate_is_corrected_from_the_audit(
    typed_config: Any, tmp_path: Path, fake_anthropic: Any
) -> None:
    fake_anthropic.responder = _respond_to_controls
    result = run_beam(_cfg(typed_config, tmp_path, fake_anthropic, "judge.audit.n=20",
                           "judge.audit.max_share=null",
                           "judge.audit.kinds=[gold_as_answer,non_answer]"),
                      tmp_path / "out", tmp_path)
    corrected = result.summary["judge"]["trust"]["corrected"]
    # items: 6 of 12 accepted; controls: 12 gold_as_answer (9 accepted: sensitivity 3/4),
    # 8 non_answer outside abstention (1 accepted: specificity 7/8)
    raw, sens, spec = 6 / 12, 9 / 12, 7 / 8
    assert corrected["source"] == "audit"
    assert (corrected["raw"], corrected["sensitivity"], corrected["specificity"]) == (
        pytest.approx(raw), pytest.approx(sens), pytest.approx(spec))
    assert corrected["value"] == pytest.approx((raw + spec - 1) / (sens + spec - 1))  # 0.6
    # the bootstrap written out: controls in kind order, each in file order
    accepts = np.array(MAIN_ACCEPTS)
    ref = np.array([True] * 12 + [False] * 8)
    got = np.array([not (i < 6 and i % 2 == 1) for i in range(12)]
                   + [i == 4 for i in range(8)])
    rng = np.random.default_rng(corrected["seed"])
    j_star = [accepts[rng.integers(0, 12, size=12)].mean() for _ in range(corrected["n_boot"])]
    estimates = []
    for j in j_star:
        idx = rng.integers(0, 20, size=20)
        r, g = ref[idx], got[idx]
        if r.all() or not r.any():
            continue
        se, sp = (r & g).sum() / r.sum(), (~r & ~g).sum() / (~r).sum()
        if se + sp - 1 > 0:
            estimates.append(min(1.0, max(0.0, (j + sp - 1) / (se + sp - 1))))
    low, high = np.quantile(estimates, [0.025, 0.975])
    assert (corrected["ci_low"], corrected["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert result.metrics["j_corrected/overall"] == pytest.approx(60.0)
    assert any(line.startswith("Corrected accept rate (Rogan-Gladen, from audit): 60.0%")
               for line in result.console)
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "## Corrected accept rate" in report and "- Corrected accept rate: **60.0%**" in report
