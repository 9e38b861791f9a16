"""One question of a run, benchmark-neutral: what MLflow's traces and ``questions.html`` show.

Each benchmark maps its own ``scores.jsonl`` rows to :class:`QuestionRow` (LoCoMo in
``report/question_rows.py``, the plug-in benchmarks in their own packages); the
tracking layer logs them as traces (``tracking/questions.py``) and the report renders them
(``report/questions_html.py``) without knowing which benchmark wrote them.

A verdict is pass/fail with the judge's reason and source; scores stay in their own scale
(:attr:`Verdict.score` is 0-100, as the judge's); lexical metrics are 0-1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

ACCEPT_SCORE = 50.0
"""A judge score (0-100) at or above which a verdict counts as correct (the protocols'
default ``accept_threshold``, ``judge/protocols/base.py``)."""

Flip = Literal["gained", "lost"]


@dataclass(frozen=True)
class Verdict:
    """One judge verdict on one question.

    Attributes:
        name: the assessment name (``judge``, ``judge_run_2``, ``stored_j``...).
        passed: correct (``True``), wrong (``False``) or unscored (``None``: parse failure,
            API error; :attr:`reason` says why).
        score: the judge's score, 0-100, or ``None`` when unscored.
        reason: the judge's explanation, or why the verdict is missing.
        source: who gave it: the judge model id, or ``input file`` for a stored verdict.
    """

    name: str
    passed: bool | None
    score: float | None = None
    reason: str = ""
    source: str = ""


@dataclass(frozen=True)
class QuestionRow:
    """One question of a run, as logged and rendered.

    Attributes:
        question_id: the benchmark's question id (unique within the run).
        question: the question text.
        kind: the question's category or type name (a LoCoMo category, a benchmark's type).
        prediction: the system's answer.
        gold: the ground-truth answer (logged as a trace tag, never an expectation: MLflow's
            evaluations header breaks past 1,000 distinct expectation values).
        metrics: numeric per-question metrics (F1, BLEU-1: 0-1; ``j_mean``: 0-1).
        verdicts: every judge verdict, the headline one first.
        tags: extra labels (``control=...`` for an audit control row).
    """

    question_id: str
    question: str
    kind: str
    prediction: str
    gold: str
    metrics: Mapping[str, float] = field(default_factory=dict)
    verdicts: Sequence[Verdict] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def headline(self) -> Verdict | None:
        """The verdict compares read (the first one), or ``None`` when there is none."""
        return self.verdicts[0] if self.verdicts else None


def verdict_from_score(
    name: str, score: float | None, reason: str = "", source: str = ""
) -> Verdict:
    """A :class:`Verdict` from a 0-100 score (``None``: unscored).

    Args:
        name: the assessment name.
        score: 0-100; ``score >= ACCEPT_SCORE`` passes.
        reason: the judge's explanation.
        source: the judge model or ``input file``.

    Returns:
        The verdict.
    """
    passed = None if score is None else score >= ACCEPT_SCORE
    return Verdict(name=name, passed=passed, score=score, reason=reason, source=source)


def flips(pairs: Iterable[tuple[QuestionRow, QuestionRow]]) -> list[tuple[str, str, Flip]]:
    """Matched questions whose headline verdict differs between runs A and B.

    ``gained``: wrong in A, correct in B; ``lost``: the reverse (B's direction; in A's own
    view the word is the other one). A question unscored in either run is not a flip, so
    the counts equal the discordant pairs of McNemar's table on the questions both runs
    scored (``compare.json``, ``test.discordant``).

    Args:
        pairs: ``(row in A, row in B)`` of each shared question (the compare's matching).

    Returns:
        ``(question id in A, question id in B, direction)`` of each flip, in pair order.
    """
    out: list[tuple[str, str, Flip]] = []
    for a, b in pairs:
        old, new = a.headline, b.headline
        if old is None or new is None or old.passed is None or new.passed is None:
            continue
        if old.passed != new.passed:
            out.append((a.question_id, b.question_id, "gained" if new.passed else "lost"))
    return out


def score_flips(pairs: Iterable[tuple[QuestionRow, QuestionRow]]
                ) -> list[tuple[str, str, Flip]]:
    """Matched questions whose headline *score* differs, for rows without a verdict.

    A benchmark whose question score is partial (a rubric score, 0-1) gives no
    pass/fail verdict; its "flips" are the questions whose headline metric (the row's first
    metric) differs between the runs: ``gained`` when B's is higher,
    ``lost`` when lower. These are the non-zero paired differences the sign-flip test of
    the comparison uses (a zero difference carries no sign). A question without that
    metric in either run is not counted.

    Args:
        pairs: ``(row in A, row in B)`` of each shared question.

    Returns:
        ``(question id in A, question id in B, direction)`` of each change, in pair order.
    """
    out: list[tuple[str, str, Flip]] = []
    for a, b in pairs:
        key = next(iter(a.metrics), None)
        if key is None or key not in b.metrics:
            continue
        old, new = a.metrics[key], b.metrics[key]
        if old != new:
            out.append((a.question_id, b.question_id, "gained" if new > old else "lost"))
    return out


def verdict_or_score_flips(pairs: Sequence[tuple[QuestionRow, QuestionRow]]
                           ) -> list[tuple[str, str, Flip]]:
    """:func:`flips` on the headline verdicts, or :func:`score_flips` when no row has one.

    Args:
        pairs: ``(row in A, row in B)`` of each shared question.

    Returns:
        As :func:`flips`.
    """
    if any(a.verdicts or b.verdicts for a, b in pairs):
        return flips(pairs)
    return score_flips(pairs)


def reverse(direction: Flip) -> Flip:
    """The same flip seen from the other run (``gained`` <-> ``lost``)."""
    return "lost" if direction == "gained" else "gained"


__all__ = [
    "ACCEPT_SCORE", "Flip", "QuestionRow", "Verdict", "flips", "reverse", "score_flips",
    "verdict_from_score", "verdict_or_score_flips",
]
