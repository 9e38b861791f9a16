"""LongMemEval's accuracies from per-question verdicts, each with an interval.

The figures of LongMemEval's ``src/evaluation/print_qa_metrics.py`` (docs/field_notes.md §12),
on 0-1:

* per-type accuracy -- the mean verdict over the questions of one ``question_type``;
* overall accuracy -- the mean verdict over every scored question;
* task-averaged accuracy -- the unweighted mean of the type accuracies;
* abstention accuracy -- the mean verdict over the ``_abs`` questions.

A question's verdict is 1 (correct) or 0; with several judge runs (``judge.runs > 1``,
where LongMemEval's authors judge once) it is the mean of its runs' verdicts, so a question
judged yes once and no once counts 0.5, never 1, and each accuracy is the mean of those.

Intervals: each accuracy of a count (per type, overall, abstention) has a Wilson score
interval (Wilson 1927; :func:`locomo_exp.stats.agreement.wilson_interval`); a sum of mean
verdicts that is not a whole number gets Wilson's interval at its rate over the same number of
questions (``statsmodels.stats.proportion.proportion_confint(method="wilson")``, which takes a
fractional count). The task average
is a mean of six proportions, not one proportion, so it has no Wilson interval: its interval
is a stratified percentile bootstrap -- each resample draws every type's correct count from
``Binomial(n_t, p_t)`` (which is what resampling that type's questions with replacement
gives) and averages the six rates (Efron & Tibshirani 1993, ch. 13 and §13.3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.stats.agreement import Proportion, wilson_interval

METRIC_VERSION = "lme-accuracy-v1"
"""Version of these aggregates (written into summary.json and the card)."""

TASK_AVG_RESAMPLES = 10_000
"""Bootstrap resamples of the task-averaged accuracy's interval."""


@dataclass(frozen=True)
class MeanRate:
    """An accuracy as the mean of per-question verdicts, with a Wilson interval.

    Attributes:
        successes: the sum of the verdicts: a count of correct questions, or fractional when
            some question's judge runs disagree (0.5 for one yes and one no).
        n: the questions scored; 0 means nothing was scored (rate and interval ``None``).
        rate: ``successes / n`` on 0-1, or ``None``.
        ci_low: lower bound of the Wilson interval on 0-1, or ``None``.
        ci_high: upper bound on 0-1, or ``None``.
        confidence: the interval's level.
    """

    successes: float
    n: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95


def mean_rate(total: float, n: int, confidence: float = 0.95) -> MeanRate:
    """The accuracy of ``n`` questions whose verdicts add up to ``total``.

    Args:
        total: the sum of the questions' verdicts (0-1 each), ``0 <= total <= n``.
        n: questions scored.
        confidence: interval level in (0, 1).

    Returns:
        :class:`MeanRate`; a whole ``total`` is stored as an ``int`` with
        :func:`~locomo_exp.stats.agreement.wilson_interval`'s interval, a fractional one
        with statsmodels' Wilson interval at ``total / n``.

    Raises:
        ValueError: ``total`` outside ``[0, n]`` or ``confidence`` outside (0, 1).
    """
    total = round(float(total), 9)  # a sum of thirds adds float dust: 2.9999999999999996
    if total.is_integer():
        p = wilson_interval(int(total), n, confidence)
        return MeanRate(p.successes, p.n, p.rate, p.ci_low, p.ci_high, p.confidence)
    if not 0.0 < total < n or not 0.0 < confidence < 1.0:
        raise ValueError(f"need 0 <= total <= n and 0 < confidence < 1, got {total}, {n}")
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(total, n, alpha=1.0 - confidence, method="wilson")
    return MeanRate(float(total), n, total / n, float(low), float(high), confidence)


@dataclass(frozen=True)
class TaskAverage:
    """The task-averaged accuracy (0-1) with its stratified bootstrap interval.

    Attributes:
        accuracy: the mean of the type accuracies, or ``None`` when no type was scored.
        types: the types averaged (those with at least one scored question).
        ci_low: lower bound (0-1), or ``None``.
        ci_high: upper bound (0-1), or ``None``.
        confidence: the interval's level.
        n_resamples: bootstrap resamples drawn.
    """

    accuracy: float | None
    types: tuple[str, ...]
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_resamples: int


