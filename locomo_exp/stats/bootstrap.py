"""Bootstrap intervals: a run's mean, and the mean paired difference between two runs.

A run's mean: :func:`cluster_bootstrap_ci` (conversations resampled; the headline interval
of a run whose questions carry conversation ids) and :func:`bootstrap_ci` (questions
resampled). The difference between two runs, two resampling units:

* :func:`cluster_bootstrap_mean_diff` resamples whole conversations with replacement
  (the *cluster* or *block* bootstrap, Davison & Hinkley 1997, *Bootstrap Methods and
  their Application*, §3.8; Field & Welsh 2007, "Bootstrapping clustered data", JRSS-B
  69(3)). LoCoMo's questions are nested in 10 conversations, so questions are not
  independent; this interval is the one to read.
* :func:`question_bootstrap_mean_diff` resamples questions with replacement (the
  ordinary paired bootstrap, Efron & Tibshirani 1993, *An Introduction to the
  Bootstrap*, ch. 13). It treats questions as independent and is usually narrower.

Both are paired: one resample keeps each question's two scores together (the
difference ``a - b`` is what is resampled). The statistic of a resample is the pooled
mean of the differences of every question drawn (for the cluster bootstrap: of every
question of every conversation drawn, so large conversations weigh more, exactly as in
the pooled mean being estimated). Intervals are percentile intervals (Efron &
Tibshirani 1993, §13.3) with numpy's default ``linear`` quantile method.

Resamples are drawn from a seeded :class:`numpy.random.Generator` in chunks of
``chunk_size`` so memory stays bounded (``chunk_size x n`` integers at a time).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 1000


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval for a mean difference.

    Attributes:
        estimate: the observed mean difference (same units as the inputs).
        low: lower bound of the interval.
        high: upper bound of the interval.
        std_error: standard deviation of the bootstrap distribution (ddof=1).
        confidence: coverage of the interval, e.g. 0.95.
        n_resamples: how many resamples were drawn.
        n_units: how many resampling units there were (conversations or questions).
        unit: ``"conversation"`` or ``"question"``.
    """

    estimate: float
    low: float
    high: float
    std_error: float
    confidence: float
    n_resamples: int
    n_units: int
    unit: str

    def excludes_zero(self) -> bool:
        """True when 0 lies outside ``[low, high]``."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the fields."""
        return asdict(self)


def _check(values: np.ndarray, name: str) -> None:
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name}: expected a non-empty 1-D array, got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name}: contains NaN or infinite values")


def _percentile_interval(
    draws: np.ndarray, estimate: float, confidence: float, n_units: int, unit: str
) -> BootstrapInterval:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return BootstrapInterval(
        estimate=float(estimate),
        low=float(low),
        high=float(high),
        std_error=float(np.std(draws, ddof=1)) if draws.size > 1 else 0.0,
        confidence=confidence,
        n_resamples=int(draws.size),
        n_units=n_units,
        unit=unit,
    )


def _validate_common(n_resamples: int, confidence: float, chunk_size: int) -> None:
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")


def cluster_bootstrap_draws(
    diff: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    n_resamples: int = 2000,
    seed: int | np.random.Generator = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> np.ndarray:
    """Bootstrap distribution of the pooled mean of ``diff`` under conversation resampling.

    Args:
        diff: per-question paired differences ``a - b``, shape ``(n,)``.
        clusters: the conversation of each question, shape ``(n,)`` (any hashable ids).
        n_resamples: number of resamples ``B``.
        seed: an int seed or a :class:`numpy.random.Generator`.
        chunk_size: resamples drawn per chunk (memory ``chunk_size x k`` for ``k``
            conversations).

    Returns:
        Array of shape ``(B,)``: for each resample of ``k`` conversations drawn with
        replacement, ``sum(diff of their questions) / number of their questions``.

    Raises:
        ValueError: on empty input, mismatched lengths, NaN, or bad parameters.
    """
    d = np.asarray(diff, dtype=float)
    _check(d, "diff")
    labels = np.asarray(clusters)
    if labels.shape != d.shape:
        raise ValueError(f"clusters: shape {labels.shape} differs from diff shape {d.shape}")
    _validate_common(n_resamples, 0.5, chunk_size)
    _, inverse = np.unique(labels, return_inverse=True)
    sums = np.bincount(inverse, weights=d)
    counts = np.bincount(inverse).astype(float)
    k = sums.size
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, chunk_size):
        size = min(chunk_size, n_resamples - start)
        idx = rng.integers(0, k, size=(size, k))
        out[start : start + size] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    return out


