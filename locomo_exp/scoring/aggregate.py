"""Per-category aggregation of per-question scores.

Categories are LoCoMo ids. ``overall`` is the mean over questions (not over categories),
as LoCoMo's and Mem0's aggregations do; it is reported over categories 1-4
(``overall_1_4``, the set the Mem0 paper's tables use) and over all five (``overall``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from locomo_exp.records import CATEGORY_GROUPS
from locomo_exp.results import GroupStats


def summarize(values: Iterable[float | None]) -> GroupStats:
    """Mean, count, min and max of finite values (NaN/inf are ignored, never averaged).

    Args:
        values: per-question scores.

    Returns:
        A :class:`~locomo_exp.results.GroupStats`; ``mean``/``min``/``max`` are ``None``
        for no values.
    """
    kept = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not kept:
        return GroupStats(mean=None, count=0, min=None, max=None)
    return GroupStats(mean=sum(kept) / len(kept), count=len(kept), min=min(kept), max=max(kept))


def aggregate_by_category(
    values: Iterable[float | None], categories: Iterable[int]
) -> dict[str, GroupStats]:
    """Aggregate per-question scores per LoCoMo category and overall.

    Args:
        values: per-question scores (any unit; 0-1 for F1); ``None``/NaN are ignored.
        categories: the category id of each value, same length and order.

    Returns:
        ``{"1": GroupStats, ..., "5": Aggregate, "overall_1_4": ..., "overall": ...}``;
        every category id 1-5 is present (count 0 when it has no questions).

    Raises:
        ValueError: if the two sequences differ in length.
    """
    values = list(values)
    categories = list(categories)
    if len(values) != len(categories):
        raise ValueError(f"{len(values)} values but {len(categories)} categories")
    return {
        key: summarize(v for v, c in zip(values, categories, strict=True) if c in members)
        for key, members in CATEGORY_GROUPS.items()
    }
