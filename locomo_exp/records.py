"""The record every scorer works on: one answered LoCoMo question.

Categories are keyed by LoCoMo's numeric id everywhere (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial; fixed by the counts 282/321/96/841/446 in
``locomo10.json`` and by the official scorer's per-category rules). Names are display
labels that come from config, because published tables attach them differently
(docs/field_notes.md §3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CATEGORY_IDS: tuple[int, ...] = (1, 2, 3, 4, 5)
"""LoCoMo's category ids."""

DEFAULT_CATEGORY_NAMES: dict[int, str] = {
    1: "multi_hop",
    2: "temporal",
    3: "open_domain",
    4: "single_hop",
    5: "adversarial",
}
"""Default display names, keyed by LoCoMo category id."""

LOCOMO10_CATEGORY_SIZES: dict[int, int] = {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
"""Questions per category in ``locomo10.json`` (snap-research/LoCoMo)."""

OVERALL_GROUPS: dict[str, tuple[int, ...]] = {"overall_1_4": (1, 2, 3, 4), "overall": CATEGORY_IDS}
"""Overall aggregates and the categories each covers: 1-4 (the Mem0 paper's set) and all."""

CATEGORY_GROUPS: dict[str, tuple[int, ...]] = {str(c): (c,) for c in CATEGORY_IDS} | OVERALL_GROUPS
"""Every aggregate key (``"1"``..``"5"``, ``overall_1_4``, ``overall``) and its categories."""

FULL_BENCHMARK_QUESTIONS: dict[str, int] = {
    key: sum(LOCOMO10_CATEGORY_SIZES[c] for c in members) for key, members in OVERALL_GROUPS.items()
}
"""Question counts of the full LoCoMo-10 benchmark per overall group (1,540 and 1,986)."""


@dataclass(frozen=True)
class QARecord:
    """One answered LoCoMo question, as read from a results file.

    Attributes:
        question_id: unique id within the file (given, or ``<conversation>:<index>``).
        question: the question text.
        ground_truth: the gold answer as text (JSON ints are turned into ``str(int)`` as
            LoCoMo's scorer does; several golds joined by ``" | "``); ``None`` only for
            records built outside :func:`locomo_exp.data.load_results`, which excludes
            questions without a gold.
        prediction: the system's answer ("" when the file has null).
        category: LoCoMo category id, 1-5.
        conversation_id: the conversation (LoCoMo sample) the question belongs to.
        evidence: dialogue ids supporting the answer (e.g. ``"D1:3"``), when given.
        adversarial_answer: category-5 distractor answer, when given.
        search_latency_s: memory search latency in seconds, when given.
        total_latency_s: end-to-end answer latency in seconds, when given.
        context_tokens: tokens of retrieved memory put in the answer prompt, when given.
        stored_judge_score: a verdict stored in the file by another judge, on 0-100
            (``True``/1 -> 100), when given; not produced by this project's judge. With
            several stored verdicts, their mean.
        stored_judgments: every stored verdict of the question on 0-100, in run order
            (one for a single verdict; ``judgment_1..N`` for several); empty when none.
        position: 0-based index of the record in the file (in reading order).
        references: every gold reference when the file gives a list of golds (scored as the
            best match over them, as SQuAD does); empty means the single ``gold_text``.
        prediction_missing: the file's prediction was ``null``, NaN or infinite (scored 0).
        question_type: another benchmark's kind of question (LongMemEval's
            ``question_type``), ``None`` for LoCoMo; a judge template's ``by_kind`` reads it.
    """

    question_id: str
    question: str
    ground_truth: str | None
    prediction: str
    category: int
    conversation_id: str | None = None
    evidence: tuple[str, ...] = ()
    adversarial_answer: str | None = None
    search_latency_s: float | None = None
    total_latency_s: float | None = None
    context_tokens: int | None = None
    stored_judge_score: float | None = None
    position: int = 0
    references: tuple[str, ...] = ()
    prediction_missing: bool = False
    stored_judgments: tuple[float, ...] = ()
    question_type: str | None = None

    @property
    def gold_references(self) -> tuple[str, ...]:
        """The gold references scored against: ``references``, else ``(gold_text,)``."""
        return self.references or (self.gold_text,)

    @property
    def gold_text(self) -> str:
        """The gold answer as LoCoMo's scorer sees it: ``str(answer)``.

        A null gold is ``""``, never the text ``"None"``: :func:`locomo_exp.data.load_results`
        excludes such questions, and a record built elsewhere with ``None`` scores 0.
        """
        return "" if self.ground_truth is None else str(self.ground_truth)


def overall_group_for(categories: Iterable[int]) -> str | None:
    """The overall key whose categories are exactly ``categories`` (e.g. 1-4 -> ``overall_1_4``)."""
    wanted = tuple(sorted(set(categories)))
    return next((key for key, members in OVERALL_GROUPS.items() if members == wanted), None)


def group_metric_name(key: str, names: dict[int, str] | None = None) -> str:
    """Metric-name fragment of an aggregate key: ``"1" -> cat1_multi_hop``, overall keys as is."""
    return category_slug(int(key), names) if key.isdigit() else key


def category_slug(category: int, names: dict[int, str] | None = None) -> str:
    """Metric-name fragment for a category, e.g. ``cat1_multi_hop``.

    Args:
        category: LoCoMo category id.
        names: display names keyed by id (defaults to :data:`DEFAULT_CATEGORY_NAMES`).

    Returns:
        ``cat<id>_<name>``, safe for MLflow metric names.
    """
    names = names or DEFAULT_CATEGORY_NAMES
    name = names.get(category, "unknown")
    safe = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name.lower())
    return f"cat{category}_{safe}"
