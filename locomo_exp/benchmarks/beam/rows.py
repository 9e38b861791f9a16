"""The typed rows every BEAM layout is read into: one answered question, and one input file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from locomo_exp.trust.plan import TrustPlan


@dataclass(frozen=True)
class BeamQuestion:
    """One answered probing question.

    Attributes:
        question_id: the id in mem0's scheme, ``<tier>_<k>_q<n>_<ability>`` (``10M_0_q0_
            abstention``); built the same way for the authors' layout.
        chat: the chat the question belongs to (``10M_0``): the cluster of every interval
            and the unit the official profile averages over.
        ability: one of :data:`~locomo_exp.benchmarks.beam.abilities.ABILITIES`.
        position: the question's index in its chat's probing file (0-19).
        question: the question text.
        rubric: the rubric items ("nuggets"), in the file's order.
        answer: the system's answer (``generated_answer`` / ``llm_response``).
        difficulty: ``easy`` / ``moderate`` / ``hard`` where the file says, else ``None``.
        item_scores: the stored verdict of each rubric item (0-1), aligned with ``rubric``;
            ``None`` when the file stores none (a judge must score it).
        judge_failed: the stored run's judging of this question failed (no item verdicts):
            mem0's profile scores it 0, the official profile leaves it unscored.
        stored_score: the question score the file itself stores, if any (checked, never used).
        order_score: beam-official's event-ordering figure (normalised Kendall tau-b) of a
            judged run, or ``None`` (not aligned, or tau-b undefined).
        order_aligned: whether a judged run aligned the answer's lines (``order_score`` is
            then the measured figure, ``None`` meaning tau-b undefined).
    """

    question_id: str
    chat: str
    ability: str
    position: int
    question: str
    rubric: tuple[str, ...]
    answer: str
    difficulty: str | None = None
    item_scores: tuple[float, ...] | None = None
    judge_failed: bool = False
    stored_score: float | None = None
    order_score: float | None = None
    order_aligned: bool = False


@dataclass(frozen=True)
class BeamInput:
    """One BEAM answers file, read and checked.

    Attributes:
        path: the absolute path of the answers file.
        sha256: hex digest of its bytes.
        layout: ``mem0-memory-benchmarks`` or ``beam-authors``.
        setting: the answers' setting (mem0's retrieval cutoff key, ``top_200``), or ``None``.
        questions: the answered questions, in file order.
        stored_judge: the judge model the file records for its stored verdicts, or ``None``.
        system: what the file says produced the answers (project, answerer), for the card.
        reference: the probing-questions file(s) read (authors' layout), else empty.
        other_settings: settings the file also holds that this run did not score.
        verdicts_source: ``stored`` (the file's item verdicts) or ``judge`` (this run's).
        trust_plan: a judged run's labels and panel, planned before any call
            (:func:`locomo_exp.benchmarks.plugin_trust.plan_plugin_trust`), else ``None``.
    """

    path: Path
    sha256: str
    layout: str
    setting: str | None
    questions: tuple[BeamQuestion, ...]
    stored_judge: str | None = None
    system: dict[str, str] = field(default_factory=dict)
    reference: tuple[Path, ...] = ()
    other_settings: tuple[str, ...] = ()
    verdicts_source: str = "stored"
    trust_plan: TrustPlan | None = None

    @property
    def stored(self) -> bool:
        """Whether every question carries stored item verdicts (or a failed judging)."""
        return all(q.item_scores is not None or q.judge_failed for q in self.questions)

    @property
    def n_items(self) -> int:
        """Rubric items over all questions: the judged units of a judged run."""
        return sum(len(q.rubric) for q in self.questions)


__all__ = ["BeamInput", "BeamQuestion"]
