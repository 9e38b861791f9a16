"""Lexical scorers: token F1 variants and BLEU-1 (see :mod:`locomo_exp.scoring.f1`)."""

from __future__ import annotations

from locomo_exp.records import QARecord
from locomo_exp.scoring.f1 import BLEU1_VERSION, F1_FUNCTIONS, F1_VERSIONS, bleu1

LEXICAL_METRICS: tuple[str, ...] = ("f1", "f1_locomo", "f1_squad", "f1_mem0", "bleu1")
"""Per-question lexical metric names: ``f1`` is the selected variant; all are 0-1."""


def score_lexical(
    records: list[QARecord], variant: str = "locomo", with_bleu1: bool = True
) -> list[dict[str, float]]:
    """Score every record with every F1 variant (and BLEU-1).

    All variants are computed because published baselines use different ones; ``f1`` is
    the copy of the variant selected by ``f1.variant``.

    Several golds (``record.gold_references``): each metric is the maximum over the
    references, each scored on its own (SQuAD v1.1's ``metric_max_over_ground_truths``
    rule), so golds ``["the Final Harbor", "Port Vell"]`` and prediction ``"Port Vell"``
    score 1.0. A record with ``prediction_missing`` (null/NaN/inf in the file) scores 0.0
    in every metric, whatever its text and category (also ``locomo`` category 5).

    Args:
        records: the answered questions.
        variant: ``locomo``, ``squad`` or ``mem0`` (reported as ``f1``).
        with_bleu1: also compute BLEU-1.

    Returns:
        One dict per record, in order: ``{"f1", "f1_locomo", "f1_squad", "f1_mem0"[, "bleu1"]}``,
        every value in [0, 1].

    Raises:
        KeyError: for an unknown variant.
    """
    if variant not in F1_FUNCTIONS:
        raise KeyError(f"unknown F1 variant {variant!r}. Available: {', '.join(F1_FUNCTIONS)}")
    scores: list[dict[str, float]] = []
    for record in records:
        references = record.gold_references
        if record.prediction_missing:
            row = {f"f1_{name}": 0.0 for name in F1_FUNCTIONS}
        else:
            row = {
                f"f1_{name}": max(
                    fn(record.prediction, reference, record.category) for reference in references
                )
                for name, fn in F1_FUNCTIONS.items()
            }
        row = {"f1": row[f"f1_{variant}"], **row}
        if with_bleu1:
            row["bleu1"] = (
                0.0
                if record.prediction_missing
                else max(bleu1(record.prediction, reference) for reference in references)
            )
        scores.append(row)
    return scores


__all__ = ["BLEU1_VERSION", "F1_VERSIONS", "LEXICAL_METRICS", "score_lexical"]
