"""Match the questions of two runs.

Questions are matched by ``question_id`` when the ids of both runs agree with their
question texts; otherwise by conversation + normalised question text. Conversations are
aligned by the questions they share (harnesses name them differently: ``conv-26``,
``0``, ``locomo_experiment_user_0``), so the text match needs no common naming. Repeated
questions in a conversation are matched in order of appearance.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.benchmark.locomo import normalize_question

logger = logging.getLogger(__name__)

def align_conversations(
    questions_a: Mapping[str, Iterable[str]], questions_b: Mapping[str, Iterable[str]]
) -> dict[str, str]:
    """Pair conversations of B with conversations of A by shared questions.

    Greedy one-to-one assignment by decreasing number of shared normalised questions
    (ties: the pair whose ids sort first, and equal ids before others).

    Args:
        questions_a: conversation id of A -> its normalised questions.
        questions_b: conversation id of B -> its normalised questions.

    Returns:
        conversation of B -> conversation of A, for pairs sharing at least one question.
    """
    sets_a = {c: set(q) for c, q in questions_a.items()}
    sets_b = {c: set(q) for c, q in questions_b.items()}
    scored = []
    for cb, qb in sets_b.items():
        for ca, qa in sets_a.items():
            shared = len(qa & qb)
            if shared:
                scored.append((-shared, str(ca) != str(cb), str(cb), str(ca), cb, ca))
    scored.sort()
    mapping: dict[str, str] = {}
    used_a: set[str] = set()
    for *_, cb, ca in scored:
        if cb in mapping or ca in used_a:
            continue
        mapping[cb] = ca
        used_a.add(ca)
    return mapping


@dataclass
class Matching:
    """Which rows of A and B are the same question.

    Attributes:
        pairs: ``(row index in A, row index in B)`` of shared questions, in A's order.
        only_a: row indices of A with no match in B.
        only_b: row indices of B with no match in A.
        matched_by: ``"question_id"`` or ``"conversation+question"``.
        conversation_map: conversation of B -> conversation of A (text matching).
        category_mismatches: shared questions whose categories differ (A's is used).
        gold_mismatches: shared questions whose ground truths differ after
            normalisation (different answer keys).
    """

    pairs: list[tuple[int, int]]
    only_a: list[int]
    only_b: list[int]
    matched_by: str
    conversation_map: dict[str, str] = field(default_factory=dict)
    category_mismatches: int = 0
    gold_mismatches: int = 0

    @property
    def overlap(self) -> float:
        """Shared questions over all distinct questions of both runs (0-1)."""
        total = len(self.pairs) + len(self.only_a) + len(self.only_b)
        return len(self.pairs) / total if total else 0.0

    def counts(self) -> dict[str, Any]:
        """``{"shared", "only_a", "only_b", "overlap", "matched_by", ...}`` for reports."""
        return {
            "shared": len(self.pairs),
            "only_a": len(self.only_a),
            "only_b": len(self.only_b),
            "overlap": self.overlap,
            "matched_by": self.matched_by,
            "category_mismatches": self.category_mismatches,
            "gold_mismatches": self.gold_mismatches,
        }


def _match_by_id(
    rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]]
) -> list[tuple[int, int]] | None:
    ids_a = [r.get("question_id") for r in rows_a]
    ids_b = [r.get("question_id") for r in rows_b]
    if None in ids_a or None in ids_b:
        return None
    index_a = {str(q): i for i, q in enumerate(ids_a)}
    index_b = {str(q): i for i, q in enumerate(ids_b)}
    if len(index_a) != len(ids_a) or len(index_b) != len(ids_b):
        return None
    pairs = [(index_a[q], index_b[q]) for q in index_a if q in index_b]
    if not pairs:
        return None
    for ia, ib in pairs:  # ids that name different questions are positions, not ids
        if normalize_question(rows_a[ia]["question"]) != normalize_question(rows_b[ib]["question"]):
            return None
    return pairs


def _keys(
    rows: Sequence[Mapping[str, Any]], conv_of: Mapping[str, str]
) -> dict[tuple[str, str, int], int]:
    seen: Counter[tuple[str, str]] = Counter()
    keys: dict[tuple[str, str, int], int] = {}
    for i, row in enumerate(rows):
        conv = str(row["conversation_id"])
        base = (conv_of.get(conv, "\x00" + conv), normalize_question(row["question"]))
        keys[(base[0], base[1], seen[base])] = i
        seen[base] += 1
    return keys


def match_questions(
    rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]]
) -> Matching:
    """Match the questions of two runs.

    Args:
        rows_a: ``scores.jsonl`` rows of A (``question_id``, ``conversation_id``,
            ``question``, ``category``, ``ground_truth``).
        rows_b: the same for B.

    Returns:
        :class:`Matching` (possibly with no pairs: the caller refuses disjoint runs).
    """
    pairs = _match_by_id(rows_a, rows_b)
    conv_map: dict[str, str] = {}
    matched_by = "question_id"
    if pairs is None:
        matched_by = "conversation+question"
        by_conv_a: dict[str, list[str]] = defaultdict(list)
        by_conv_b: dict[str, list[str]] = defaultdict(list)
        for row in rows_a:
            by_conv_a[str(row["conversation_id"])].append(normalize_question(row["question"]))
        for row in rows_b:
            by_conv_b[str(row["conversation_id"])].append(normalize_question(row["question"]))
        conv_map = {str(k): str(v) for k, v in align_conversations(by_conv_a, by_conv_b).items()}
        keys_a = _keys(rows_a, {c: c for c in by_conv_a})
        keys_b = _keys(rows_b, conv_map)
        pairs = sorted((ia, keys_b[k]) for k, ia in keys_a.items() if k in keys_b)
    in_a = {ia for ia, _ in pairs}
    in_b = {ib for _, ib in pairs}
    category_mismatches = sum(
        1 for ia, ib in pairs if int(rows_a[ia]["category"]) != int(rows_b[ib]["category"])
    )
    gold_mismatches = sum(
        1
        for ia, ib in pairs
        if normalize_question(rows_a[ia].get("ground_truth"))
        != normalize_question(rows_b[ib].get("ground_truth"))
    )
    return Matching(
        pairs=pairs,
        only_a=[i for i in range(len(rows_a)) if i not in in_a],
        only_b=[i for i in range(len(rows_b)) if i not in in_b],
        matched_by=matched_by,
        conversation_map=conv_map,
        category_mismatches=category_mismatches,
        gold_mismatches=gold_mismatches,
    )


__all__ = ["Matching", "align_conversations", "match_questions", "normalize_question"]
