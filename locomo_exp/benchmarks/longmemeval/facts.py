"""LongMemEval's facts: question types, sizes, abstention ids, dataset variants, judge kinds.

LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term Interactive
Memory", ICLR 2025; github.com/xiaowu0162/LongMemEval) has 500 questions of six types
(``question_type``). A question whose ``question_id`` ends in ``_abs`` is an abstention
question: it counts in its own type and, besides, in the abstention accuracy. Its metrics
(``src/evaluation/print_qa_metrics.py``): per-type accuracy, overall accuracy, task-averaged
accuracy (the unweighted mean of the six type accuracies) and abstention accuracy
(docs/field_notes.md §12).

Every list of types, kinds and metric keys of LongMemEval is derived from
:data:`QUESTION_TYPES` here, as the benchmark's own strings: the judge chooses its prompt by
these keys (:mod:`locomo_exp.benchmarks.longmemeval.protocol`), never by a LoCoMo category.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from locomo_exp.benchmark import JudgeCheckLimits

NAME = "longmemeval"
"""The benchmark's name (``benchmark=longmemeval``)."""

QUESTION_TYPES: dict[str, int] = {
    "single-session-user": 70,
    "single-session-assistant": 56,
    "single-session-preference": 30,
    "multi-session": 133,
    "temporal-reasoning": 133,
    "knowledge-update": 78,
}
"""The six ``question_type`` values, in the order the report lists them, and their sizes."""

ABSTENTION_SUFFIX = "_abs"
"""``question_id`` suffix of an abstention question."""

ABSTENTION_QUESTIONS = 30
"""Abstention questions in the benchmark (6 single-session-user, 12 multi-session,
6 temporal-reasoning, 6 knowledge-update)."""

TOTAL_QUESTIONS = sum(QUESTION_TYPES.values())
"""500."""

ABSTENTION_KIND = "abstention"
"""The judge kind of an ``_abs`` question (whatever its type)."""

JUDGE_KINDS: tuple[str, ...] = (*QUESTION_TYPES, ABSTENTION_KIND)
"""Every kind of judge criterion: the six types, then abstention (``by_kind:`` keys)."""


ACCEPT_AT = 50.0
"""A question's mean verdict (0-100; yes = 100, no = 0) at or above which it counts correct."""

REFERENCE_FIELDS: tuple[str, ...] = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
)
"""The question fields read from a dataset file (the haystacks are never kept)."""

HAYSTACK_FIELDS: tuple[str, ...] = (
    "haystack_dates",
    "haystack_session_ids",
    "haystack_sessions",
    "answer_session_ids",
)
"""The other keys of a dataset item (streamed past, except that sessions are counted)."""


def is_abstention(question_id: str) -> bool:
    """Whether a question is an abstention question (its id ends in ``_abs``)."""
    return question_id.endswith(ABSTENTION_SUFFIX)


def judge_kind(question_id: str, question_type: str) -> str:
    """The criterion a question is judged by: ``abstention`` for ``_abs`` ids, else its type."""
    return ABSTENTION_KIND if is_abstention(question_id) else question_type


@dataclass(frozen=True)
class Variant:
    """A dataset file of LongMemEval.

    Attributes:
        name: ``oracle``, ``s``, ``m``, or ``questions only``.
        file: the official file name.
        sessions: typical haystack sessions per question (a range, inclusive).
    """

    name: str
    file: str
    sessions: tuple[float, float]


QUESTIONS_ONLY = "questions only"
"""The variant name of a dataset file whose haystacks are empty (it cannot tell oracle, S, M)."""

VARIANTS: tuple[Variant, ...] = (
    Variant(QUESTIONS_ONLY, "(haystacks empty)", (0.0, 0.0)),
    Variant("oracle", "longmemeval_oracle.json", (0.5, 10.0)),
    Variant("s", "longmemeval_s_cleaned.json", (10.0, 150.0)),
    Variant("m", "longmemeval_m_cleaned.json", (150.0, float("inf"))),
)
"""The dataset variants, told apart by the mean haystack sessions per question: the oracle
file holds only the evidence sessions (1-6), ``_s`` about 50, ``_m`` about 500 (Wu et al.
2025, §3); the shared rebuilt reference has empty haystacks."""


_LABELS = {
    "oracle": "oracle (longmemeval_oracle.json)",
    "s": "S (longmemeval_s_cleaned.json)",
    "m": "M (longmemeval_m_cleaned.json)",
    QUESTIONS_ONLY: "unknown: the dataset file's haystacks are empty, and its question "
    "fields are the same in oracle, S and M",
}


def variant_label(name: str) -> str:
    """A variant in the terms of LongMemEval's README: ``oracle``, ``S`` or ``M`` and its file.

    Args:
        name: a :attr:`Variant.name` (``oracle``, ``s``, ``m``, ``questions only``) or any
            other text (returned as given, ``unknown`` for example).

    Returns:
        ``"oracle (longmemeval_oracle.json)"``, ``"S (longmemeval_s_cleaned.json)"``,
        ``"M (longmemeval_m_cleaned.json)"``, or for ``questions only`` ``"unknown: ..."``
        saying why the file cannot tell.
    """
    return _LABELS.get(name, name)


def same_variant(run: str, published: str) -> str:
    """Whether a run used the dataset variant of a published figure, in words.

    Args:
        run: the run's variant name (:func:`variant_of`).
        published: the published figure's variant name.

    Returns:
        ``"yes"``, ``"no (this run: S)"``, or ``"cannot tell ...: confirm the answers were
        made on oracle (longmemeval_oracle.json)"`` when the run's dataset file does not say
        (empty haystacks, or a session count no variant has).
    """
    if run == published:
        return "yes"
    if run in (QUESTIONS_ONLY, "unknown"):
        return (
            "cannot tell from the dataset file given: confirm the answers were made on "
            f"{variant_label(published)}"
        )
    return f"no (this run: {variant_label(run).split(' (')[0]})"


def variant_of(mean_sessions: float) -> str:
    """The dataset variant whose session range holds ``mean_sessions``.

    Args:
        mean_sessions: mean number of haystack sessions per question in the file.

    Returns:
        A :attr:`Variant.name`, or ``unknown`` when no range holds it.
    """
    for variant in VARIANTS:
        low, high = variant.sessions
        if low <= mean_sessions <= high:
            return variant.name
    return "unknown"


def type_counts_text(counts: Mapping[str, int]) -> str:
    """``"single-session-user 70, ..."`` in :data:`QUESTION_TYPES` order (for messages)."""
    return ", ".join(f"{name} {counts.get(name, 0)}" for name in QUESTION_TYPES)


JUDGE_CHECKS = JudgeCheckLimits()
"""When the judge's verdicts on known answers make the accuracy suspect (LoCoMo's limits)."""
