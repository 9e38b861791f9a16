"""Lexical scorers: token F1 variants and BLEU-1.

Definitions are in :mod:`locomo_exp.scoring.f1`; the one list of metrics (names, versions,
titles) is :data:`locomo_exp.scoring.specs.LEXICAL_SPECS`.
"""

from __future__ import annotations

from locomo_exp.results import QARecord
from locomo_exp.scoring.specs import (
    BLEU1_SPEC,
    F1_SPECS,
    F1_VARIANTS,
    F1_VERSIONS,
    LEXICAL_METRICS,
    LEXICAL_SPECS,
    METRIC_TITLES,
    REPORTED_F1,
    MetricSpec,
    UnknownMetricError,
    f1_variant,
)


def _best_over_references(spec: MetricSpec, record: QARecord) -> float:
    """The spec's score against each gold reference; the best one (0.0 for a missing prediction)."""
    if record.prediction_missing:
        return 0.0
    return max(
        spec.function(record.prediction, reference, record.category)
        for reference in record.gold_references
    )


def score_lexical(
    records: list[QARecord], variant: str = "locomo", with_bleu1: bool = True
) -> list[dict[str, float]]:
    """Score every record with every F1 variant (and BLEU-1).

    All variants of :data:`~locomo_exp.scoring.specs.F1_SPECS` are computed because
    published baselines use different ones; ``f1`` is the copy of the variant selected by
    ``f1.variant``.

    Several golds (``record.gold_references``): each metric is the maximum over the
    references, each scored on its own (SQuAD v1.1's ``metric_max_over_ground_truths``
    rule), so golds ``["the Final Harbor", "Port Vell"]`` and prediction ``"Port Vell"``
    score 1.0. A record with ``prediction_missing`` (null/NaN/inf in the file) scores 0.0
    in every metric, whatever its text and category (also ``locomo`` category 5).

    Args:
        records: the answered questions.
        variant: an F1 variant name (``locomo``, ``squad``, ``mem0``), reported as ``f1``.
        with_bleu1: also compute BLEU-1.

    Returns:
        One dict per record, in order: ``{"f1", "f1_locomo", "f1_squad", "f1_mem0"[, "bleu1"]}``,
        every value in [0, 1].

    Raises:
        UnknownMetricError: ``unknown F1 variant 'x'. Available: locomo, squad, mem0``.
    """
    selected = f1_variant(variant).metric
    scores: list[dict[str, float]] = []
    for record in records:
        row = {spec.metric: _best_over_references(spec, record) for spec in F1_SPECS}
        row = {REPORTED_F1: row[selected], **row}
        if with_bleu1:
            row[BLEU1_SPEC.metric] = _best_over_references(BLEU1_SPEC, record)
        scores.append(row)
    return scores


BLEU1_VERSION: str
"""BLEU-1's version text for the installed nltk (:data:`locomo_exp.scoring.f1.BLEU1_VERSION`)."""


def __getattr__(name: str) -> str:
    """:data:`BLEU1_VERSION` on first use (it checks nltk's tokenizer, which imports nltk)."""
    if name == "BLEU1_VERSION":
        from locomo_exp.scoring import f1

        return f1.BLEU1_VERSION
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BLEU1_VERSION",
    "F1_VARIANTS",
    "F1_VERSIONS",
    "LEXICAL_METRICS",
    "LEXICAL_SPECS",
    "METRIC_TITLES",
    "MetricSpec",
    "UnknownMetricError",
    "f1_variant",
    "score_lexical",
]
