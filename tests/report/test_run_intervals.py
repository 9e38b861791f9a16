"""A run's intervals: the conversation-cluster bootstrap is the headline when conversation ids
exist (trial report item 11); an ``overall (1-5)`` row only when it adds questions (item 15).

Every cluster interval is checked against an independent computation: the exact bootstrap
distribution, enumerating all ``k**k`` ordered resamples of ``k`` conversations (each equally
likely), written here without the project's code.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_job

from locomo_exp.results import GroupStats, InputInfo, RunSummary
from locomo_exp.scoring.summary import analyse
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS, cluster_bootstrap_ci
from locomo_exp.tracking import headline_metrics, run_description, run_metrics


def _exact_interval(values: np.ndarray, conv: np.ndarray) -> tuple[float, float]:
    """2.5% and 97.5% quantiles of the pooled mean over all k**k conversation resamples."""
    ids = sorted(set(conv.tolist()))
    sums = [float(values[conv == c].sum()) for c in ids]
    sizes = [int(np.sum(conv == c)) for c in ids]
    means = [
        sum(sums[i] for i in pick) / sum(sizes[i] for i in pick)
        for pick in itertools.product(range(len(ids)), repeat=len(ids))
    ]
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def _rows(n_conv: int = 5, per_conv: int = 6, ids: bool = True) -> list[dict]:
    """Questions whose F1 depends on the conversation (so conversations matter)."""
    rng = np.random.default_rng(3)
    cats = [1, 2, 4, 4, 3, 4]
    rows = []
    for c in range(n_conv):
        level = 0.15 * c
        for q in range(per_conv):
            rows.append(
                {
                    "question_id": f"{c}:{q}",
                    "conversation_id": f"conv-{c}" if ids else None,
                    "category": cats[q % len(cats)],
                    "f1": float(np.clip(level + rng.uniform(0.0, 0.3), 0.0, 1.0)),
                }
            )
    return rows


def test_cluster_interval_matches_the_exact_bootstrap_distribution() -> None:
    rows = _rows()
    values = np.array([r["f1"] for r in rows])
    conv = np.array([r["conversation_id"] for r in rows])
    low, high = cluster_bootstrap_ci(list(values), list(conv), n_resamples=40000, seed=1)
    exact_low, exact_high = _exact_interval(values, conv)  # 5**5 = 3125 resamples
    assert (low, high) == pytest.approx((exact_low, exact_high), abs=0.01)
    # a hand-worked case: 5 conversations of one question each, values 0..4 -> the exact
    # distribution is that of the mean of 5 draws with replacement from {0, 1, 2, 3, 4}
    hand = cluster_bootstrap_ci([0.0, 1.0, 2.0, 3.0, 4.0], list("abcde"), 40000, seed=2)
    draws = [np.mean(p) for p in itertools.product(range(5), repeat=5)]
    assert hand == pytest.approx(tuple(np.quantile(draws, [0.025, 0.975])), abs=0.05)
    # fewer conversations than MIN_RUN_CLUSTERS: no interval (too few distinct resamples)
    assert cluster_bootstrap_ci([0.1, 0.9, 0.5, 0.4], ["a", "b", "c", "d"]) is None
    assert MIN_RUN_CLUSTERS == 5


def test_analysis_heads_with_the_cluster_interval_labelled_and_keeps_the_question_one() -> None:
    rows = _rows()
    analysis = analyse(rows, bootstrap_samples=20000, seed=0)
    values = np.array([r["f1"] for r in rows])
    conv = np.array([r["conversation_id"] for r in rows])
    overall = analysis.cluster_bootstrap["f1"]["overall"]
    assert overall is not None
    assert (overall.low, overall.high) == pytest.approx(_exact_interval(values, conv), abs=0.01)
    four = np.array([r["category"] == 4 for r in rows])
    cat4 = analysis.cluster_bootstrap["f1"]["4"]
    assert cat4 is not None
    assert (cat4.low, cat4.high) == pytest.approx(
        _exact_interval(values[four], conv[four]), abs=0.01
    )
    assert analysis.cluster_bootstrap["f1"]["5"] is None  # no category-5 question
    assert analysis.headline == "conversation" and analysis.headline_note == ""
    assert analysis.clusters == {
        "1": 5, "2": 5, "3": 5, "4": 5, "5": 0, "overall_1_4": 5, "overall": 5
    }
    question = analysis.bootstrap["f1"]["overall"]
    assert question is not None and question.high - question.low < overall.high - overall.low

    data = analysis.to_json()
    assert data["intervals"]["headline"] == "conversation"
    conversation = data["intervals"]["conversation"]
    assert conversation["method"].startswith("percentile cluster bootstrap: whole conversations")
    assert (conversation["resamples"], conversation["seed"]) == (20000, 0)
    assert conversation["clusters"]["overall"] == 5
    assert data["intervals"]["question"]["method"].startswith("percentile bootstrap: questions")
    assert data["cluster_bootstrap"]["f1"]["overall"] == [overall.low, overall.high]
    assert data["bootstrap"]["f1"]["overall"] == [question.low, question.high]
    assert type(analysis).from_json(data) == analysis


def test_without_conversation_ids_the_interval_is_question_level_and_says_why() -> None:
    analysis = analyse(_rows(ids=False), bootstrap_samples=200)
    assert analysis.headline == "question" and analysis.cluster_bootstrap == {}
    assert analysis.headline_note.startswith("the input has no conversation ids: questions are")
    data = analysis.to_json()
    assert "conversation" not in data["intervals"] and "cluster_bootstrap" not in data
    assert data["intervals"]["note"] == analysis.headline_note
    few = analyse(_rows(n_conv=3), bootstrap_samples=200)
    assert few.headline == "question"
    assert few.headline_note.startswith("3 conversations: a conversation-cluster interval needs at least 5")


def test_real_run_reports_mlflow_and_summary_read_the_cluster_interval(tmp_path: Path, shared_data: Path) -> None:
    result = run_job(tmp_path, format="auto", path=shared_data / "predictions" / "memobase_eval_0710.json")
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    cluster = summary["analysis"]["cluster_bootstrap"]["f1"]["overall"]
    question = summary["analysis"]["bootstrap"]["f1"]["overall"]
    assert summary["analysis"]["intervals"]["conversation"]["clusters"]["overall"] == 10
    assert cluster[1] - cluster[0] > question[1] - question[0]  # 10 conversations: wider

    report = (out / "report.md").read_text()
    section = report.split("## Uncertainty\n\n")[1].split("\n## ")[0]
    assert "**Conversations** (the headline, read this one)" in section
    assert "| category | conv. | F1 95% CI (conversations) | F1 95% CI (questions) |" in section
    assert f"| overall (1-4) | 10 | {100 * cluster[0]:.2f} – {100 * cluster[1]:.2f} | " in section
    assert "| overall (1-5)" not in report and "| **overall (1-5)**" not in report  # no cat. 5
    assert "No overall (1-5) row: the input has no category-5 question, so it equals overall (1-4)." in report

    metrics = run_metrics(summary, {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"})
    assert metrics["f1/overall_ci_low"] == pytest.approx(100 * cluster[0])
    assert metrics["question_ci/f1/overall_low"] == pytest.approx(100 * question[0])
    logged = headline_metrics(metrics)
    assert "f1/overall_ci_low" in logged and not any(n.startswith("question_ci/") for n in logged)
    assert len(logged) <= 64
    card = json.loads((out / "card.json").read_text())
    text = run_description(metrics, card, summary["status"], summary["analysis"]["intervals"])
    assert "95% conversation-cluster bootstrap intervals (10 conversations, 1000 resamples, seed 0)" in text
    assert result is not None


def _summary(counts: dict[str, int]) -> RunSummary:
    stats = GroupStats(0.5, 1, 0.5, 0.5)
    return RunSummary(
        input=InputInfo(path="x.json", sha256="0" * 64, format="qa_results"),
        versions={},
        category_names={"1": "multi_hop", "5": "adversarial"},
        counts=counts,
        conversations={},
        metrics={"f1": {key: stats for key in counts}},
        latency={},
    )


@pytest.mark.parametrize(
    ("counts", "shown", "note"),
    [
        ({"1": 3, "5": 0, "overall_1_4": 3, "overall": 3}, ["1", "5", "overall_1_4"], True),
        ({"1": 3, "5": 2, "overall_1_4": 3, "overall": 5}, ["1", "5", "overall_1_4", "overall"], False),
        ({"1": 0, "5": 2, "overall_1_4": 0, "overall": 2}, ["1", "5", "overall"], False),
    ],
)
def test_an_overall_row_is_shown_only_when_it_adds_questions(counts, shown, note) -> None:
    summary = _summary(counts)
    assert summary.shown_groups == shown
    assert bool(summary.overall_note) is note
