"""LongMemEval's accuracies and their intervals, against hand-worked values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval.scoring import lme_accuracies, task_average
from locomo_exp.stats.agreement import wilson_interval


def _wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson (1927): (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_overall_interval_is_wilsons_formula():
    p = wilson_interval(362, 500)
    low, high = _wilson_by_hand(362, 500)
    assert p.ci_low == pytest.approx(low, abs=1e-12) and p.ci_high == pytest.approx(high, abs=1e-12)
    assert (round(low, 4), round(high, 4)) == (0.6832, 0.7614)


def _verdicts():
    # 2 single-session-user (1 correct, one of them _abs and wrong), 4 multi-session (3 correct)
    return [
        ("u1", "single-session-user", True),
        ("u2_abs", "single-session-user", False),
        ("m1", "multi-session", True),
        ("m2", "multi-session", True),
        ("m3_abs", "multi-session", True),
        ("m4", "multi-session", False),
        ("m5", "multi-session", None),
    ]


def test_figures_by_hand():
    acc = lme_accuracies(_verdicts())
    assert (acc.overall.successes, acc.overall.n) == (4, 6)
    assert acc.per_type["single-session-user"].rate == 0.5
    assert acc.per_type["multi-session"].rate == 0.75
    assert acc.per_type["knowledge-update"].n == 0
    assert acc.task_avg.accuracy == pytest.approx((0.5 + 0.75) / 2)
    assert acc.task_avg.types == ("single-session-user", "multi-session")
    assert (acc.abstention.successes, acc.abstention.n) == (1, 2)
    assert acc.unscored == 1
    assert list(acc.per_type) == list(lme.QUESTION_TYPES)


def test_task_average_interval_matches_the_normal_approximation():
    per_type = {
        name: wilson_interval(round(0.7 * n), n) for name, n in lme.QUESTION_TYPES.items()
    }
    result = task_average(per_type, n_resamples=20_000, seed=1)
    rates = np.array([p.successes / p.n for p in per_type.values()])
    ns = np.array([p.n for p in per_type.values()])
    se = math.sqrt(float(np.sum(rates * (1 - rates) / ns))) / len(ns)
    assert result.ci_low == pytest.approx(result.accuracy - 1.96 * se, abs=0.004)
    assert result.ci_high == pytest.approx(result.accuracy + 1.96 * se, abs=0.004)


def test_unknown_type_is_refused():
    with pytest.raises(ValueError, match="unknown LongMemEval question_type 'x'"):
        lme_accuracies([("a", "x", True)])


def test_longmemeval_kinds_are_its_own_strings():
    # issue 26 §1: no LoCoMo-shaped spec with fake category ids 1-7
    assert not hasattr(lme, "SPEC")
    assert lme.JUDGE_KINDS == (*lme.QUESTION_TYPES, "abstention")
    assert lme.TOTAL_QUESTIONS == 500
