"""The two BEAM scoring profiles, rule by rule: ``beam-nugget`` (mem0) and ``beam-official``.

``beam-nugget`` is mem0ai/memory-benchmarks ``benchmarks/beam/run.py``: each rubric item's
verdict clamped to 0 / 0.5 / 1, question score = mean of its items rounded to 4 decimals,
PASS when it is at least 0.5, per ability and overall: pass rate and average score.

``beam-official`` is what BEAM's own ``src/evaluation/compute_metrics.py`` and
``report_results.py`` (@ b2a3ee8) do: an item verdict passed through ``int()`` in the nine
abilities other than event ordering (0.5 counts 0), question score = mean of its items,
event ordering = normalised Kendall tau-b of the answer's lines aligned to the rubric items,
ability figure = mean over chats of the per-chat mean, and no overall figure.

Every function here is pure; docs/beam.md cites the source of each rule.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from statistics import fmean

NUGGET = "beam-nugget"
"""mem0's memory-benchmarks profile (every published per-question file uses it)."""

OFFICIAL = "beam-official"
"""The BEAM authors' profile (compute_metrics.py / report_results.py)."""

PROFILE_VERSIONS: dict[str, str] = {NUGGET: "1", OFFICIAL: "1"}
"""Version of each profile's semantics, written into every output."""

PASS_AT = 0.5
"""beam-nugget: a question passes when its (rounded) score is at least this."""

NUGGET_DECIMALS = 4
"""beam-nugget: question scores are rounded to this many decimals before anything else."""


def clamp_item(score: float) -> float:
    """beam-nugget's item verdict: >= 0.75 -> 1, >= 0.25 -> 0.5, else 0 (mem0's clamp)."""
    if score >= 0.75:
        return 1.0
    if score >= 0.25:
        return 0.5
    return 0.0


def nugget_question_score(items: Sequence[float] | None) -> float:
    """beam-nugget's question score: the mean of the clamped items, rounded to 4 decimals.

    Args:
        items: the item verdicts (0-1), or ``None`` / empty for a question whose judging
            failed, which mem0 scores 0.

    Returns:
        The score, 0-1, rounded with Python's ``round`` (half to even, as mem0's code).
    """
    if not items:
        return 0.0
    return round(fmean(clamp_item(s) for s in items), NUGGET_DECIMALS)


def nugget_passes(score: float) -> bool:
    """beam-nugget's PASS: a question score of at least :data:`PASS_AT`."""
    return score >= PASS_AT


def official_item(score: float) -> int:
    """beam-official's item verdict outside event ordering: ``int(score)``, so 0.5 counts 0.

    The authors' nine rubric evaluators pass the judge's score through ``int()``
    (compute_metrics.py), which truncates toward zero.
    """
    return int(score)


def official_question_score(items: Sequence[float] | None) -> float | None:
    """beam-official's question score outside event ordering: the mean of ``int(item)``.

    Returns:
        0-1, or ``None`` when there are no item verdicts (unscored, never a number).
    """
    if not items:
        return None
    return fmean(official_item(s) for s in items)


def official_ability_score(chat_scores: Sequence[tuple[str, float | None]]) -> float | None:
    """beam-official's ability figure: the mean over chats of each chat's mean question score.

    Args:
        chat_scores: ``(chat, question score)`` pairs of one ability; ``None`` scores left out.

    Returns:
        The unweighted mean of the per-chat means (report_results.py), or ``None``.
    """
    chat_means = per_chat_means(chat_scores)
    return fmean(chat_means.values()) if chat_means else None


def per_chat_means(chat_scores: Sequence[tuple[str, float | None]]) -> dict[str, float]:
    """Each chat's mean of its scored questions, in first-seen order of the chats."""
    by_chat: dict[str, list[float]] = defaultdict(list)
    for chat, score in chat_scores:
        if score is not None:
            by_chat[chat].append(score)
    return {chat: fmean(values) for chat, values in by_chat.items()}


def rank_vectors(n_items: int, matches: Sequence[int | None]) -> tuple[list[int], list[int]]:
    """The two rank vectors of the authors' event-ordering score.

    The reference is the rubric items in order; the system is the answer's lines in order,
    each line labelled by the rubric item it was aligned to (``None``: no item, the line is
    an element of its own). Over the union of both lists, an element's rank in a list is
    its 1-based position there; an element missing from a list is tied at
    ``len(union) + 1`` in it (compute_metrics.py).

    Args:
        n_items: rubric items.
        matches: for each line of the answer, the index of its item, or ``None``.

    Returns:
        ``(reference ranks, system ranks)``, one entry per element of the union (items
        first, then unaligned lines).

    Raises:
        ValueError: an item index out of range or used twice (alignment uses each item once).
    """
    used = [m for m in matches if m is not None]
    if any(not 0 <= m < n_items for m in used) or len(set(used)) != len(used):
        raise ValueError(f"alignment {list(matches)} is not a one-to-one map into {n_items} items")
    system = [("item", m) if m is not None else ("line", j) for j, m in enumerate(matches)]
    union = [("item", i) for i in range(n_items)] + [e for e in system if e[0] == "line"]
    missing = len(union) + 1
    sys_pos = {element: j + 1 for j, element in enumerate(system)}
    ref = [i + 1 if kind == "item" else missing for kind, i in union]
    sys = [sys_pos.get(element, missing) for element in union]
    return ref, sys


def tau_norm(n_items: int, matches: Sequence[int | None]) -> float | None:
    """beam-official's event-ordering score: ``(tau_b + 1) / 2`` over the aligned lines.

    Kendall's tau-b (scipy.stats.kendalltau, ``variant="b"``) of :func:`rank_vectors`, mapped
    from [-1, 1] to [0, 1]. The authors report this, not ``tau_norm x F1`` and not a rubric
    mean (compute_metrics.py).

    Args:
        n_items: rubric items.
        matches: for each line of the answer, the index of its aligned item, or ``None``.

    Returns:
        0-1, or ``None`` when tau-b is undefined (one rank vector constant, e.g. no item
        matched and one line).
    """
    from scipy.stats import kendalltau

    ref, sys = rank_vectors(n_items, matches)
    if len(ref) < 2:
        return None
    tau = float(kendalltau(ref, sys, variant="b").statistic)
    return None if math.isnan(tau) else (tau + 1.0) / 2.0


def answer_lines(answer: str) -> list[str]:
    """The answer split into its non-empty lines, as the authors' event-ordering step does."""
    return [line.strip() for line in answer.splitlines() if line.strip()]


__all__ = [
    "NUGGET",
    "NUGGET_DECIMALS",
    "OFFICIAL",
    "PASS_AT",
    "PROFILE_VERSIONS",
    "answer_lines",
    "clamp_item",
    "nugget_passes",
    "nugget_question_score",
    "official_ability_score",
    "official_item",
    "official_question_score",
    "per_chat_means",
    "rank_vectors",
    "tau_norm",
]
