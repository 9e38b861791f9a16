"""BEAM's ``scores.jsonl`` rows as benchmark-neutral question rows (MLflow traces, html).

BEAM's rows carry ids, the ability and the scores, not the question's or the answer's text
(those stay in the answer file): question and prediction are empty, the kind is the ability.
Metrics (0-1): each profile's score (``nugget``, ``official``), ``stored_score`` and
``order_tau_norm`` where present. There is no pass/fail verdict: a rubric score is partial.

The pipeline calls it through its steps' ``question_rows`` hook
(:mod:`locomo_exp.benchmarks.pipeline`): the rows make ``questions.html`` and, with
``tracking.questions=true``, the MLflow traces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.results.questions import QuestionRow

METRIC_KEYS = (p.NUGGET, p.OFFICIAL, "stored_score", "order_tau_norm")


def _number(value: Any) -> Any:
    """A row's score: a profile's cell is ``{"score": ..., ...}``; the others are numbers."""
    if isinstance(value, Mapping):
        value = value.get("score")
    return None if value is None else float(value)


def beam_question_rows(rows: Iterable[Mapping[str, Any]]) -> list[QuestionRow]:
    """BEAM's ``scores.jsonl`` rows (``benchmarks/beam/summary.py:score_rows``) as question rows.

    Args:
        rows: the rows.

    Returns:
        One row per question; tags ``chat``, ``difficulty``, ``judge_failed`` when true.
    """
    out = []
    for row in rows:
        tags = {"chat": str(row.get("chat", "")), "difficulty": str(row.get("difficulty", ""))}
        if row.get("judge_failed"):
            tags["judge_failed"] = "true"
        out.append(
            QuestionRow(
                question_id=str(row["question_id"]),
                question="",
                kind=str(row.get("ability") or ""),
                prediction="",
                gold="",
                metrics={k: v for k in METRIC_KEYS if (v := _number(row.get(k))) is not None},
                tags=tags,
            )
        )
    return out


__all__ = ["beam_question_rows"]
