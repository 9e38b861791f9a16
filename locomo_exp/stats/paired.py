"""Paired tests between two runs scored on the same questions.

* :func:`mcnemar_exact` -- exact McNemar test for binary outcomes (McNemar 1947,
  Psychometrika 12(2); the exact form is the two-sided binomial test of the discordant
  pairs, Agresti 2013 *Categorical Data Analysis* §11.1.4), via statsmodels'
  ``mcnemar(exact=True)``.
* :func:`sign_flip_test` -- paired permutation (sign-flip) test of the mean difference
  (Fisher 1935; Good 2005 *Permutation, Parametric and Bootstrap Tests of Hypotheses*
  §3.1), via ``scipy.stats.permutation_test`` with ``permutation_type='samples'`` on the
  differences: exact when ``2**n`` does not exceed the resample budget, Monte Carlo with
  a seeded generator otherwise.
* :func:`holm_adjust` -- Holm's step-down adjustment (Holm 1979, Scand. J. Statist. 6),
  via statsmodels ``multipletests(method='holm')``.
* :func:`minimum_detectable_difference` -- the smallest true mean difference a paired
  two-sided test at level ``alpha`` detects with the given power.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairedTest:
    """Result of a paired test.

    Attributes:
        test: ``"mcnemar_exact"`` or ``"sign_flip_exact"`` / ``"sign_flip_monte_carlo"``.
        pvalue: two-sided p-value (0-1).
        statistic: the test statistic (McNemar: ``min(b, c)`` as statsmodels reports it;
            sign flip: the observed mean difference).
        n: number of pairs.
        n_resamples: permutations used (``None`` for McNemar; ``2**n`` when exact).
        discordant: McNemar's ``(b, c)``: pairs where only A succeeded, only B succeeded.
    """

    test: str
    pvalue: float
    statistic: float
    n: int
    n_resamples: int | None = None
    discordant: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        out = asdict(self)
        if self.discordant is not None:
            out["discordant"] = list(self.discordant)
        return out


def _pair_arrays(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape or a_arr.size == 0:
        raise ValueError(
            f"expected two non-empty 1-D arrays of equal length, got {a_arr.shape}, {b_arr.shape}"
        )
    if not (np.all(np.isfinite(a_arr)) and np.all(np.isfinite(b_arr))):
        raise ValueError("scores contain NaN or infinite values")
    return a_arr, b_arr


def mcnemar_exact(
    a: Sequence[bool | float] | np.ndarray, b: Sequence[bool | float] | np.ndarray
) -> PairedTest:
    """Exact McNemar test of two paired binary outcomes.

    Args:
        a: per-question success of run A, shape ``(n,)``: booleans, 0/1, or 0/100
            (any non-zero value is a success).
        b: the same questions for run B.

    Returns:
        :class:`PairedTest` with the two-sided exact p-value: the binomial test of
        ``b`` successes out of ``b + c`` discordant pairs at p = 0.5 (statsmodels
        ``mcnemar(table, exact=True)``). No discordant pair gives p = 1.

    Raises:
        ValueError: on empty, mismatched or non-finite input.
    """
    a_arr, b_arr = _pair_arrays(a, b)
    sa, sb = a_arr != 0, b_arr != 0
    table = np.array(
        [
            [int(np.sum(sa & sb)), int(np.sum(sa & ~sb))],
            [int(np.sum(~sa & sb)), int(np.sum(~sa & ~sb))],
        ]
    )
    only_a, only_b = int(table[0, 1]), int(table[1, 0])
    if only_a + only_b == 0:
        return PairedTest("mcnemar_exact", 1.0, 0.0, int(a_arr.size), None, (0, 0))
    result = mcnemar(table, exact=True)
    return PairedTest(
        "mcnemar_exact",
        float(min(1.0, result.pvalue)),
        float(result.statistic),
        int(a_arr.size),
        None,
        (only_a, only_b),
    )


def _mean_stat(x: np.ndarray, axis: int = -1) -> np.ndarray:
    means: np.ndarray = np.mean(x, axis=axis)
    return means


def sign_flip_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = 10000,
    seed: int | np.random.Generator = 0,
    batch: int = 1000,
) -> PairedTest:
    """Paired sign-flip permutation test of ``mean(a - b) = 0``.

    Under the null the two scores of a question are exchangeable, so each difference's
    sign is flipped at random; the p-value is the share of sign patterns whose mean
    difference is at least as extreme (two-sided) as the observed one.

    Args:
        a: per-question scores of run A, shape ``(n,)`` (any units).
        b: the same questions for run B.
        n_resamples: Monte Carlo budget; when ``2**n <= n_resamples`` all ``2**n`` sign
            patterns are enumerated (exact test).
        seed: int seed or numpy Generator for the Monte Carlo draws.
        batch: sign patterns evaluated at once (memory ``batch x n`` floats).

    Returns:
        :class:`PairedTest`; ``test`` says exact or Monte Carlo. All differences zero, or
        a single question, gives p = 1 (exact: both of its sign patterns are as extreme).
        The Monte Carlo p-value is scipy's ``(hits + 1) / (B + 1)``.

    Raises:
        ValueError: on empty, mismatched or non-finite input.
    """
    a_arr, b_arr = _pair_arrays(a, b)
    diff = a_arr - b_arr
    n = int(diff.size)
    if not np.any(diff):
        return PairedTest("sign_flip_exact", 1.0, 0.0, n, 0)
    if n == 1:  # both sign patterns are as extreme as the observed one (scipy needs n >= 2)
        return PairedTest("sign_flip_exact", 1.0, float(diff[0]), 1, 2)
    exact = n < 63 and 2**n <= n_resamples
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    result = sps.permutation_test(
        (diff,),
        _mean_stat,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=rng,
        batch=batch,
    )
    return PairedTest(
        "sign_flip_exact" if exact else "sign_flip_monte_carlo",
        float(min(1.0, result.pvalue)),
        float(result.statistic),
        n,
        2**n if exact else n_resamples,
    )


def holm_adjust(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (Holm 1979), controlling the family-wise error.

    Args:
        pvalues: raw p-values (0-1); ``None`` or NaN entries are left out of the family
            and stay ``None``.

    Returns:
        Adjusted p-values in the input order (statsmodels ``multipletests(method='holm')``).
    """
    present = [i for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    out: list[float | None] = [None] * len(pvalues)
    if not present:
        return out
    adjusted = multipletests([pvalues[i] for i in present], method="holm")[1]
    for i, p in zip(present, adjusted, strict=True):
        out[i] = float(p)
    return out


def minimum_detectable_difference(
    sd_diff: float, n: int, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """Smallest true mean paired difference detectable with the given power.

    ``MDE = (z_{1-alpha/2} + z_{power}) * sd_diff / sqrt(n)`` -- the normal-approximation
    power formula for a two-sided paired (one-sample on differences) test; Chow, Shao &
    Wang 2008, *Sample Size Calculations in Clinical Research*, 2nd ed., §3.1.1 (solved
    for the difference instead of ``n``); at alpha 0.05 and 80% power the factor is
    1.95996 + 0.84162 = 2.80158. It treats questions as independent, so on clustered
    data it is a lower bound.

    Args:
        sd_diff: sample standard deviation (ddof=1) of the per-question differences,
            in the scores' units.
        n: number of pairs.
        alpha: two-sided significance level.
        power: desired power (0-1).

    Returns:
        The MDE in the same units as ``sd_diff``; ``None`` when ``n < 2``.

    Raises:
        ValueError: when ``alpha`` or ``power`` is outside (0, 1) or ``sd_diff < 0``.
    """
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha}, {power}")
    if sd_diff < 0:
        raise ValueError(f"sd_diff must be >= 0, got {sd_diff}")
    if n < 2:
        return None
    factor = sps.norm.ppf(1.0 - alpha / 2.0) + sps.norm.ppf(power)
    return float(factor * sd_diff / math.sqrt(n))


def mde_factor(alpha: float = 0.05, power: float = 0.8) -> float:
    """``z_{1-alpha/2} + z_{power}`` (2.80158 at alpha 0.05, power 0.8)."""
    return float(sps.norm.ppf(1.0 - alpha / 2.0) + sps.norm.ppf(power))


__all__ = [
    "PairedTest",
    "holm_adjust",
    "mcnemar_exact",
    "mde_factor",
    "minimum_detectable_difference",
    "sign_flip_test",
]
