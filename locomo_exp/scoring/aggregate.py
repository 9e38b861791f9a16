"""Per-category aggregation of per-question scores.

Categories are LoCoMo ids. ``overall`` is the mean over questions (not over categories),
as LoCoMo's and Mem0's aggregations do; it is reported over categories 1-4
(``overall_1_4``, the set the Mem0 paper's tables use) and over all five (``overall``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS
from locomo_exp.results import ByCategory, GroupStats
from locomo_exp.scoring.specs import LEXICAL_SPECS, OFFICIAL_SUFFIX


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


def lexical_aggregates(
    lexical: list[dict[str, float]], categories: Iterable[int]
) -> dict[str, ByCategory]:
    """Per-category stats of every lexical metric, plus each official (rounded-first) aggregate.

    A metric whose spec has ``official_rounding`` (``f1_locomo``: 3) is also aggregated the
    way its authors do: LoCoMo's ``evaluate_qa.py`` stores ``round(f1, 3)`` per question
    and ``analyze_aggr_acc`` averages the stored values. That aggregate is
    ``<metric>_official`` and follows its metric in the returned order; the unrounded mean
    stays under ``<metric>``. Three questions each with F1 2/3: ``f1_locomo`` 0.6667,
    ``f1_locomo_official`` 0.667.

    Args:
        lexical: per-question scores from :func:`locomo_exp.scoring.score_lexical` (0-1).
        categories: the category id of each row, same order.

    Returns:
        metric -> category key -> :class:`GroupStats` (0-1); empty for no rows.

    Raises:
        ValueError: if the two sequences differ in length.
    """
    categories = list(categories)
    rounding = {s.metric: s.official_rounding for s in LEXICAL_SPECS if s.official_rounding}
    metrics: dict[str, ByCategory] = {}
    for name in lexical[0] if lexical else ():
        values = [row[name] for row in lexical]
        metrics[name] = aggregate_by_category(values, categories)
        digits = rounding.get(name)
        if digits is not None:
            rounded = [
                round(v, digits) if v is not None and math.isfinite(v) else v for v in values
            ]
            metrics[name + OFFICIAL_SUFFIX] = aggregate_by_category(rounded, categories)
    return metrics
