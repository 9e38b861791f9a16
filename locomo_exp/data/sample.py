"""``data.limit=N``: a stratified sample of a file's questions for cheap trial runs.

The sample keeps each category's share (largest-remainder rounding), draws within each
category with ``numpy.random.default_rng(data.seed)``, and keeps file order. A sampled
run is a subset: the report marks it as not comparable with full-benchmark numbers.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from locomo_exp.results import QARecord


def allocate(counts: dict[int, int], limit: int) -> dict[int, int]:
    """Questions to draw per category: proportional, largest remainder, ties by category id.

    Args:
        counts: questions per category in the file.
        limit: total to draw (``<=`` the sum of ``counts``).

    Returns:
        category -> questions to draw, summing to ``limit``.
    """
    total = sum(counts.values())
    exact = {c: limit * n / total for c, n in counts.items()}
    chosen = {c: int(v) for c, v in exact.items()}
    left = limit - sum(chosen.values())
    by_remainder = sorted(counts, key=lambda c: (-(exact[c] - chosen[c]), c))
    for category in by_remainder[:left]:
        chosen[category] += 1
    return chosen


def _question_key(record: QARecord) -> tuple[str, str, str]:
    return (str(record.conversation_id), record.question, record.question_id)


def stratified_sample(
    records: list[QARecord], limit: int, seed: int = 0
) -> tuple[list[QARecord], dict[str, Any]]:
    """Draw ``limit`` records with each category's share kept.

    Args:
        records: the loaded records.
        limit: how many to keep (``>= 1``); at least the file's size keeps every record.
        seed: random seed (``data.seed``); the same seed gives the same sample, whatever
            the order of the questions in the file (draws are over the questions sorted
            by conversation, question text and id).

    Returns:
        ``(sample in file order, info)`` with info ``{"limit", "seed", "from",
        "per_category": {category: kept}}``.

    Raises:
        ValueError: when ``limit < 1``.
    """
    if limit < 1:
        raise ValueError(f"data.limit must be at least 1, got {limit}")
    by_category: dict[int, list[int]] = defaultdict(list)
    for index, record in enumerate(records):
        by_category[record.category].append(index)
    if limit >= len(records):
        keep = list(range(len(records)))
        per_category = {c: len(v) for c, v in sorted(by_category.items())}
    else:
        rng = np.random.default_rng(seed)
        per_category = allocate({c: len(v) for c, v in sorted(by_category.items())}, limit)
        keep = []
        for category, indices in sorted(by_category.items()):
            # drawn by question, not by position: files listing the same questions in
            # another order (data.runs) get the same sample
            indices = sorted(indices, key=lambda i: _question_key(records[i]))
            drawn = rng.choice(len(indices), size=per_category[category], replace=False)
            keep.extend(indices[i] for i in drawn)
        keep.sort()
    info = {
        "limit": limit,
        "seed": seed,
        "from": len(records),
        "per_category": {str(c): n for c, n in per_category.items()},
    }
    return [records[i] for i in keep], info
