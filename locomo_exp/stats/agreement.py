"""Agreement between two binary raters: Wilson intervals, Cohen's kappa, sensitivity/specificity.

Used to measure a judge against a reference: human correctness labels, another harness's
stored verdicts, audit controls whose truth is known, or another judge of a panel. All
rates here are proportions on a 0-1 scale (the report layer turns them into percent).

Sources:
    * Wilson score interval: E. B. Wilson (1927), "Probable inference, the law of
      succession, and statistical inference", JASA 22:209-212; computed by
      ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.
    * Cohen's kappa: J. Cohen (1960), "A coefficient of agreement for nominal scales",
      Educational and Psychological Measurement 20:37-46; computed by
      ``statsmodels.stats.inter_rater.cohens_kappa`` on the 2x2 table.

Both are computed here with statsmodels' own steps, in its order (numpy float64, the normal
quantile from ``scipy.special.ndtri``), so the values are bit for bit those of statsmodels
(``tests/stats/test_stats_agreement.py`` checks them with ``==`` over every count up to 120):
importing ``statsmodels.stats`` loads ``scipy.stats`` (about 0.4 s of CPU) that a judge job
otherwise never needs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Proportion:
    """A count out of a total, with its rate and a Wilson interval.

    Attributes:
        successes: the count (e.g. controls accepted).
        n: the total; 0 means nothing was observed (rate and interval are ``None``).
        rate: ``successes / n`` on 0-1, or ``None`` when ``n == 0``.
        ci_low: lower bound of the Wilson interval on 0-1, or ``None``.
        ci_high: upper bound of the Wilson interval on 0-1, or ``None``.
        confidence: the interval's confidence level (0.95 for 95%).
    """

    successes: int
    n: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Proportion:
    """Rate of ``successes`` out of ``n`` with a Wilson score interval.

    Args:
        successes: number of successes, ``0 <= successes <= n``.
        n: number of trials (0 gives a :class:`Proportion` with ``None`` rate and bounds).
        confidence: confidence level in (0, 1), e.g. 0.95.

    Returns:
        The :class:`Proportion` (rate and bounds on a 0-1 scale).

    Raises:
        ValueError: if the counts are negative, ``successes > n``, or ``confidence`` is not
            in (0, 1).
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return Proportion(0, 0, None, None, None, confidence)
    low, high = _wilson_bounds(successes, n, confidence)
    # the bounds at 0/n and n/n are exactly 0 and 1 (the formula leaves float dust)
    low = 0.0 if successes == 0 else low
    high = 1.0 if successes == n else high
    return Proportion(int(successes), int(n), successes / n, low, high, confidence)


NORMAL_CRITICAL_VALUES = {0.95: 1.959963984540054}
"""Confidence -> ``-ndtri((1 - confidence) / 2)`` as ``scipy.special.ndtri`` gives it (a test
checks ``==``): the usual 95% needs no scipy import (about 0.1-0.3 s of CPU per judge job)."""


def _normal_critical(confidence: float) -> float:
    """``z = -ndtri((1 - confidence) / 2)``, the standard normal's upper critical value."""
    from scipy.special import ndtri  # about 0.1 s; scipy.stats would be 0.4 s

    return float(-ndtri(np.float64(1.0 - confidence) / 2.0))


def _wilson_bounds(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """The Wilson bounds, clipped to [0, 1]: statsmodels' steps in its order.

    The steps of statsmodels 0.15's ``proportion_confint(method="wilson")``, so the
    float64 values are the same.

    ``z = -ndtri(alpha / 2)`` (``scipy.stats.norm.isf``), ``centre = (p + z^2/2n) /
    (1 + z^2/n)``, ``half = z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n)``.
    """
    nobs = np.float64(n)
    q = np.float64(successes) / nobs
    crit = np.float64(NORMAL_CRITICAL_VALUES.get(confidence) or _normal_critical(confidence))
    crit2 = crit**2
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    dist = crit * np.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * nobs**2))
    dist /= denom
    return float(np.clip(center - dist, 0, 1)), float(np.clip(center + dist, 0, 1))


