"""LoCoMo's facts: category ids, names and sizes, the overall groups.

Categories are keyed by LoCoMo's numeric id everywhere (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial; fixed by the counts 282/321/96/841/446 in
``locomo10.json`` and by the official scorer's per-category rules). Names are display
labels that come from config, because published tables attach them differently
(docs/field_notes.md §3).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

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


QUESTION_SETS: dict[str, int] = {"1540": 0, "1542": 2, "1986": LOCOMO10_CATEGORY_SIZES[5]}
"""The named question sets: categories 1-4 complete plus this many category-5 questions.

1,540 is the Mem0 paper's set; 1,542 adds the two category-5 items of ``locomo10.json`` that
carry an ``answer``; 1,986 is all of LoCoMo-10 (docs/field_notes.md §8)."""


def question_set_name(per_category: Mapping[int, int]) -> str | None:
    """The one question-set classifier: which named set a file's category counts are.

    Args:
        per_category: questions per category id.

    Returns:
        ``"1540"``, ``"1542"`` or ``"1986"`` (:data:`QUESTION_SETS`), or ``None`` for any
        other set (categories 1-4 incomplete, or another category-5 count).
    """
    if any(int(per_category.get(c) or 0) != LOCOMO10_CATEGORY_SIZES[c] for c in (1, 2, 3, 4)):
        return None
    n5 = int(per_category.get(5) or 0)
    return next((name for name, extra in QUESTION_SETS.items() if n5 == extra), None)


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


_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_question(text: Any) -> str:
    """Question text for matching: NFKC, lower case, punctuation and spacing dropped.

    Args:
        text: the question (non-strings are converted with ``str``).

    Returns:
        Lower-case words joined by single spaces (``"When did X go?"`` -> ``"when did x go"``).
    """
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    return _NON_WORD.sub(" ", folded).strip()
