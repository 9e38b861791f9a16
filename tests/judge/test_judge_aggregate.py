"""J aggregation: per-question reduction, the two spreads, metrics without NaN, and cost."""

from __future__ import annotations

import math

import numpy as np
import pytest

from locomo_exp.judge.aggregate import (
    JudgeResult,
    aggregate_question,
    group_j,
)
from locomo_exp.llm.cache import CacheKey
from locomo_exp.llm.spend import estimate_cost_usd, find_price
from locomo_exp.tracking import judge_metrics


def runs(*scores: float | None) -> list[JudgeResult]:
    """Valid runs from numbers, parse failures from None."""
    return [
        JudgeResult(score=s, run=i)
        if s is not None
        else JudgeResult(score=None, run=i, outcome="parse_failure", error="bad")
        for i, s in enumerate(scores)
    ]


def test_question_mean_and_std_use_only_valid_runs() -> None:
    agg = aggregate_question("q", 1, runs(80, None, 60, None))
    assert agg.mean_score == 70.0
    assert agg.std_dev == pytest.approx(float(np.std([80, 60], ddof=1)))
    assert agg.run_count == 2 and agg.individual_scores == [80.0, 60.0]
    assert agg.parse_failures == 2


@pytest.mark.parametrize(
    "scores, mean, std",
    [
        pytest.param((None, None), None, None, id="no-valid-run"),
        pytest.param((55, None), 55.0, None, id="one-valid-run-has-no-std"),
    ],
)
def test_question_with_too_few_valid_runs_gives_none_not_nan(
    scores: tuple, mean: float | None, std: float | None
) -> None:
    agg = aggregate_question("q", 1, runs(*scores))
    assert (agg.mean_score, agg.std_dev) == (mean, std)


def test_group_j_is_mean_of_question_means_with_both_spreads() -> None:
    a = aggregate_question("a", 1, runs(100, 80, 90))
    b = aggregate_question("b", 1, runs(0, 20, None))
    group = group_j([a, b], num_runs=3)
    assert group["mean"] == pytest.approx((90 + 10) / 2)
    assert group["count"] == 2
    # run-level J: run0 (100+0)/2, run1 (80+20)/2, run2 90 (b's run 2 failed)
    assert group["run_means"] == [50.0, 50.0, 90.0]
    assert group["std_across_runs"] == pytest.approx(float(np.std([50, 50, 90], ddof=1)))
    pooled = math.sqrt((np.var([100, 80, 90], ddof=1) * 2 + np.var([0, 20], ddof=1) * 1) / 3)
    assert group["pooled_within_std"] == pytest.approx(pooled)


def test_single_run_has_no_spreads_and_metrics_skip_them() -> None:
    group = group_j([aggregate_question("a", 2, runs(70))], num_runs=1)
    assert group["std_across_runs"] is None and group["pooled_within_std"] is None
    summary = {
        "j": {"2": group, "overall": group},
        "counts": {"valid": 1},
        "tokens": {},
        "estimated_cost_usd": None,
    }
    metrics = judge_metrics(summary, {2: "temporal"})
    assert metrics["j/cat2_temporal"] == 70.0 and metrics["j/overall"] == 70.0
    assert "j/overall_std_across_runs" not in metrics
    assert "judge/estimated_cost_usd" not in metrics
    assert all(math.isfinite(v) for v in metrics.values())


def test_category_without_valid_runs_reaches_no_metric() -> None:
    group = group_j([aggregate_question("a", 3, runs(None, None))], num_runs=2)
    assert group["mean"] is None
    metrics = judge_metrics({"j": {"3": group}}, {3: "open domain"})
    assert "j/cat3_open_domain" not in metrics
    assert metrics["j/cat3_open_domain_count"] == 0


PRICES = {"claude-sonnet-4-5": {"input": 3.0, "output": 15.0}}


@pytest.mark.parametrize(
    "model, expected",
    [
        pytest.param("claude-sonnet-4-5", 3.0, id="exact"),
        pytest.param("claude-sonnet-4-5-20250929", 3.0, id="dated-id"),
        pytest.param("claude-sonnet-4-5-preview", None, id="other-suffix"),
        pytest.param("claude-opus-9", None, id="unknown"),
    ],
)
def test_price_lookup_accepts_dated_ids_only(model: str, expected: float | None) -> None:
    price = find_price(model, PRICES)
    assert (price["input"] if price else None) == expected


def test_cost_is_usd_per_million_tokens() -> None:
    assert estimate_cost_usd("claude-sonnet-4-5", 1_000_000, 100_000, PRICES) == pytest.approx(4.5)
    assert estimate_cost_usd("nope", 10, 10, PRICES) is None


def make_key(**changes: object) -> CacheKey:
    values: dict = {
        "model": "m",
        "api_version": "v",
        "temperature": 0.5,
        "protocol": "rubric",
        "prompt_version": "rubric-v1",
        "max_tokens": 256,
        "structured_output": True,
        "question": "q",
        "ground_truth": "g",
        "prediction": "p",
        "category": 1,
        "run_index": 0,
    }
    values.update(changes)
    return CacheKey(**values)


@pytest.mark.parametrize(
    "field, value",
    [
        pytest.param("model", "m2", id="model"),
        pytest.param("api_version", "v2", id="api-version"),
        pytest.param("temperature", None, id="temperature-null"),
        pytest.param("temperature", 0.0, id="temperature-0"),
        pytest.param("protocol", "binary", id="protocol"),
        pytest.param("prompt_version", "rubric-v2", id="prompt-version"),
        pytest.param("question", "q2", id="question"),
        pytest.param("ground_truth", None, id="gold-null-vs-text"),
        pytest.param("ground_truth", "None", id="gold-text-None"),
        pytest.param("prediction", "p ", id="prediction"),
        pytest.param("category", 2, id="category"),
        pytest.param("run_index", 1, id="run"),
    ],
)
def test_cache_key_changes_with_every_field(field: str, value: object) -> None:
    assert make_key(**{field: value}).digest() != make_key().digest()
    assert make_key().digest() == make_key().digest()
