"""Paired statistics: bootstrap intervals, McNemar, sign flip, Holm, MDE (issue 13).

Every value is checked against an independent computation on the same arrays: scipy /
statsmodels, or a hand enumeration.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from locomo_exp.stats.bootstrap import (
    cluster_bootstrap_draws,
    cluster_bootstrap_mean_diff,
    question_bootstrap_mean_diff,
)
from locomo_exp.stats.paired import (
    holm_adjust,
    mcnemar_exact,
    mde_factor,
    minimum_detectable_difference,
    sign_flip_test,
)


def _two_runs(seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """60 questions over 6 conversations; A is 0.1 better on average, with conversation effects."""
    rng = np.random.default_rng(seed)
    conv = np.repeat(np.arange(6), 10)
    conv_effect = rng.normal(0.0, 0.05, 6)[conv]
    b = rng.uniform(0.2, 0.8, 60)
    a = np.clip(b + 0.1 + conv_effect + rng.normal(0.0, 0.15, 60), 0.0, 1.0)
    return a, b, conv


def _exact_cluster_bootstrap(diff: np.ndarray, conv: np.ndarray) -> np.ndarray:
    """All 6**6 equally likely conversation resamples, enumerated by hand."""
    ids = np.unique(conv)
    sums = np.array([diff[conv == c].sum() for c in ids])
    counts = np.array([np.sum(conv == c) for c in ids], dtype=float)
    out = []
    for combo in itertools.product(range(len(ids)), repeat=len(ids)):
        idx = list(combo)
        out.append(sums[idx].sum() / counts[idx].sum())
    return np.array(out)


def test_cluster_bootstrap_interval_matches_exact_enumeration_of_conversation_resamples():
    a, b, conv = _two_runs()
    interval = cluster_bootstrap_mean_diff(a, b, conv, n_resamples=20000, seed=3)
    exact = _exact_cluster_bootstrap(a - b, conv)
    low, high = np.quantile(exact, [0.025, 0.975])
    assert interval.estimate == pytest.approx(float(np.mean(a - b)), abs=1e-12)
    assert interval.unit == "conversation" and interval.n_units == 6
    # Monte Carlo error of a 2.5% quantile with 20,000 draws is well under 0.005 here
    assert interval.low == pytest.approx(low, abs=0.005)
    assert interval.high == pytest.approx(high, abs=0.005)
    assert interval.std_error == pytest.approx(float(np.std(exact)), rel=0.03)


def test_question_bootstrap_interval_matches_normal_theory_for_a_mean():
    a, b, _ = _two_runs()
    d = a - b
    interval = question_bootstrap_mean_diff(a, b, n_resamples=20000, seed=3)
    # the bootstrap SE of a mean is sd(ddof=0)/sqrt(n) (Efron & Tibshirani 1993, eq. 5.4)
    assert interval.std_error == pytest.approx(np.std(d) / np.sqrt(60), rel=0.03)
    assert interval.unit == "question" and interval.n_units == 60
    assert interval.low < interval.estimate < interval.high


def test_bootstrap_is_seeded_and_chunking_does_not_change_the_draws():
    a, b, conv = _two_runs()
    one = cluster_bootstrap_draws(a - b, conv, n_resamples=500, seed=11, chunk_size=7)
    two = cluster_bootstrap_draws(a - b, conv, n_resamples=500, seed=11, chunk_size=500)
    assert np.array_equal(one, two)
    q1 = question_bootstrap_mean_diff(a, b, n_resamples=300, seed=5, chunk_size=13)
    q2 = question_bootstrap_mean_diff(a, b, n_resamples=300, seed=5)
    assert q1 == q2


def test_bootstrap_of_identical_runs_is_zero_width_at_zero():
    a, _, conv = _two_runs()
    interval = cluster_bootstrap_mean_diff(a, a, conv, n_resamples=200)
    assert (interval.estimate, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert not interval.excludes_zero()


def test_bootstrap_rejects_mismatched_or_nan_input():
    with pytest.raises(ValueError, match="differ in shape"):
        cluster_bootstrap_mean_diff([1.0, 2.0], [1.0], [0, 0])
    with pytest.raises(ValueError, match="NaN"):
        question_bootstrap_mean_diff([1.0, float("nan")], [1.0, 1.0])
    with pytest.raises(ValueError, match="clusters: shape"):
        cluster_bootstrap_mean_diff([1.0, 2.0], [1.0, 1.0], [0])


def test_mcnemar_exact_p_equals_two_sided_binomial_test_of_discordant_pairs():
    rng = np.random.default_rng(2)
    a = rng.random(60) < 0.7
    b = rng.random(60) < 0.45
    result = mcnemar_exact(a * 100.0, b * 100.0)  # 0/100 verdicts, as J is stored
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    assert result.discordant == (only_a, only_b)
    assert result.pvalue == pytest.approx(sps.binomtest(only_a, only_a + only_b, 0.5).pvalue, abs=1e-12)


def test_mcnemar_hand_computed_small_table():
    # 5 discordant pairs, all for A: p = 2 * 0.5**5 = 0.0625
    a = [1, 1, 1, 1, 1, 1, 0]
    b = [0, 0, 0, 0, 0, 1, 0]
    assert mcnemar_exact(a, b).pvalue == pytest.approx(0.0625, abs=1e-12)
    assert mcnemar_exact(a, a).pvalue == 1.0


def test_sign_flip_exact_p_equals_hand_enumeration_of_all_sign_patterns():
    diff = np.array([0.3, 0.1, -0.05, 0.2, 0.4, 0.0, 0.25, -0.1, 0.15, 0.05])
    result = sign_flip_test(diff, np.zeros_like(diff), n_resamples=5000)
    observed = abs(diff.mean())
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=10)))
    means = (flips * diff).mean(axis=1)
    hand = np.mean(np.abs(means) >= observed - 1e-12)
    assert result.test == "sign_flip_exact" and result.n_resamples == 1024
    assert result.pvalue == pytest.approx(hand, abs=1e-12)


def test_sign_flip_monte_carlo_p_matches_scipy_and_an_independent_hand_draw():
    a, b, _ = _two_runs(seed=21)
    b = b + 0.07  # a smaller true difference so p is not at its floor
    result = sign_flip_test(a, b, n_resamples=20000, seed=4)
    d = a - b
    reference = sps.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=20000, rng=np.random.default_rng(4),
    )
    assert result.test == "sign_flip_monte_carlo"
    assert result.pvalue == pytest.approx(reference.pvalue, abs=1e-12)
    rng = np.random.default_rng(99)
    signs = rng.choice([-1.0, 1.0], size=(100000, 60))
    hand = np.mean(np.abs((signs * d).mean(axis=1)) >= abs(d.mean()))
    assert result.pvalue == pytest.approx(hand, abs=0.01)


def test_sign_flip_of_identical_runs_is_p_one():
    a, _, _ = _two_runs()
    assert sign_flip_test(a, a).pvalue == 1.0


def test_holm_matches_hand_computation_and_skips_missing():
    # sorted 0.01, 0.03, 0.04 -> 0.03, 0.06, max(0.06, 0.04) = 0.06
    assert holm_adjust([0.01, None, 0.04, 0.03]) == pytest.approx([0.03, None, 0.06, 0.06])
    assert holm_adjust([None, float("nan")]) == [None, None]


def test_minimum_detectable_difference_formula():
    assert mde_factor() == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    assert minimum_detectable_difference(20.0, 100) == pytest.approx(2.801585 * 20.0 / 10.0, abs=1e-5)
    assert minimum_detectable_difference(1.0, 1) is None
    with pytest.raises(ValueError, match="alpha and power"):
        minimum_detectable_difference(1.0, 10, alpha=1.5)
