"""LoCoMo-Plus's figures on invented items: label map, means over items, the factual average
both ways, the gap, and the conversation interval checked against a plain re-computation."""

from __future__ import annotations

import numpy as np
import pytest

from locomo_exp.benchmarks.locomo_plus.figures import ScoredItem, compute_figures

FACTUAL = ("multi-hop", "temporal", "common-sense", "single-hop", "adversarial")


def _items() -> list[ScoredItem]:
    # single-hop has 3 items at 0, the other factual categories 1 item at 1: the two
    # factual averages differ (unweighted 0.8, item-weighted 4/7)
    items = [ScoredItem(c, None, k, 1.0) for k, c in enumerate(FACTUAL) if c != "single-hop"]
    items += [ScoredItem("single-hop", None, k, 0.0) for k in (5, 6, 7)]
    items += [ScoredItem("Cognitive", "goal", 8, 0.5), ScoredItem("Cognitive", "value", 9, 0.0),
              ScoredItem("Cognitive", "value", 9, None, "failed judge call (API error), not a "
                         "verdict")]
    return items


def test_factual_average_both_ways_and_the_gap() -> None:
    f = compute_figures(_items(), samples=0, seed=0)
    assert f["factual"]["unweighted"] == 0.8
    assert f["factual"]["item_weighted"] == round(4 / 7, 4) == 0.5714
    assert f["cognitive"] == 0.25  # partial 0.5 and wrong 0; the failed call is left out
    assert f["gap"] == {"unweighted": 0.55, "item_weighted": round(0.5714 - 0.25, 4)}
    assert f["overall"] == round(4.5 / 9, 4)  # mean over the 9 scored items
    assert (f["n_items"], f["n_scored"], f["n_unscored"]) == (10, 9, 1)
    assert f["by_relation"]["value"] == {"n": 2, "n_scored": 1, "score": 0.0, "mean": 0.0}
    assert f["by_category"]["single-hop"]["mean"] == 0.0


def test_the_unweighted_factual_average_needs_all_five_categories() -> None:
    items = [i for i in _items() if i.category != "adversarial"]
    f = compute_figures(items, samples=0, seed=0)
    assert f["factual"]["unweighted"] is None and f["gap"]["unweighted"] is None
    assert f["factual"]["item_weighted"] == round(3 / 6, 4)


def test_all_api_errors_is_not_measured() -> None:
    failed = [ScoredItem("temporal", None, None, None, "failed judge call (API error), not a "
                         "verdict")] * 3
    f = compute_figures(failed, samples=100, seed=0)
    assert f["status"] == "3 of 3 stored verdicts are API errors; accuracy not measured"
    assert f["overall"] is None and f["overall_ci"] is None


def _plain_cluster_interval(scores, convs, samples, seed):
    """The cluster bootstrap written out plainly: draw 10 conversations with replacement,
    pool their items' scores, take the 2.5% and 97.5% percentiles of the pooled means."""
    labels = sorted({str(c) for c in convs})
    by_label = {lab: [s for s, c in zip(scores, convs, strict=True) if str(c) == lab] for lab in labels}
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(samples, len(labels)))
    means = []
    for row in draws:
        pooled = [s for k in row for s in by_label[labels[k]]]
        means.append(sum(pooled) / len(pooled))
    low, high = np.quantile(means, [0.025, 0.975])
    return [round(float(low), 4), round(float(high), 4)]


def test_the_conversation_interval_equals_a_plain_recomputation() -> None:
    rng = np.random.default_rng(7)
    items = [ScoredItem("Cognitive", "causal", int(c), float(rng.random() < 0.3 + 0.05 * c))
             for c in rng.integers(0, 10, size=200)]
    f = compute_figures(items, samples=1000, seed=3)
    expected = _plain_cluster_interval([i.score for i in items], [i.conversation for i in items],
                                       1000, 3)
    assert f["overall_ci"] == expected
    assert f["cognitive_ci"] == expected
    assert expected[0] < f["overall"] < expected[1]


def test_no_interval_when_a_conversation_is_unknown() -> None:
    items = [ScoredItem("temporal", None, None, 1.0), ScoredItem("temporal", None, 1, 0.0)]
    assert compute_figures(items, samples=100, seed=0)["overall_ci"] is None


@pytest.mark.parametrize("label", ["partial", " Partial "])
def test_partial_is_half(label: str) -> None:
    from locomo_exp.benchmarks.locomo_plus.facts import label_score

    assert label_score(label) == 0.5
    assert label_score("incorrect") == 0.0 and label_score("") == 0.0
