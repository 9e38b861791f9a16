"""Any list, dict of lists or JSON Lines of records, with field names given or detected.

With ``data.format=fields`` the names come from ``data.fields`` (a
:class:`~locomo_exp.config.FieldMap`). With ``data.format=auto`` a file that is none of
the known layouts is read when its field names are among those public LoCoMo result
files use (:func:`detect_field_map`), e.g. ``standard_answer``/``generated_answer`` or
Zep's ``golden_answer`` (gold) with ``answer`` (the PREDICTION).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from locomo_exp.config import FieldMap
from locomo_exp.data.layout_spec import Candidate, Layout, LayoutSpec, judge_field_name

QUESTION_NAMES: tuple[str, ...] = ("question", "query")
GOLD_NAMES: tuple[str, ...] = (
    "ground_truth",
    "ground_truth_answer",
    "gold_answer",
    "golden_answer",
    "standard_answer",
    "reference_answer",
    "expected_answer",
    "gold",
    "answer",
)
"""Gold-answer field names, in order of preference.

``answer`` comes last: Zep's files use it for the prediction.
"""
PREDICTION_NAMES: tuple[str, ...] = (
    "predicted_answer",
    "prediction",
    "generated_answer",
    "response",
    "ai_response",
    "model_answer",
    "system_answer",
    "pred",
    "answer",
)
"""Prediction field names, in order of preference (never the field chosen as gold)."""
OPTIONAL_NAMES: dict[str, tuple[str, ...]] = {
    "category": ("category",),
    "question_id": ("question_id", "qid"),
    "conversation_id": ("conversation_id", "sample_id", "conv_id"),
    "evidence": ("evidence",),
    "adversarial_answer": ("adversarial_answer",),
    "search_latency_s": ("search_latency_s", "search_time"),
    "search_latency_ms": ("search_latency_ms",),
    "total_latency_s": ("total_latency_s", "total_latency"),
    "total_latency_ms": ("duration_ms", "total_latency_ms"),
    "context_tokens": ("context_tokens",),
}
"""Optional fields and the names they go by, in order of preference.

``search_time`` and ``total_latency`` are the Mem0 harness's (seconds, often as text);
its ``response_time`` is the answering step alone and is not read as a latency.
"""
LATENCY_FIELDS: tuple[str, ...] = (
    "search_latency_s",
    "search_latency_ms",
    "total_latency_s",
    "total_latency_ms",
    "context_tokens",
)
"""The optional fields a named layout without its own latency names takes from a file."""


def _first(present: set[str], names: Sequence[str], exclude: str | None = None) -> str | None:
    return next((n for n in names if n in present and n != exclude), None)


def detect_latency_fields(records: list[dict[str, Any]]) -> dict[str, str]:
    """Latency and context-token fields present in sample records (:data:`LATENCY_FIELDS`).

    Args:
        records: sample records (dicts).

    Returns:
        ``{FieldMap attribute: field name}`` for those found, e.g.
        ``{"search_latency_s": "search_time", "total_latency_s": "total_latency"}``.
    """
    present: set[str] = set()
    for record in records:
        present.update(record)
    found = {name: _first(present, OPTIONAL_NAMES[name]) for name in LATENCY_FIELDS}
    return {name: key for name, key in found.items() if key}


def detect_field_map(records: list[dict[str, Any]], judge_field: str | None) -> FieldMap | None:
    """Field names of records whose layout is not one of the named ones.

    Args:
        records: sample records (dicts).
        judge_field: the stored-verdict field detected, if any.

    Returns:
        A :class:`FieldMap`, or ``None`` when no question, gold and prediction field is
        found. ``category`` is ``category`` even when absent (then reported per record, or
        taken from ``data.reference``/``data.categories_from``).
    """
    present: set[str] = set()
    for record in records:
        present.update(record)
    question = _first(present, QUESTION_NAMES)
    gold = _first(present, GOLD_NAMES)
    prediction = _first(present, PREDICTION_NAMES, exclude=gold)
    if not (question and gold and prediction):
        return None
    optional = {name: _first(present, names) for name, names in OPTIONAL_NAMES.items()}
    return FieldMap(
        question=question,
        ground_truth=gold,
        prediction=prediction,
        category=optional.pop("category") or "category",
        judge_score=judge_field,
        **optional,
    )


def _build(candidate: Candidate) -> Layout:
    if candidate.forced:  # data.format=fields: the names given in data.fields
        mapping = candidate.config.fields
        judge_field = judge_field_name(candidate.sample, mapping.judge_score)
        return Layout(
            "fields", candidate.records, candidate.records_key, mapping, judge_field=judge_field
        )
    detected = detect_field_map(candidate.sample, candidate.judge_key)
    if detected is None:
        raise ValueError("no question, gold answer and prediction field found")
    return Layout(
        "fields",
        candidate.records,
        candidate.records_key,
        detected,
        judge_field=judge_field_name(candidate.sample, candidate.judge_key),
    )


LAYOUT = LayoutSpec(
    name="fields",
    scope="records",
    looks_for="records with a question, a gold answer and a prediction field",
    matches=lambda candidate: detect_field_map(candidate.sample, candidate.judge_key) is not None,
    build=_build,
)
"""The ``fields`` layout: field names given (``data.format=fields``) or detected."""
