"""The project's own layout: a JSON list of ``{question, ground_truth, predicted_answer, ...}``.

Optional fields: ``question_id, conversation_id, evidence, adversarial_answer,
search_latency_s, total_latency_s, context_tokens`` and a stored verdict
(:data:`locomo_exp.data.verdicts.VERDICT_FIELDS`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from locomo_exp.config import FieldMap

FIELDS = FieldMap(
    question="question",
    ground_truth="ground_truth",
    prediction="predicted_answer",
    category="category",
    question_id="question_id",
    conversation_id="conversation_id",
    evidence="evidence",
    adversarial_answer="adversarial_answer",
    search_latency_s="search_latency_s",
    total_latency_s="total_latency_s",
    context_tokens="context_tokens",
)
"""Field names of the ``qa_results`` layout."""


def matches(records: list[dict[str, Any]]) -> bool:
    """Whether sample records look like ``qa_results`` (they carry ``predicted_answer``)."""
    return any("predicted_answer" in r for r in records)


def field_map(judge_field: str | None) -> FieldMap:
    """:data:`FIELDS` with the detected stored-verdict field."""
    return replace(FIELDS, judge_score=judge_field)
