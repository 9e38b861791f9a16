"""LoCoMo's ``scores.jsonl`` rows as benchmark-neutral question rows, and its ``questions.html``.

:class:`~locomo_exp.results.questions.QuestionRow` is the benchmark-neutral row.

The fields read are those :func:`locomo_exp.report.outputs.score_rows` writes: ``f1`` (the
reported variant, 0-1), ``bleu1`` (0-1), ``j_mean`` and ``j_runs`` (0-100, with each run's
``explanation``, ``outcome`` and ``error``) and ``stored_judge_score`` (0-100, the input
file's own verdict).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from locomo_exp.report.questions_html import write_run_questions
from locomo_exp.results.questions import QuestionRow, Verdict, verdict_from_score

LEXICAL_KEYS = ("f1", "bleu1")
"""The per-question lexical metrics logged (0-1): the reported F1 variant and BLEU-1."""

STORED_SOURCE = "input file"


def judge_verdicts(row: Mapping[str, Any], judge_model: str) -> list[Verdict]:
    """The judge's verdicts of one ``scores.jsonl`` row (any benchmark using ``j_runs``).

    One run: ``judge`` with that run's reason. Several runs: ``judge`` from the mean score
    (its reason names the runs' scores), then ``judge_run_<k>`` for each run with its reason.
    A run without a score (parse failure, API error) is unscored with its error as reason.

    Args:
        row: a row with ``j_runs`` (list of ``{run, score, explanation, outcome, error}``)
            and ``j_mean`` (0-100).
        judge_model: the judge model id (each verdict's source).

    Returns:
        The verdicts, the headline ``judge`` first; ``[]`` when the row was not judged.
    """
    runs = row.get("j_runs") or []
    if not runs:
        return []
    per_run = [
        verdict_from_score(
            f"judge_run_{run.get('run', index + 1)}",
            run.get("score"),
            str(run.get("explanation") or run.get("error") or run.get("outcome") or ""),
            judge_model,
        )
        for index, run in enumerate(runs)
    ]
    if len(per_run) == 1:
        only = per_run[0]
        return [Verdict("judge", only.passed, only.score, only.reason, only.source)]
    scores = ", ".join("-" if v.score is None else f"{v.score:g}" for v in per_run)
    mean = row.get("j_mean")
    head = verdict_from_score(
        "judge", mean, f"mean of {len(per_run)} runs ({scores}); {per_run[0].reason}", judge_model
    )
    return [head, *per_run]


def locomo_question_rows(
    rows: Iterable[Mapping[str, Any]], judge_model: str | None
) -> list[QuestionRow]:
    """LoCoMo's ``scores.jsonl`` rows as question rows.

    Args:
        rows: the rows :func:`locomo_exp.report.outputs.score_rows` returns.
        judge_model: the judge model id when the judge ran, else ``None``.

    Returns:
        One row per question: metrics ``f1``/``bleu1`` (0-1) and ``j_mean`` (0-1) with
        several judge runs; verdicts from the judge (first) and ``stored_j`` from the
        input file's own judge (``stored_judge_score`` >= 50 passes).
    """
    out = []
    for row in rows:
        metrics = {key: float(row[key]) for key in LEXICAL_KEYS if row.get(key) is not None}
        verdicts = judge_verdicts(row, judge_model) if judge_model else []
        if len(row.get("j_runs") or []) > 1 and row.get("j_mean") is not None:
            metrics["j_mean"] = float(row["j_mean"]) / 100.0
        stored = row.get("stored_judge_score")
        if stored is not None:
            verdicts.append(verdict_from_score("stored_j", float(stored), "", STORED_SOURCE))
        out.append(
            QuestionRow(
                question_id=str(row["question_id"]),
                question=str(row.get("question") or ""),
                kind=str(row.get("category_name") or row.get("category") or ""),
                prediction=str(row.get("prediction") or ""),
                gold=str(row.get("ground_truth") or ""),
                metrics=metrics,
                verdicts=tuple(verdicts),
            )
        )
    return out


def write_locomo_questions(
    directory: Path,
    title: str,
    rows: Iterable[Mapping[str, Any]],
    files: list[Path],
    judge_model: str | None,
) -> list[QuestionRow]:
    """Write a LoCoMo run's ``questions.html`` and add it to ``files``; returns the rows.

    Args:
        directory: the run's output directory.
        title: the page title.
        rows: the ``scores.jsonl`` rows.
        files: the run's output files (appended to: they are logged as artifacts).
        judge_model: the judge model when the judge ran, else ``None``.

    Returns:
        The question rows (:func:`locomo_question_rows`), for MLflow's traces.

    Raises:
        OSError: the page cannot be written.
    """
    questions = locomo_question_rows(rows, judge_model)
    path, _ = write_run_questions(directory, title, questions)
    files.append(path)
    return questions


__all__ = ["LEXICAL_KEYS", "judge_verdicts", "locomo_question_rows", "write_locomo_questions"]
