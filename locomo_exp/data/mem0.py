"""The Mem0 evaluation harness's output (mem0ai/mem0 ``evaluation/``).

A dict of conversation index -> list of ``{question, answer (gold), response (prediction),
category ("1".."4"), bleu_score, f1_score, llm_score (0/1)}`` (docs/field_notes.md §2),
often with ``search_time``, ``response_time`` and ``total_latency`` in seconds; the harness
writes some of these numbers as text (``"0.657"``), read as numbers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from locomo_exp.config import FieldMap
from locomo_exp.data.fields import detect_latency_fields
from locomo_exp.data.layout_spec import Candidate, Layout, LayoutSpec, judge_field_name

FIELDS = FieldMap(
    question="question",
    ground_truth="answer",
    prediction="response",
    category="category",
    judge_score="llm_score",
)
"""Field names of the ``mem0`` layout (``llm_score`` unless another verdict field is found)."""


def matches(records: list[dict[str, Any]]) -> bool:
    """Whether sample records look like the Mem0 harness's (``response`` and ``answer``)."""
    return any("response" in r and "answer" in r for r in records)


def field_map(judge_field: str | None, records: list[dict[str, Any]] | None = None) -> FieldMap:
    """:data:`FIELDS` with the detected stored-verdict field and latency fields.

    Args:
        judge_field: the stored-verdict field detected, if any.
        records: sample records; their ``search_time`` / ``total_latency`` (seconds, numbers
            or text) are read as search and total latency.
    """
    latencies = detect_latency_fields(records or [])
    return replace(FIELDS, judge_score=judge_field, **latencies)


def _build(candidate: Candidate) -> Layout:
    return Layout(
        "mem0",
        candidate.records,
        candidate.records_key,
        field_map(candidate.judge_key, candidate.sample),
        judge_field=judge_field_name(candidate.sample, candidate.judge_key),
    )


LAYOUT = LayoutSpec(
    name="mem0",
    scope="records",
    looks_for="a Mem0 dict of lists with 'response'",
    matches=lambda candidate: matches(candidate.sample),
    build=_build,
    own_f1="mem0",  # the harness's f1_score and the Mem0 paper's F1 (docs/field_notes.md §2)
    own_judge=(  # docs/field_notes.md §2 and §11; the shared data README (memobase)
        "llm_score",
        "gpt-4o-mini, binary CORRECT/WRONG at temperature 0, per the Mem0 evaluation harness "
        "(mem0ai/mem0 evaluation/, the Mem0 paper)",
    ),
)
"""The ``mem0`` layout."""