def question_bootstrap_draws(
    values: np.ndarray,
    n_resamples: int,
    seed: int | np.random.Generator = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> np.ndarray:
    """Bootstrap distribution of the mean of ``values`` under question resampling.

    The one resampling engine of the question-level intervals (a run's mean,
    :func:`bootstrap_ci`; a paired difference, :func:`question_bootstrap_mean_diff`).
    Chunks draw from the same stream as one ``(n_resamples, n)`` draw, so the chunk size
    changes memory, never the result.

    Args:
        values: per-question values, shape ``(n,)``, finite.
        n_resamples: number of resamples ``B``.
        seed: an int seed or a :class:`numpy.random.Generator`.
        chunk_size: resamples drawn per chunk (memory ``chunk_size x n`` indices).

    Returns:
        Array of shape ``(B,)``: the mean of each resample of ``n`` questions drawn with
        replacement.
    """
    n = values.size
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    draws = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, chunk_size):
        size = min(chunk_size, n_resamples - start)
        idx = rng.integers(0, n, size=(size, n))
        draws[start : start + size] = values[idx].mean(axis=1)
        del idx
    return draws


def _paired_diff(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray:
    """``a - b`` as floats; ValueError when the two runs differ in shape."""
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"a and b differ in shape: {a_arr.shape} vs {b_arr.shape}")
    diff: np.ndarray = a_arr - b_arr
    return diff


