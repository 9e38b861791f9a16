"""Published baselines (``conf/baselines/``): mapping their column labels to LoCoMo ids.

Published tables label LoCoMo's categories inconsistently (docs/field_notes.md §3): the Mem0 paper's
"single-hop" column holds category 1, "temporal" 2, "multi-hop" 3 and "open-domain" 4.
Each :class:`~locomo_exp.config.BaselineSet` therefore carries its own
``label_to_category`` and everything here works by category id.
"""

from __future__ import annotations

from collections.abc import Mapping

from locomo_exp.config import BaselineSet, BaselineSystem
from locomo_exp.records import LOCOMO10_CATEGORY_SIZES


def values_by_category(baseline: BaselineSet, system: BaselineSystem) -> dict[int, float]:
    """A system's per-category numbers keyed by LoCoMo category id.

    Args:
        baseline: the set (gives ``label_to_category``).
        system: one of its systems.

    Returns:
        ``{category id: value}`` (same unit as the source, percent for F1 and J).

    Raises:
        KeyError: if a label of the system has no mapping in the set.
    """
    mapped: dict[int, float] = {}
    for label, value in system.categories.items():
        if label not in baseline.label_to_category:
            raise KeyError(
                f"baseline '{baseline.title}', system '{system.name}': column label {label!r} "
                "has no entry in label_to_category (available: "
                f"{', '.join(baseline.label_to_category)})"
            )
        mapped[baseline.label_to_category[label]] = value
    return mapped


def weighted_overall(
    by_category: Mapping[int, float], sizes: Mapping[int, int] = LOCOMO10_CATEGORY_SIZES
) -> float | None:
    """Question-weighted mean of per-category values: sum(v_c * n_c) / sum(n_c).

    This is how the Mem0 paper's overall J is pooled over questions (docs/field_notes.md §2).

    Args:
        by_category: value per category id.
        sizes: questions per category id (default: LoCoMo-10's).

    Returns:
        The weighted mean, or ``None`` for no categories.
    """
    total = sum(sizes[c] for c in by_category)
    if not total:
        return None
    return sum(value * sizes[c] for c, value in by_category.items()) / total


def label_for(baseline: BaselineSet, category: int) -> str | None:
    """The source's own column label for a category id, if the set has one."""
    for label, cid in baseline.label_to_category.items():
        if cid == category:
            return label
    return None
