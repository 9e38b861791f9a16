"""Per-question metrics a results file carries (``f1_score``, ``bleu_score``, ``<name>_f1``).

Published files store their authors' per-question scores beside the answers: the Mem0
harness writes ``f1_score`` and ``bleu_score``, LoCoMo's ``evaluate_qa.py`` writes
``<name>_f1`` (rounded to 3 decimals). They are read here, never scored with; the run
compares them with its own scores (:mod:`locomo_exp.scoring.stored_vs_recomputed`) so a user learns
which variant the file used.
"""

from __future__ import annotations

import math
import re
from typing import Any

from locomo_exp.data.answer_values import number_from_text

STORED_METRIC_PATTERN = re.compile(
    r"^(?:[a-z0-9]+_)*(?:f1|bleu|bleu1|bleu_1|rouge_?l?)(?:_score)?$", re.IGNORECASE
)
"""Field names read as stored per-question metrics: ``f1``, ``f1_score``, ``bleu_score``,
``bleu1``, ``honcho_f1``, ``rouge_l``... (numbers only; ``true``/``false`` are not metrics)."""


def stored_metric_values(raw: dict[str, Any], exclude: set[str]) -> dict[str, float]:
    """The numeric per-question metrics of one raw record.

    Args:
        raw: the record as parsed (top-level keys are looked at).
        exclude: fields the record is read from (prediction, gold, verdict...), never metrics.

    Returns:
        ``{field: value}`` for each key matching :data:`STORED_METRIC_PATTERN` whose value
        is a finite int/float or numeric text (the Mem0 harness's ``"bleu_score": "0.5"``);
        booleans and other text are left out; in the record's key order.
    """
    found: dict[str, float] = {}
    for key, value in raw.items():
        if key in exclude or not isinstance(key, str) or not STORED_METRIC_PATTERN.match(key):
            continue
        value = number_from_text(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value):
            found[key] = float(value)
    return found


__all__ = ["STORED_METRIC_PATTERN", "stored_metric_values"]