@dataclass(frozen=True)
class LmeAccuracies:
    """Every LongMemEval figure of one set of verdicts.

    Attributes:
        overall: every scored question.
        per_type: by ``question_type``, in :data:`.facts.QUESTION_TYPES`
            order (types with no question have ``n == 0``).
        task_avg: the mean of the type accuracies.
        abstention: the ``_abs`` questions.
        unscored: questions without a verdict (left out of every figure).
    """

    overall: MeanRate
    per_type: dict[str, MeanRate]
    task_avg: TaskAverage
    abstention: MeanRate
    unscored: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready figures: ``{"overall": {...}, "task_avg": {...}, ...}`` on 0-1."""

        def prop(p: MeanRate) -> dict[str, Any]:
            return {
                "correct": p.successes,
                "n": p.n,
                "accuracy": p.rate,
                "ci_low": p.ci_low,
                "ci_high": p.ci_high,
                "interval": "wilson",
            }

        return {
            "overall": prop(self.overall),
            "task_avg": {
                "accuracy": self.task_avg.accuracy,
                "types": list(self.task_avg.types),
                "ci_low": self.task_avg.ci_low,
                "ci_high": self.task_avg.ci_high,
                "interval": f"stratified bootstrap ({self.task_avg.n_resamples} resamples)",
            },
            "abstention": prop(self.abstention),
            "per_type": {name: prop(p) for name, p in self.per_type.items()},
            "unscored": self.unscored,
            "confidence": self.overall.confidence,
            "version": METRIC_VERSION,
        }


def task_average(
    per_type: Mapping[str, Proportion | MeanRate],
    *,
    confidence: float = 0.95,
    n_resamples: int = TASK_AVG_RESAMPLES,
    seed: int = 0,
) -> TaskAverage:
    """The task-averaged accuracy and its stratified bootstrap interval.

    Args:
        per_type: each type's count of correct verdicts (or sum of mean verdicts) out of its
            scored questions.
        confidence: interval level in (0, 1).
        n_resamples: resamples (at least 1).
        seed: seed of :func:`numpy.random.default_rng`.

    Returns:
        :class:`TaskAverage` over the types with ``n > 0`` (``None`` figures when none).
    """
    scored = {name: p for name, p in per_type.items() if p.n > 0}
    if not scored:
        return TaskAverage(None, (), None, None, confidence, 0)
    rates = [p.successes / p.n for p in scored.values()]
    rng = np.random.default_rng(seed)
    draws = np.zeros(n_resamples)
    for p in scored.values():
        draws += rng.binomial(p.n, p.successes / p.n, size=n_resamples) / p.n
    draws /= len(scored)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return TaskAverage(
        float(np.mean(rates)), tuple(scored), float(low), float(high), confidence, n_resamples
    )


def lme_accuracies(
    verdicts: Iterable[tuple[str, str, bool | float | None]],
    *,
    confidence: float = 0.95,
    seed: int = 0,
) -> LmeAccuracies:
    """LongMemEval's figures from per-question verdicts.

    Args:
        verdicts: ``(question_id, question_type, correct)`` per question; ``correct`` is
            a bool, or the mean of its judge runs' verdicts on 0-1 (0.5 for one yes and one
            no), or ``None`` for a question without a verdict (left out, counted in
            ``unscored``).
        confidence: level of every interval.
        seed: seed of the task average's bootstrap.

    Returns:
        :class:`LmeAccuracies` (rates on 0-1). Example: 362 correct of 500 gives overall
        0.724 with Wilson interval (0.6833, 0.7612).

    Raises:
        ValueError: for a ``question_type`` that is not one of LongMemEval's six.
    """
    counts: dict[str, list[float]] = {name: [0, 0] for name in lme.QUESTION_TYPES}
    abstention: list[float] = [0, 0]
    unscored = 0
    for question_id, question_type, correct in verdicts:
        if question_type not in counts:
            raise ValueError(f"{question_id}: unknown LongMemEval question_type {question_type!r}")
        if correct is None:
            unscored += 1
            continue
        counts[question_type][0] += float(correct)
        counts[question_type][1] += 1
        if lme.is_abstention(question_id):
            abstention[0] += float(correct)
            abstention[1] += 1
    per_type = {name: mean_rate(c, int(n), confidence) for name, (c, n) in counts.items()}
    total = [sum(c for c, _ in counts.values()), sum(n for _, n in counts.values())]
    return LmeAccuracies(
        overall=mean_rate(total[0], int(total[1]), confidence),
        per_type=per_type,
        task_avg=task_average(per_type, confidence=confidence, seed=seed),
        abstention=mean_rate(abstention[0], int(abstention[1]), confidence),
        unscored=unscored,
    )


__all__ = [
    "METRIC_VERSION", "LmeAccuracies", "MeanRate", "TaskAverage", "lme_accuracies", "mean_rate",
    "task_average"]
