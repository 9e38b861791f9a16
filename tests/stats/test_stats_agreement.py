"""Wilson intervals, Cohen's kappa and binary agreement, checked by hand and against statsmodels."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.special import ndtri
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
from statsmodels.stats.proportion import proportion_confint

from locomo_exp.stats.agreement import (
    NORMAL_CRITICAL_VALUES,
    binary_agreement,
    cohens_kappa,
    wilson_interval,
)


def _wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (20, 23), (1, 1)])
def test_wilson_interval_matches_the_formula(k: int, n: int) -> None:
    got = wilson_interval(k, n)
    low, high = _wilson_by_hand(k, n)
    assert got.rate == k / n
    assert got.ci_low == pytest.approx(max(0.0, low), abs=1e-12)
    assert got.ci_high == pytest.approx(min(1.0, high), abs=1e-12)


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99, 0.8])
def test_wilson_interval_is_statsmodels_bit_for_bit(confidence: float) -> None:
    # every count up to 120 and a few large ones: the same float64 values, compared with ==
    cases = [(k, n) for n in range(1, 121) for k in range(n + 1)]
    cases += [(k, n) for n in (1540, 1986, 10_000) for k in (0, 1, 7, n // 3, n - 1, n)]
    for k, n in cases:
        got = wilson_interval(k, n, confidence)
        low, high = proportion_confint(k, n, alpha=1.0 - confidence, method="wilson")
        assert (got.ci_low, got.ci_high) == (
            0.0 if k == 0 else float(low),
            1.0 if k == n else float(high),
        ), (k, n)


def test_stored_critical_values_are_scipys_and_need_no_scipy_import() -> None:
    assert NORMAL_CRITICAL_VALUES == {0.95: 1.959963984540054}
    for confidence, z in NORMAL_CRITICAL_VALUES.items():
        assert z == float(-ndtri(np.float64(1.0 - confidence) / 2.0))
    probe = (
        "import sys; from locomo_exp.stats.agreement import wilson_interval; "
        "p = wilson_interval(7, 20); print(p.ci_low, p.ci_high, 'scipy' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    low, high = proportion_confint(7, 20, alpha=1.0 - 0.95, method="wilson")
    assert out == [repr(float(low)), repr(float(high)), "False"]


def test_kappa_is_statsmodels_bit_for_bit() -> None:
    tables = [[[a, b], [c, d]] for a in range(9) for b in range(9) for c in range(9) for d in (0, 1, 5)]
    tables += [[[1200, 31], [44, 265]], [[3, 0], [0, 2]], [[5, 2, 1], [0, 7, 3], [2, 1, 9]]]
    for table in tables:
        got = cohens_kappa(table)
        if got is not None:
            assert got == float(sm_kappa(np.array(table, float), return_results=False)), table


def test_wilson_interval_of_nothing_is_empty_and_bad_counts_raise() -> None:
    empty = wilson_interval(0, 0)
    assert (empty.n, empty.rate, empty.ci_low, empty.ci_high) == (0, None, None, None)
    with pytest.raises(ValueError, match="need 0 <= successes <= n, got successes=5, n=3"):
        wilson_interval(5, 3)


def test_kappa_by_hand_and_by_statsmodels() -> None:
    # p_o = 31/38; p_e = (23*24 + 15*14)/38^2 = 762/1444; kappa = 416/682
    table = [[20, 3], [4, 11]]
    assert cohens_kappa(table) == pytest.approx(416 / 682, abs=1e-12)
    assert cohens_kappa(table) == pytest.approx(sm_kappa(np.array(table), return_results=False))


def test_kappa_is_none_when_undefined() -> None:
    assert cohens_kappa([[5, 0], [0, 0]]) is None  # both raters always "correct"
    assert cohens_kappa([[0, 0], [0, 0]]) is None
    # each rater constant but opposite: p_o = 0, p_e = 0, so kappa = 0 (defined)
    assert cohens_kappa([[0, 4], [0, 0]]) == 0.0
    with pytest.raises(ValueError, match="square table"):
        cohens_kappa([[1, 2, 3]])


def test_binary_agreement_counts_the_table_and_rates() -> None:
    reference = [True] * 23 + [False] * 15
    rater = [True] * 20 + [False] * 3 + [True] * 4 + [False] * 11
    got = binary_agreement(reference, rater)
    assert got.table == ((20, 3), (4, 11)) and got.n == 38
    assert got.agreement.rate == pytest.approx(31 / 38)
    assert got.sensitivity.rate == pytest.approx(20 / 23) and got.sensitivity.n == 23
    assert got.specificity.rate == pytest.approx(11 / 15) and got.specificity.n == 15
    assert got.kappa == pytest.approx(416 / 682)
    with pytest.raises(ValueError, match="lengths differ: 2 vs 1"):
        binary_agreement([True, False], [True])
