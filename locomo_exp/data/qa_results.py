"""The project's own layout: a JSON list of ``{question, ground_truth, predicted_answer, ...}``.

Optional fields: ``question_id, conversation_id, evidence, adversarial_answer,
search_latency_s, total_latency_s, context_tokens`` and a stored verdict
(:data:`locomo_exp.data.verdicts.VERDICT_FIELDS`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from locomo_exp.config import FieldMap
from locomo_exp.data.layout_spec import Candidate, Layout, LayoutSpec, judge_field_name

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


def _build(candidate: Candidate) -> Layout:
    return Layout(
        "qa_results",
        candidate.records,
        candidate.records_key,
        field_map(candidate.judge_key),
        judge_field=judge_field_name(candidate.sample, candidate.judge_key),
    )


LAYOUT = LayoutSpec(
    name="qa_results",
    scope="records",
    looks_for="a qa_results list with 'predicted_answer'",
    matches=lambda candidate: matches(candidate.sample),
    build=_build,
)
"""The ``qa_results`` layout."""