def cluster_bootstrap_mean_diff(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> BootstrapInterval:
    """Mean difference ``mean(a - b)`` with a conversation-cluster bootstrap interval.

    Args:
        a: per-question scores of run A, shape ``(n,)`` (any units; F1 0-1 or points).
        b: per-question scores of run B on the same questions in the same order.
        clusters: the conversation id of each question, shape ``(n,)``.
        n_resamples: number of bootstrap resamples.
        confidence: interval coverage (0.95 for a 95% interval).
        seed: int seed or numpy Generator (same seed, same interval).
        chunk_size: resamples per chunk (bounded memory).

    Returns:
        :class:`BootstrapInterval` with ``unit="conversation"`` (percentile interval;
        Davison & Hinkley 1997 §3.8). With a single conversation the interval collapses to
        the estimate: there is no between-conversation variation to resample.

    Raises:
        ValueError: on empty or mismatched inputs, NaN, or bad parameters.
    """
    diff = _paired_diff(a, b)
    _validate_common(n_resamples, confidence, chunk_size)
    draws = cluster_bootstrap_draws(diff, clusters, n_resamples, seed, chunk_size)
    n_units = int(np.unique(np.asarray(clusters)).size)
    return _percentile_interval(draws, float(diff.mean()), confidence, n_units, "conversation")


def question_bootstrap_mean_diff(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> BootstrapInterval:
    """Mean difference ``mean(a - b)`` with a question-level paired bootstrap interval.

    Args:
        a: per-question scores of run A, shape ``(n,)``.
        b: per-question scores of run B on the same questions in the same order.
        n_resamples: number of bootstrap resamples.
        confidence: interval coverage.
        seed: int seed or numpy Generator.
        chunk_size: resamples per chunk (memory ``chunk_size x n`` indices).

    Returns:
        :class:`BootstrapInterval` with ``unit="question"`` (percentile interval; Efron &
        Tibshirani 1993 ch. 13). Treats questions as independent: narrower than the
        cluster interval when questions of a conversation are correlated.

    Raises:
        ValueError: on empty or mismatched inputs, NaN, or bad parameters.
    """
    diff = _paired_diff(a, b)
    _validate_common(n_resamples, confidence, chunk_size)
    _check(diff, "diff")
    draws = question_bootstrap_draws(diff, n_resamples, seed, chunk_size)
    return _percentile_interval(draws, float(diff.mean()), confidence, diff.size, "question")


__all__ = [
    "MIN_CLUSTERS",
    "MIN_RUN_CLUSTERS",
    "BootstrapInterval",
    "bootstrap_ci",
    "cluster_bootstrap_ci",
    "question_bootstrap_draws",
    "cluster_bootstrap_draws",
    "cluster_bootstrap_mean_diff",
    "question_bootstrap_mean_diff",
]


CONFIDENCE = 0.95
"""Coverage of the bootstrap intervals."""


BOOTSTRAP_CHUNK_ELEMENTS = 2_000_000
"""Resample indices drawn at once (int64: 16 MB, plus as many float64 values)."""


def bootstrap_ci(
    values: Sequence[float],
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of a mean, resampling questions.

    Efron & Tibshirani (1993), percentile method: draw ``n_resamples`` resamples of the
    questions with replacement, take the mean of each, report the (1-c)/2 and (1+c)/2
    quantiles of those means. Resamples are drawn in chunks of about
    :data:`BOOTSTRAP_CHUNK_ELEMENTS` indices (:func:`question_bootstrap_draws`, the same
    engine as the paired intervals), so memory is bounded whatever ``n_resamples``
    and the number of questions; the values equal one ``(n_resamples, n)`` draw from the
    same seed (the intervals are those of earlier versions).

    Args:
        values: per-question scores (any unit; the interval has the same unit).
        n_resamples: number of bootstrap resamples.
        seed: seed of numpy's ``default_rng`` (same seed, same interval).
        confidence: coverage, e.g. 0.95.

    Returns:
        ``(low, high)``, or ``None`` for no values or ``n_resamples < 1``.
    """
    data = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if data.size == 0 or n_resamples < 1:
        return None
    # about BOOTSTRAP_CHUNK_ELEMENTS indices per chunk: memory stays bounded (not
    # n_resamples x n), and the draws are the same stream as one big draw
    rows = max(1, BOOTSTRAP_CHUNK_ELEMENTS // data.size)
    means = question_bootstrap_draws(data, n_resamples, seed, chunk_size=rows)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


MIN_CLUSTERS = 2
"""Conversations a cluster interval needs: with one, every resample is that conversation
and the interval collapses to the observed mean."""

MIN_RUN_CLUSTERS = 5
"""Conversations a run's cluster interval needs (:func:`cluster_bootstrap_ci` as a run's
headline). ``k`` conversations give only ``C(2k-1, k)`` distinct resamples -- 3 for k=2, 10
for 3, 35 for 4, 126 for 5 -- so below 5 the 2.5% and 97.5% percentiles rest on a handful
of values and can be narrower than the question-level interval (two conversations of
similar means: almost no spread). LoCoMo-10 has 10."""


def cluster_bootstrap_ci(
    values: Sequence[float | None],
    clusters: Sequence[Any],
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    min_clusters: int = MIN_RUN_CLUSTERS,
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of a pooled mean, resampling conversations.

    The cluster bootstrap (Davison & Hinkley 1997, §3.8; Field & Welsh 2007): draw ``k``
    conversations with replacement from the ``k`` present, pool the values of every
    question of every conversation drawn (a conversation drawn twice counts twice), take
    their mean; report the (1-c)/2 and (1+c)/2 quantiles (numpy ``linear``) of
    ``n_resamples`` such means. The draws are :func:`cluster_bootstrap_draws`, the engine
    of the paired comparison's conversation interval.

    Args:
        values: per-question scores (any unit; the interval has the same unit); ``None``
            and non-finite values are left out with their cluster label.
        clusters: the conversation id of each question (same length as ``values``).
        n_resamples: number of bootstrap resamples.
        seed: seed of numpy's ``default_rng`` (same seed, same interval).
        confidence: coverage, e.g. 0.95.
        min_clusters: fewest conversations for an interval (:data:`MIN_RUN_CLUSTERS`).

    Returns:
        ``(low, high)``, or ``None`` for no values, fewer than ``min_clusters``
        conversations among them, or ``n_resamples < 1``.

    Raises:
        ValueError: when ``values`` and ``clusters`` differ in length.
    """
    if len(values) != len(clusters):
        raise ValueError(f"values ({len(values)}) and clusters ({len(clusters)}) differ in length")
    kept = [
        (float(v), c)
        for v, c in zip(values, clusters, strict=True)
        if v is not None and math.isfinite(v)
    ]
    if not kept or n_resamples < 1 or len({c for _, c in kept}) < max(min_clusters, MIN_CLUSTERS):
        return None
    data = np.array([v for v, _ in kept], dtype=float)
    labels = np.array([str(c) for _, c in kept])
    means = cluster_bootstrap_draws(data, labels, n_resamples, seed)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)