def cohens_kappa(table: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Cohen's kappa of a square contingency table of two raters.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e``
    the agreement expected from the raters' marginals (Cohen 1960), computed by
    ``statsmodels.stats.inter_rater.cohens_kappa``.

    Args:
        table: counts, shape ``(k, k)``; rows one rater's categories, columns the other's.

    Returns:
        Kappa in [-1, 1], or ``None`` when it is undefined: an empty table, or
        ``p_e == 1`` (both raters used one and the same category for everything).

    Raises:
        ValueError: if ``table`` is not square or has negative counts.
    """
    arr = np.asarray(table, dtype=float)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"kappa needs a square table, got shape {arr.shape}")
    if (arr < 0).any():
        raise ValueError("kappa table has negative counts")
    total = arr.sum()
    if total == 0:
        return None
    expected = float((arr.sum(axis=0) / total) @ (arr.sum(axis=1) / total))
    if expected >= 1.0 - 1e-12:
        return None
    # statsmodels 0.15's cohens_kappa(return_results=False), step by step (same values)
    freq_row = arr.sum(1) / total
    freq_col = arr.sum(0) / total
    agree_exp = np.diag(freq_col * freq_row[:, None]).sum()
    return float((np.diag(arr).sum() / total - agree_exp) / (1 - agree_exp))


@dataclass(frozen=True)
class BinaryAgreement:
    """A binary rater (e.g. the judge) against a binary reference (e.g. human labels).

    "Positive" means correct/accepted. The 2x2 table has rows = reference
    (correct, wrong) and columns = rater (accept, reject)::

                        rater accept   rater reject
        ref correct         tp             fn
        ref wrong           fp             tn

    Attributes:
        tp: reference correct, rater accepted.
        fn: reference correct, rater rejected (false reject).
        fp: reference wrong, rater accepted (false accept).
        tn: reference wrong, rater rejected.
        agreement: ``(tp + tn) / n`` with a Wilson interval.
        kappa: Cohen's kappa, ``None`` when undefined (see :func:`cohens_kappa`).
        sensitivity: ``tp / (tp + fn)`` (true-accept rate) with a Wilson interval.
        specificity: ``tn / (tn + fp)`` (true-reject rate) with a Wilson interval.
    """

    tp: int
    fn: int
    fp: int
    tn: int
    agreement: Proportion
    kappa: float | None
    sensitivity: Proportion
    specificity: Proportion

    @property
    def n(self) -> int:
        """Number of compared items."""
        return self.tp + self.fn + self.fp + self.tn

    @property
    def table(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """The 2x2 table ``((tp, fn), (fp, tn))``: rows reference, columns rater."""
        return ((self.tp, self.fn), (self.fp, self.tn))


def binary_agreement(
    reference: Sequence[bool], rater: Sequence[bool], confidence: float = 0.95
) -> BinaryAgreement:
    """Compare a binary rater with a binary reference, item by item.

    Args:
        reference: truth per item (``True`` = correct), length n.
        rater: the rater's verdict per item (``True`` = accepted), same length and order.
        confidence: level of the Wilson intervals.

    Returns:
        The :class:`BinaryAgreement` (counts, agreement, kappa, sensitivity, specificity).

    Raises:
        ValueError: if the two sequences differ in length.
    """
    ref = np.asarray(reference, dtype=bool)
    got = np.asarray(rater, dtype=bool)
    if ref.shape != got.shape:
        raise ValueError(f"reference and rater lengths differ: {ref.size} vs {got.size}")
    tp = int(np.sum(ref & got))
    fn = int(np.sum(ref & ~got))
    fp = int(np.sum(~ref & got))
    tn = int(np.sum(~ref & ~got))
    return BinaryAgreement(
        tp=tp,
        fn=fn,
        fp=fp,
        tn=tn,
        agreement=wilson_interval(tp + tn, tp + fn + fp + tn, confidence),
        kappa=cohens_kappa([[tp, fn], [fp, tn]]),
        sensitivity=wilson_interval(tp, tp + fn, confidence),
        specificity=wilson_interval(tn, tn + fp, confidence),
    )


def krippendorff_alpha(matrix: np.ndarray, level: str) -> float | None:
    """Krippendorff's alpha of a coders x units matrix (NaN: no value); the one call site.

    Krippendorff (2004), *Content Analysis*, ch. 11; computed by the ``krippendorff``
    package. Used for the agreement of a judge's runs and of a panel's judges.

    Args:
        matrix: one row per coder (a run, a judge), one column per unit (a question);
            NaN where the coder gave no value.
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.

    Returns:
        Alpha (at most 1; 0 is chance agreement), or ``None`` when it is undefined: fewer
        than two distinct values, no unit with two values, or a NaN result.
    """
    import krippendorff

    why_not = alpha_undefined(matrix)
    if why_not:
        logger.info("Krippendorff's alpha not computed: %s", why_not)
        return None
    try:
        value = float(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)  # type: ignore[arg-type]
        )
    except (ValueError, ZeroDivisionError) as error:  # our words, not the library's
        logger.info(
            "Krippendorff's alpha not computed: the table of verdicts cannot be scored (%s)",
            type(error).__name__,
        )
        return None
    return value if math.isfinite(value) else None


def alpha_undefined(matrix: np.ndarray) -> str:
    """Why Krippendorff's alpha is undefined for a coders x units matrix, or ``""``.

    Args:
        matrix: one row per coder (a run, a judge), one column per unit (a question).

    Returns:
        ``"every verdict is the same (100), so agreement beyond chance is undefined"``,
        ``"no question has two verdicts to compare"``, or ``""`` when alpha is defined.
    """
    values = matrix[~np.isnan(matrix)]
    if np.unique(values).size < 2:
        shown = f" ({values[0]:g})" if values.size else ""
        return f"every verdict is the same{shown}, so agreement beyond chance is undefined"
    if not bool((np.sum(~np.isnan(matrix), axis=0) >= 2).any()):
        return "no question has two verdicts to compare"
    return ""
