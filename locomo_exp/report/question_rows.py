"""LoCoMo's ``scores.jsonl`` rows as benchmark-neutral question rows, and its ``questions.html``.

:class:`~locomo_exp.results.questions.QuestionRow` is the benchmark-neutral row.

The fields read are those :func:`locomo_exp.report.locomo_run.score_rows` writes: ``f1`` (the
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
        rows: the rows :func:`locomo_exp.report.locomo_run.score_rows` returns.
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


CONTROL_TAG = "audit.control"
"""The trace tag (and ``questions.html`` column) of an audit control row: its kind."""
CONTROL_PREFIX = "audit:"
"""How a control's id starts (``audit:<kind>:<source question id>``, ``trust/controls.py``)."""


def _control_reason(kind: str, expected: bool, passed: bool | None, score: float | None) -> str:
    should = "accepts" if expected else "rejects"
    if passed is None:
        return f"audit control ({kind}): a correct judge {should} it; no verdict"
    did = "accepted" if passed else "rejected"
    outcome = ("right" if passed == expected
               else "a false accept" if passed else "a false reject")
    return (f"audit control ({kind}): a correct judge {should} it; the judge {did} it "
            f"({score:g}): {outcome}")


def audit_control_rows(
    audit: Mapping[str, Any] | None, sources: Iterable[QuestionRow], judge_model: str
) -> list[QuestionRow]:
    """The judged audit's controls as question rows of their own (issue 30 §1).

    Each control (never part of J) becomes a row a user can filter to: tags
    ``audit.control=<kind>``, ``audit.expected=accept|reject`` and ``audit.source=<the
    question it was built from>``; the question and gold are its source question's (the
    control's own answer is not kept in ``summary.json``: the kind says what it was); the
    verdict ``judge`` passes when the judge accepted it (mean score at or above the audit's
    threshold, 0-100), its reason says whether that was right, a false accept or a false
    reject; the metric ``audit.error`` is 1 for a wrong verdict, 0 for a right one (absent
    when unscored).

    Args:
        audit: ``summary.json`` -> judge -> trust -> audit
            (:meth:`locomo_exp.results.audit.AuditResult.to_json`: ``verdicts`` control id
            -> mean score 0-100 or ``None``, ``kinds`` -> ``expected_accept`` (or
            ``expected``: 1/0), ``threshold``), or ``None`` (no audit: no rows). A
            control's source is its id's last part (``#...`` of a rubric item cut).
        sources: the run's question rows (a control's source question by id).
        judge_model: the judge model (each verdict's source).

    Returns:
        One row per control in the audit's order; ``[]`` without per-control verdicts.
    """
    if not audit or not audit.get("verdicts"):
        return []
    by_id = {row.question_id: row for row in sources}
    kinds = audit.get("kinds") or {}
    threshold = float(audit.get("threshold", 50.0))
    out = []
    for control_id, score in audit["verdicts"].items():
        kind, _, source_id = str(control_id).removeprefix(CONTROL_PREFIX).partition(":")
        spec = kinds.get(kind) or {}
        expected = bool(spec.get("expected_accept", spec.get("expected")))
        passed = None if score is None else float(score) >= threshold
        source = by_id.get(source_id) or by_id.get(source_id.split("#", 1)[0])
        metrics = {} if passed is None else {"audit.error": float(passed != expected)}
        out.append(QuestionRow(
            question_id=str(control_id),
            question=source.question if source is not None else "",
            kind=f"audit control ({kind})",
            prediction="",
            gold=source.gold if source is not None else "",
            metrics=metrics,
            verdicts=(Verdict("judge", passed, None if score is None else float(score),
                              _control_reason(kind, expected, passed, score), judge_model),),
            tags={CONTROL_TAG: kind, "audit.expected": "accept" if expected else "reject",
                  "audit.source": source_id},
        ))
    return out


def summary_audit(summary: Any) -> Mapping[str, Any] | None:
    """A ``summary.json``'s judged audit: ``judge.trust.audit``, else ``judge.audit``.

    Never raises: a summary without one (or not a mapping) has none.
    """
    judge = summary.get("judge") if isinstance(summary, Mapping) else None
    if not isinstance(judge, Mapping):
        return None
    trust = judge.get("trust")
    audit = trust.get("audit") if isinstance(trust, Mapping) else None
    audit = audit if audit is not None else judge.get("audit")
    return audit if isinstance(audit, Mapping) else None


def write_locomo_questions(
    directory: Path, title: str, questions: list[QuestionRow], files: list[Path]
) -> None:
    """Write a LoCoMo run's ``questions.html`` and add it to ``files``.

    Args:
        directory: the run's output directory.
        title: the page title.
        questions: the run's question rows as built
            (:attr:`locomo_exp.report.locomo_run.LocomoRun.questions`: every question, then
            the judged audit's controls); no file is read.
        files: the run's output files (appended to: they are logged as artifacts).

    Raises:
        OSError: the page cannot be written.
    """
    path, _ = write_run_questions(directory, title, questions)
    files.append(path)


__all__ = [
    "CONTROL_TAG", "LEXICAL_KEYS", "audit_control_rows", "judge_verdicts",
    "locomo_question_rows", "summary_audit", "write_locomo_questions",
]
