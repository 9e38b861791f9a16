"""Which LoCoMo question set a file answers: 1,540, 1,542, 1,986 or a custom set.

Harnesses differ (docs/field_notes.md §8): the Mem0 paper's set is the 1,540 questions of
categories 1-4; harnesses that keep every item with an ``answer`` field have 1,542 (two
category-5 items of ``locomo10.json`` carry one); LoCoMo's own scripts answer all 1,986.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from locomo_exp.benchmark.locomo import LOCOMO10_CATEGORY_SIZES, question_set_name
from locomo_exp.results import QARecord
from locomo_exp.results.words import counted

SET_1540 = "1540"
SET_1542 = "1542"
SET_1986 = "1986"
CUSTOM = "custom"

@dataclass(frozen=True)
class QuestionSet:
    """The question set of a loaded file.

    Attributes:
        name: ``"1540"`` (categories 1-4), ``"1542"`` (1-4 plus two category-5 questions
            that carry an ``answer``), ``"1986"`` (all) or ``"custom"``.
        n_questions: questions loaded.
        per_category: questions per category id.
        extra: for ``"1542"``, the two category-5 questions as ``"<id>: <question>"``.
    """

    name: str
    n_questions: int
    per_category: dict[int, int] = field(default_factory=dict)
    extra: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for the report header, e.g. ``1,542 questions (categories 1-4 + 2 ...)``."""
        if self.name == SET_1540:
            return "1,540 questions: LoCoMo-10 categories 1-4 (the Mem0 paper's set)"
        if self.name == SET_1986:
            return "1,986 questions: all of LoCoMo-10 (categories 1-5)"
        if self.name == SET_1542:
            return (
                "1,542 questions: categories 1-4 plus 2 category-5 questions that carry an "
                "`answer` (" + "; ".join(self.extra) + ")"
            )
        return (
            f"custom: {counted(self.n_questions, 'question', thousands=True)} "
            "(not one of LoCoMo-10's 1,540 / 1,542 / 1,986)"
        )


def detect_question_set(records: list[QARecord]) -> QuestionSet:
    """Name the question set of ``records`` from their category counts.

    Args:
        records: the loaded records.

    Returns:
        :class:`QuestionSet`. 1,540: exactly LoCoMo-10's category 1-4 counts
        (282/321/96/841) and no category 5; 1,542: those plus exactly 2 category-5
        questions; 1,986: every category at its LoCoMo-10 count; otherwise ``custom``.
    """
    counts = Counter(r.category for r in records)
    per_category = {c: counts.get(c, 0) for c in sorted(LOCOMO10_CATEGORY_SIZES)}
    n = len(records)
    name = question_set_name(per_category) or CUSTOM
    extra: tuple[str, ...] = ()
    if name == SET_1542:
        extra = tuple(f"{r.question_id}: {r.question}" for r in records if r.category == 5)
    return QuestionSet(name, n, per_category, extra)
