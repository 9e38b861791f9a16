"""Misclassification-corrected accept rate (Rogan-Gladen) with a bootstrap interval.

A judge with sensitivity ``se`` (true-accept rate) and specificity ``sp`` (true-reject
rate) that accepts a share ``J`` of the answers implies a true share of correct answers

    p = (J + sp - 1) / (se + sp - 1)

(W. J. Rogan and B. Gladen (1978), "Estimating prevalence from the results of a screening
test", American Journal of Epidemiology 107(1):71-76). The estimate is clipped to [0, 1]
(flagged), and undefined when ``se + sp - 1 <= 0`` (a judge no better than chance).

The interval is a percentile bootstrap that carries the uncertainty of all three inputs:
each replicate resamples the judged questions (for ``J``) AND, independently, the
labelled pairs (reference, judge verdict) from which ``se`` and ``sp`` are re-estimated.
Replicates whose re-estimated ``se + sp - 1 <= 0`` have no estimate; they are counted
(``n_boot_invalid``) and left out of the percentiles. Seeded: the same inputs and seed
give the same interval.

``J`` here is the accept rate (share of verdicts >= 50). With ``judge.protocol=binary``
that is J itself; with the rubric protocol it is the share of answers scored >= 50.
The corrected value is reported beside the raw J, never instead of it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoganGladen:
    """A point estimate of the corrected prevalence.

    Attributes:
        raw: the observed accept rate J on 0-1.
        sensitivity: the judge's sensitivity used, 0-1.
        specificity: the judge's specificity used, 0-1.
        value: the corrected rate on 0-1 (after clipping), ``None`` when undefined.
        unclipped: the estimate before clipping, ``None`` when undefined.
        clipped: ``True`` when ``unclipped`` was outside [0, 1] and was clipped.
        reason: why ``value`` is ``None`` (empty when defined).
    """

    raw: float
    sensitivity: float
    specificity: float
    value: float | None
    unclipped: float | None
    clipped: bool
    reason: str = ""


def rogan_gladen(j: float, sensitivity: float, specificity: float) -> RoganGladen:
    """Rogan-Gladen corrected prevalence ``(J + sp - 1) / (se + sp - 1)``, clipped to [0, 1].

    Args:
        j: observed accept rate on 0-1.
        sensitivity: true-accept rate of the judge on 0-1.
        specificity: true-reject rate of the judge on 0-1.

    Returns:
        The :class:`RoganGladen` estimate; ``value`` is ``None`` (with a reason) when
        ``se + sp - 1 <= 0``.

    Raises:
        ValueError: if an input is outside [0, 1].
    """
    for name, x in (("J", j), ("sensitivity", sensitivity), ("specificity", specificity)):
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"{name} must be on a 0-1 scale, got {x}")
    youden = sensitivity + specificity - 1.0
    if youden <= 0.0:
        return RoganGladen(
            j,
            sensitivity,
            specificity,
            None,
            None,
            False,
            reason=(
                f"sensitivity + specificity - 1 = {youden:.3f} <= 0: the judge is no better "
                "than chance, so no correction is possible"
            ),
        )
    unclipped = (j + specificity - 1.0) / youden
    value = min(1.0, max(0.0, unclipped))
    return RoganGladen(j, sensitivity, specificity, value, unclipped, value != unclipped)


@dataclass(frozen=True)
class CorrectedJ:
    """The corrected accept rate with its bootstrap interval.

    Attributes:
        estimate: the point estimate (:class:`RoganGladen`).
        ci_low: lower percentile bound on 0-1 (``None`` if no replicate was valid).
        ci_high: upper percentile bound on 0-1.
        confidence: interval level, e.g. 0.95.
        n_questions: judged questions behind J.
        n_labelled: labelled pairs behind sensitivity/specificity.
        n_boot: bootstrap replicates drawn.
        n_boot_invalid: replicates without an estimate (``se + sp - 1 <= 0``).
        seed: the bootstrap seed.
        source: where sensitivity/specificity come from: ``"labels"`` (human labels) or
            ``"audit"`` (audit controls; weaker: controls are not real answers).
        method: one line saying how the interval was made (for the report).
    """

    estimate: RoganGladen
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_questions: int
    n_labelled: int
    n_boot: int
    n_boot_invalid: int
    seed: int
    source: str
    method: str


def corrected_j(
    judge_accepts: Sequence[bool],
    labelled_reference: Sequence[bool],
    labelled_judge: Sequence[bool],
    *,
    source: str = "labels",
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> CorrectedJ:
    """Rogan-Gladen corrected accept rate with a two-sample percentile bootstrap interval.

    Args:
        judge_accepts: the judge's verdict (accepted?) per judged question, length n.
        labelled_reference: truth per labelled item (``True`` = correct), length m.
        labelled_judge: the judge's verdict per labelled item, same length and order.
        source: ``"labels"`` or ``"audit"``, recorded in the result.
        n_boot: bootstrap replicates (each resamples n questions and m labelled pairs,
            independently, with replacement).
        confidence: interval level in (0, 1).
        seed: seed of ``numpy.random.default_rng``.

    Returns:
        The :class:`CorrectedJ`.

    Raises:
        ValueError: if there are no judged questions, the labelled set lacks a correct or
            a wrong item (sensitivity or specificity undefined), lengths differ, or
            ``n_boot < 1``.
    """
    accepts = np.asarray(judge_accepts, dtype=bool)
    ref = np.asarray(labelled_reference, dtype=bool)
    got = np.asarray(labelled_judge, dtype=bool)
    if accepts.size == 0:
        raise ValueError("corrected J needs at least one judged question")
    if ref.shape != got.shape:
        raise ValueError(f"labelled reference and judge lengths differ: {ref.size} vs {got.size}")
    if not ref.any() or ref.all():
        raise ValueError(
            "corrected J needs labelled items that are correct AND items that are wrong "
            f"(got {int(ref.sum())} correct, {int((~ref).sum())} wrong)"
        )
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    sens = float(np.mean(got[ref]))
    spec = float(np.mean(~got[~ref]))
    estimate = rogan_gladen(float(np.mean(accepts)), sens, spec)

    rng = np.random.default_rng(seed)
    n, m = accepts.size, ref.size
    # bootstrap over the questions (J) ...
    j_star = accepts[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)
    # ... and, independently, over the labelled pairs (sensitivity, specificity)
    idx = rng.integers(0, m, size=(n_boot, m))
    ref_b, got_b = ref[idx], got[idx]
    pos, neg = ref_b.sum(axis=1), (~ref_b).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sens_b = (ref_b & got_b).sum(axis=1) / pos
        spec_b = (~ref_b & ~got_b).sum(axis=1) / neg
        youden_b = sens_b + spec_b - 1.0
        valid = (pos > 0) & (neg > 0) & (youden_b > 0)
        p_b = np.clip((j_star + spec_b - 1.0) / youden_b, 0.0, 1.0)[valid]
    alpha = 1.0 - confidence
    ci_low: float | None = None
    ci_high: float | None = None
    if p_b.size:
        low, high = np.quantile(p_b, [alpha / 2, 1 - alpha / 2])
        ci_low, ci_high = float(low), float(high)
    invalid = int(n_boot - valid.sum())
    if invalid:
        logger.info("corrected J: %d of %d bootstrap replicates had no estimate", invalid, n_boot)
    method = (
        f"percentile bootstrap, {n_boot} replicates (seed {seed}), resampling the {n} judged "
        f"questions and, independently, the {m} {'labelled' if source == 'labels' else 'audit'} "
        "items; each replicate re-estimates J, sensitivity and specificity"
    )
    return CorrectedJ(
        estimate=estimate,
        ci_low=ci_low,
        ci_high=ci_high,
        confidence=confidence,
        n_questions=n,
        n_labelled=m,
        n_boot=n_boot,
        n_boot_invalid=invalid,
        seed=seed,
        source=source,
        method=method,
    )
