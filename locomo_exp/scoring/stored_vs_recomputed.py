"""Stored vs recomputed: a file's own per-question metrics checked against this run's.

A published file often carries its authors' per-question scores (the Mem0 harness's
``f1_score`` and ``bleu_score``; LoCoMo's ``<name>_f1``, rounded to 3 decimals). Each stored
field is compared with every lexical metric this run computed; the best-matching one is
named, which tells a user which F1 variant the file used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.results import QARecord
from locomo_exp.scoring.specs import REPORTED_F1

FIRST_DIFFERENCES = 5
"""How many differing questions are listed per stored field."""

_FULL_PRECISION_DIGITS = 10
"""A field whose values show this many decimals or more is taken as unrounded."""

_FLOAT_SLACK = 1e-9
"""Added to every tolerance: float noise between two implementations of one formula."""


def _decimals(value: float) -> int:
    """Decimals shown by Python's shortest repr of ``value`` (``0.667`` -> 3, ``1.0`` -> 0)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        return _FULL_PRECISION_DIGITS
    fraction = text.partition(".")[2].rstrip("0")
    return len(fraction)


def file_rounding(values: Sequence[float]) -> int | None:
    """The number of decimals a file's stored values were rounded to.

    Args:
        values: the stored values of one field.

    Returns:
        The largest number of decimals shown, or ``None`` when that is
        :data:`_FULL_PRECISION_DIGITS` or more (the values are not rounded).
    """
    digits = max((_decimals(v) for v in values), default=0)
    return None if digits >= _FULL_PRECISION_DIGITS else digits


def compare_stored(
    records: Sequence[QARecord],
    lexical: Sequence[Mapping[str, float]],
    stored: Mapping[str, Mapping[str, float]],
) -> dict[str, Any] | None:
    """Compare each stored per-question metric with every recomputed lexical metric.

    A stored value equals a recomputed one when they differ by at most half a unit of the
    file's rounding (``0.667`` vs ``0.6667``: 3 decimals, tolerance 0.0005), plus 1e-9;
    unrounded fields (10+ decimals shown) must agree within 1e-9. Values on 0-100 (any
    above 1) are divided by 100 first.

    Args:
        records: the scored records.
        lexical: per-record scores from :func:`locomo_exp.scoring.score_lexical` (0-1),
            same order; empty when F1 was not run.
        stored: question id -> ``{field: value}`` as read from the file
            (:attr:`locomo_exp.data.LoadedResults.stored_metrics`).

    Returns:
        ``None`` without stored fields or lexical scores; else ``{field: {"n", "scale",
        "decimals", "tolerance", "best", "equal", "max_difference", "candidates":
        {metric: {"equal", "max_difference"}}, "first_differences": [{"question_id",
        "stored", "recomputed"}]}}`` (values 0-1; ``best`` is the metric with the most
        equal values, ties to the smaller largest difference; ``first_differences``
        against it, in file order, at most :data:`FIRST_DIFFERENCES`).
    """
    if not lexical or not stored:
        return None
    fields: dict[str, list[tuple[int, float]]] = {}
    for index, record in enumerate(records):
        for name, value in (stored.get(record.question_id) or {}).items():
            fields.setdefault(name, []).append((index, value))
    candidates = [m for m in lexical[0] if m != REPORTED_F1]
    section: dict[str, Any] = {}
    for name, pairs in fields.items():
        values = [v for _, v in pairs]
        scale = 100.0 if max(values) > 1.0 else 1.0
        digits = file_rounding(values)
        tolerance = (0.0 if digits is None else 0.5 * 10.0**-digits / scale) + _FLOAT_SLACK
        by_metric: dict[str, dict[str, Any]] = {}
        for metric in candidates:
            diffs = [abs(lexical[i][metric] - v / scale) for i, v in pairs]
            finite = [d for d in diffs if math.isfinite(d)]
            by_metric[metric] = {
                "equal": sum(1 for d in finite if d <= tolerance),
                "max_difference": max(finite, default=None),
            }
        best = min(  # most equal, then smallest largest difference, then registry order
            candidates,
            key=lambda m: (-by_metric[m]["equal"], by_metric[m]["max_difference"] or 0.0),
        )
        differing = [
            {
                "question_id": records[i].question_id,
                "stored": v,
                "recomputed": lexical[i][best],
            }
            for i, v in pairs
            if not abs(lexical[i][best] - v / scale) <= tolerance
        ]
        section[name] = {
            "n": len(pairs),
            "scale": "0-100" if scale == 100.0 else "0-1",
            "decimals": digits,
            "tolerance": tolerance,
            "best": best,
            "equal": by_metric[best]["equal"],
            "max_difference": by_metric[best]["max_difference"],
            "candidates": by_metric,
            "first_differences": differing[:FIRST_DIFFERENCES],
        }
    return section or None


__all__ = ["FIRST_DIFFERENCES", "compare_stored", "file_rounding"]
