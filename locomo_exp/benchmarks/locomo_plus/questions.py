"""LoCoMo-Plus's ``scores.jsonl`` rows as benchmark-neutral question rows (traces, html).

Fields read (``summary.py:score_rows`` and ``judged.py:judged_score_rows``): ``item_id``,
``category`` (the kind), ``relation`` (a tag), ``question``, ``prediction``, ``score`` (1,
0.5, 0 or ``None``: this project's reading) and ``score_authors`` (the authors' reading),
``stored_label`` or ``judge_labels`` with ``judge_replies``/``judge_errors``. LoCoMo-Plus has
no gold answer in its rows (the judge reads the cue): ``gold`` is empty.

The pipeline calls it through its steps' ``question_rows`` hook
(:mod:`locomo_exp.benchmarks.pipeline`): the rows make ``questions.html`` and, with
``tracking.questions=true``, the MLflow traces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from locomo_exp.results.questions import QuestionRow, Verdict


def plus_question_rows(
    rows: Iterable[Mapping[str, Any]], judge_model: str | None = None
) -> list[QuestionRow]:
    """LoCoMo-Plus's ``scores.jsonl`` rows as question rows.

    Args:
        rows: stored-verdict or judged rows.
        judge_model: the judge model when this project's judge ran (each run's source).

    Returns:
        One row per item: metrics ``score``/``score_authors`` (0-1) and, with ``scorer=both``,
        ``f1_<variant>`` (0-1; none on a Cognitive item); the headline verdict
        ``judge`` passes at ``score >= 0.5`` (unscored when ``score`` is ``None``), its
        reason the stored label or each judge run's label and error.
    """
    out = []
    for row in rows:
        score = row.get("score")
        labels = [str(label) for label in row.get("judge_labels") or []]
        errors = [str(e) for e in row.get("judge_errors") or [] if e]
        reason = "; ".join([*(f"run {k}: {lab}" for k, lab in enumerate(labels, 1)), *errors])
        if row.get("stored_label") is not None:
            reason = f"stored label: {row['stored_label']}"
        verdicts = [Verdict("judge", None if score is None else float(score) >= 0.5,
                            None if score is None else 100.0 * float(score), reason,
                            judge_model or "input file")]
        metrics = {key: float(value) for key, value in row.items()
                   if (key in ("score", "score_authors") or key.startswith("f1_"))
                   and isinstance(value, (int, float)) and not isinstance(value, bool)}
        out.append(
            QuestionRow(
                question_id=str(row["item_id"]),
                question=str(row.get("question") or ""),
                kind=str(row.get("category") or ""),
                prediction=str(row.get("prediction") or ""),
                gold="",
                metrics=metrics,
                verdicts=tuple(verdicts),
                tags={"relation": str(row.get("relation") or "")},
            )
        )
    return out


__all__ = ["plus_question_rows"]
