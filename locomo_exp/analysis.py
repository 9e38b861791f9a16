"""Uncertainty, judge reliability and error analysis over per-question rows.

Rows are the dicts written to ``scores.jsonl``: ``question_id``, ``category``, ``question``,
``ground_truth``, ``prediction``, lexical scores (0-1) and, when the judge ran, ``j_mean``
(0-100) and ``j_runs`` (one entry per run with ``outcome`` and ``score``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from locomo_exp.records import CATEGORY_GROUPS
from locomo_exp.results import Analysis, BootstrapCI, Extremes, QuestionBrief, Reliability

log = logging.getLogger(__name__)

CONFIDENCE = 0.95
"""Coverage of the bootstrap intervals."""


BOOTSTRAP_CHUNK_ELEMENTS = 2_000_000
"""Resample indices drawn at once (int64: 16 MB, plus as many float64 values)."""


def bootstrap_ci(
    values: Sequence[float], n_samples: int = 1000, seed: int = 0, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of a mean, resampling questions.

    Efron & Tibshirani (1993), percentile method: draw ``n_samples`` resamples of the
    questions with replacement, take the mean of each, report the (1-c)/2 and (1+c)/2
    quantiles of those means. Resamples are drawn in chunks of about
    :data:`BOOTSTRAP_CHUNK_ELEMENTS` indices, so memory is bounded whatever ``n_samples``
    and the number of questions; the values equal one ``(n_samples, n)`` draw from the
    same seed (the intervals are those of earlier versions).

    Args:
        values: per-question scores (any unit; the interval has the same unit).
        n_samples: number of bootstrap resamples.
        seed: seed of numpy's ``default_rng`` (same seed, same interval).
        confidence: coverage, e.g. 0.95.

    Returns:
        ``(low, high)``, or ``None`` for no values or ``n_samples < 1``.
    """
    data = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if data.size == 0 or n_samples < 1:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(n_samples)
    # resamples in chunks of about BOOTSTRAP_CHUNK_ELEMENTS indices: memory stays bounded
    # (not n_samples x n), and the draws are the same stream as one big draw
    rows = max(1, BOOTSTRAP_CHUNK_ELEMENTS // data.size)
    for start in range(0, n_samples, rows):
        stop = min(start + rows, n_samples)
        indices = rng.integers(0, data.size, size=(stop - start, data.size))
        means[start:stop] = data[indices].mean(axis=1)
        del indices
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def bootstrap_by_category(
    rows: Sequence[dict[str, Any]], metric: str, n_samples: int = 1000, seed: int = 0
) -> dict[str, BootstrapCI | None]:
    """:func:`bootstrap_ci` of ``metric`` per category id and overall.

    Args:
        rows: per-question rows.
        metric: row key, e.g. ``f1`` (0-1) or ``j_mean`` (0-100).
        n_samples: bootstrap resamples.
        seed: random seed.

    Returns:
        ``{"1": BootstrapCI | None, ..., "overall_1_4": ..., "overall": ...}``, in the
        metric's unit; ``None`` for a group without values.
    """
    result: dict[str, BootstrapCI | None] = {}
    for key, members in CATEGORY_GROUPS.items():
        values = [
            row[metric]
            for row in rows
            if row["category"] in members and row.get(metric) is not None
        ]
        interval = bootstrap_ci(values, n_samples, seed)
        result[key] = BootstrapCI(*interval) if interval else None
    return result


def _run_matrix(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """Runs x questions matrix of valid judge scores, NaN where a run has none."""
    judged = [row for row in rows if row.get("j_runs")]
    if not judged:
        return np.empty((0, 0))
    n_runs = max(len(row["j_runs"]) for row in judged)
    matrix = np.full((n_runs, len(judged)), np.nan)
    for column, row in enumerate(judged):
        for run in row["j_runs"]:
            if run.get("outcome") == "valid" and run.get("score") is not None:
                matrix[int(run.get("run", 0)), column] = float(run["score"])
    return matrix


def judge_reliability(rows: Sequence[dict[str, Any]], protocol: str) -> dict[str, Any]:
    """Agreement between the judge's runs on the same questions.

    Krippendorff's alpha (Krippendorff 2004; the ``krippendorff`` package) with runs as
    coders and questions as units, at the protocol's level (its spec's
    ``krippendorff_level``: interval for the 0-100 ``rubric``, nominal for ``binary``).
    Also the share of questions whose valid runs all gave the same score.

    Args:
        rows: per-question rows with ``j_runs``.
        protocol: a judge protocol name (``rubric``, ``binary``), or the level itself
            (``interval``, ``nominal``: a template's, from the judge summary).

    Returns:
        ``{"krippendorff_alpha": float | None, "level": str, "unanimous_share": float | None,
        "questions": int}``; ``None`` where it cannot be computed (fewer than 2 runs, or no
        variation at all).
    """
    from locomo_exp.judge.protocols import get_protocol

    level = (
        get_protocol(protocol).krippendorff_level
        if protocol not in ("interval", "nominal")
        else ("interval" if protocol == "interval" else "nominal")
    )
    matrix = _run_matrix(rows)
    result: dict[str, Any] = {
        "krippendorff_alpha": None,
        "level": level,
        "unanimous_share": None,
        "questions": int(matrix.shape[1]) if matrix.size else 0,
    }
    if matrix.size == 0:
        return result
    unanimous = []
    for column in matrix.T:
        valid = column[~np.isnan(column)]
        if valid.size:
            unanimous.append(bool(np.all(valid == valid[0])))
    if unanimous:
        result["unanimous_share"] = sum(unanimous) / len(unanimous)
    if matrix.shape[0] >= 2:
        try:
            import krippendorff

            alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
            if math.isfinite(alpha):
                result["krippendorff_alpha"] = float(alpha)
        except (ValueError, ZeroDivisionError) as error:  # e.g. a single value overall
            log.info("Krippendorff's alpha not computed: %s", error)
    return result


def _brief(row: dict[str, Any], keys: Iterable[str], gap: float | None = None) -> QuestionBrief:
    return QuestionBrief(
        question_id=row.get("question_id"),
        category=row.get("category"),
        question=row.get("question"),
        ground_truth=row.get("ground_truth"),
        prediction=row.get("prediction"),
        scores={k: row.get(k) for k in keys},
        gap=gap,
    )


def extremes(
    rows: Sequence[dict[str, Any]], metric: str, k: int = 5, also: Sequence[str] = ()
) -> Extremes:
    """The ``k`` highest and lowest questions by a metric (ties broken by file order).

    Args:
        rows: per-question rows.
        metric: row key to sort on.
        k: how many at each end.
        also: other row keys to carry along.

    Returns:
        :class:`Extremes`: ``top`` highest first, ``bottom`` lowest first; each brief's
        ``scores`` hold ``metric`` then ``also``.
    """
    scored = [row for row in rows if row.get(metric) is not None]
    order = sorted(scored, key=lambda row: -row[metric])
    keys = (metric, *also)
    return Extremes(
        top=tuple(_brief(row, keys) for row in order[:k]),
        bottom=tuple(_brief(row, keys) for row in list(reversed(order))[:k]),
    )


def f1_j_disagreements(
    rows: Sequence[dict[str, Any]], f1_key: str = "f1", k: int = 5
) -> tuple[QuestionBrief, ...]:
    """Questions where F1 (as 0-100) and J (0-100) differ most, largest gap first.

    Args:
        rows: per-question rows with both ``f1_key`` and ``j_mean``.
        f1_key: which F1 to compare.
        k: how many.

    Returns:
        Briefs with scores ``f1_key`` (0-1) and ``j_mean`` (0-100), and ``gap`` = J - 100 * F1.
    """
    both = [row for row in rows if row.get(f1_key) is not None and row.get("j_mean") is not None]
    ranked = sorted(both, key=lambda row: -abs(row["j_mean"] - 100.0 * row[f1_key]))
    return tuple(
        _brief(row, (f1_key, "j_mean"), gap=row["j_mean"] - 100.0 * row[f1_key])
        for row in ranked[:k]
    )


def analyse(
    rows: Sequence[dict[str, Any]],
    *,
    protocol: str | None = None,
    bootstrap_samples: int = 1000,
    seed: int = 0,
) -> Analysis:
    """Everything the report's uncertainty, reliability and error-analysis sections show.

    Args:
        rows: per-question rows.
        protocol: the judge protocol when J was run, else ``None``.
        bootstrap_samples: resamples per interval.
        seed: random seed.

    Returns:
        :class:`~locomo_exp.results.Analysis`: intervals of ``f1`` (0-1) and ``j_mean``
        (0-100) for the metrics present, extremes per metric, F1-J disagreements when both
        ran, and judge reliability when the judge ran.
    """
    has_f1 = any(row.get("f1") is not None for row in rows)
    has_j = any(row.get("j_mean") is not None for row in rows)
    metrics = [m for m, present in (("f1", has_f1), ("j_mean", has_j)) if present]
    return Analysis(
        confidence=CONFIDENCE,
        bootstrap_samples=bootstrap_samples,
        seed=seed,
        bootstrap={m: bootstrap_by_category(rows, m, bootstrap_samples, seed) for m in metrics},
        extremes={m: extremes(rows, m, also=[o for o in metrics if o != m]) for m in metrics},
        disagreements=f1_j_disagreements(rows) if has_f1 and has_j else None,
        reliability=(
            Reliability.from_json(judge_reliability(rows, protocol)) if has_j and protocol else None
        ),
    )
