"""LongMemEval's ``scores.jsonl`` rows as benchmark-neutral question rows (MLflow traces, html).

Fields read: ``question_id``, ``question_type`` (the kind; ``_abs`` questions keep their
type and get the tag ``abstention=true``), ``question``, ``answer`` (gold), ``hypothesis``
(the prediction), this project's judge runs (``j_runs``, ``j_mean`` 0-100) and the answer
file's own verdict (``stored_label``, ``stored_label_model``). LongMemEval has no lexical
metric, so a row's metrics are only ``j_mean`` (0-1) when the judge ran several times.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from locomo_exp.report.question_rows import judge_verdicts
from locomo_exp.results.questions import QuestionRow, Verdict


def lme_question_rows(
    rows: Iterable[Mapping[str, Any]], judge_model: str | None
) -> list[QuestionRow]:
    """LongMemEval's ``scores.jsonl`` rows as question rows.

    Args:
        rows: the rows ``benchmarks/longmemeval/summary.py:score_rows`` returns.
        judge_model: the judge model id when this project's judge ran, else ``None``.

    Returns:
        One row per question: verdicts from the judge (first) and ``stored_j`` from the
        answer file's ``autoeval_label`` (source: its model).
    """
    out = []
    for row in rows:
        verdicts = judge_verdicts(row, judge_model) if judge_model else []
        metrics: dict[str, float] = {}
        if len(row.get("j_runs") or []) > 1 and row.get("j_mean") is not None:
            metrics["j_mean"] = float(row["j_mean"]) / 100.0
        label = row.get("stored_label")
        if label is not None:
            verdicts.append(Verdict("stored_j", bool(label), 100.0 if label else 0.0, "",
                                    str(row.get("stored_label_model") or "input file")))
        out.append(
            QuestionRow(
                question_id=str(row["question_id"]),
                question=str(row.get("question") or ""),
                kind=str(row.get("question_type") or ""),
                prediction=str(row.get("hypothesis") or ""),
                gold=str(row.get("answer") or ""),
                metrics=metrics,
                verdicts=tuple(verdicts),
                tags={"abstention": "true"} if row.get("abstention") else {},
            )
        )
    return out


__all__ = ["lme_question_rows"]
