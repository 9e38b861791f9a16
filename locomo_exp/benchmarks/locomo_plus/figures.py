"""LoCoMo-Plus's figures from per-item scores: overall, per category, per relation, factual, gap.

Definitions (0-1, rounded to 4 decimals as the authors print them):

- **overall**: the mean score over the scored items (the authors' ``overall_avg``: a mean
  over items, not over categories);
- **per category** and **per Cognitive relation type**: the mean over their items;
- **factual, unweighted**: the mean of the five LoCoMo categories' means (each category
  counts once);
- **factual, item-weighted**: the mean over every LoCoMo item (categories count by size:
  single-hop's 841 weigh most);
- **gap**: factual minus Cognitive, under each definition.

The authors' scorer computes neither the factual average nor the gap; the paper's tables
and third parties print them. A 95% interval resamples conversations (the cluster bootstrap
of :func:`locomo_exp.stats.bootstrap.cluster_bootstrap_ci`) where every scored item's
conversation is known.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import (
    CATEGORIES,
    COGNITIVE,
    FACTUAL,
    LABEL_SCORES,
    RELATIONS,
    label_score,
)
from locomo_exp.benchmarks.locomo_plus.parsing import AUTHORS
from locomo_exp.benchmarks.locomo_plus.runs import StoredRow
from locomo_exp.stats.bootstrap import cluster_bootstrap_ci

DIGITS = 4
"""Decimals of every figure (the authors' scorer rounds to 4)."""

FACTUAL_DEFINITIONS: dict[str, str] = {
    "unweighted": "mean of the five LoCoMo categories' means (each category counts once)",
    "item_weighted": "mean over all LoCoMo items (each question counts once)",
}
"""The two factual averages, in words (reports and ``summary.json`` print them)."""


@dataclass(frozen=True)
class ScoredItem:
    """One item's score under one reading.

    Attributes:
        category: the item's category string.
        relation: its Cognitive relation type, or ``None``.
        conversation: its LoCoMo conversation, or ``None`` when not known.
        score: 1, 0.5, 0, or ``None`` when unscored.
        unscored: why it is unscored (``""`` when scored).
    """

    category: str
    relation: str | None
    conversation: int | None
    score: float | None
    unscored: str = ""


API_ERROR = "failed judge call (API error), not a verdict"


def read_stored(rows: Sequence[StoredRow], parser: str) -> list[ScoredItem]:
    """Score stored verdicts under a reading.

    ``ours``: a stored API error is a failed call (unscored); a stored label is scored by
    the label map, any other label is unscored. ``authors``: every stored label at face
    value, as the authors' summary counts it (an unknown or empty label scores 0).

    Args:
        rows: the stored run's rows.
        parser: ``ours`` or ``authors``.

    Returns:
        One :class:`ScoredItem` per row.
    """
    out = []
    for row in rows:
        score: float | None
        why = ""
        if parser == AUTHORS:
            score = label_score(row.label)
        elif row.api_error:
            score, why = None, API_ERROR
        else:
            score = LABEL_SCORES.get(row.label.strip().lower())
            why = "" if score is not None else f"stored label {row.label!r} is not a verdict"
        out.append(ScoredItem(row.category, row.relation, row.conversation, score, why))
    return out


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), DIGITS) if values else None


def _group(items: Sequence[ScoredItem]) -> dict[str, Any]:
    scores = [i.score for i in items if i.score is not None]
    return {"n": len(items), "n_scored": len(scores),
            "score": round(sum(scores), DIGITS), "mean": _mean(scores)}


def _interval(items: Sequence[ScoredItem], samples: int, seed: int) -> list[float] | None:
    scored = [i for i in items if i.score is not None]
    if not scored or samples < 1 or any(i.conversation is None for i in scored):
        return None
    found = cluster_bootstrap_ci([i.score for i in scored], [i.conversation for i in scored],
                                 n_resamples=samples, seed=seed)
    return None if found is None else [round(found[0], DIGITS), round(found[1], DIGITS)]


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, DIGITS)


def compute_figures(items: Sequence[ScoredItem], *, samples: int, seed: int) -> dict[str, Any]:
    """Every figure of one reading (numbers only; ``None`` where not measured).

    Args:
        items: the scored items.
        samples: bootstrap resamples for the intervals (0: none).
        seed: the bootstrap seed.

    Returns:
        ``{n_items, n_scored, n_unscored, unscored_reasons, status, overall, overall_ci,
        by_category, by_relation, factual: {unweighted, item_weighted, definitions},
        cognitive, cognitive_ci, gap: {unweighted, item_weighted}, interval_unit}``. The
        status is ``measured``, or ``N of M stored verdicts are API errors; accuracy not
        measured`` (or ``N of M items have no verdict; ...``) when no item is scored.
    """
    scored = [i for i in items if i.score is not None]
    reasons = Counter(i.unscored for i in items if i.score is None)
    status = "measured"
    if not scored:
        errors = reasons.get(API_ERROR, 0)
        status = (f"{errors:,} of {len(items):,} stored verdicts are API errors; accuracy not "
                  "measured" if errors else f"{len(items):,} of {len(items):,} items have no "
                  "verdict; accuracy not measured")
    by_category = {c: _group([i for i in items if i.category == c])
                   for c in CATEGORIES if any(i.category == c for i in items)}
    by_relation = {r: _group([i for i in items if i.relation == r])
                   for r in RELATIONS if any(i.relation == r for i in items)}
    factual_items = [i for i in items if i.category in FACTUAL]
    means = [by_category[c]["mean"] for c in FACTUAL if c in by_category]
    unweighted = (round(sum(means) / len(means), DIGITS)
                  if len(means) == len(FACTUAL) and None not in means else None)
    weighted = _group(factual_items)["mean"] if factual_items else None
    cognitive_items = [i for i in items if i.category == COGNITIVE]
    cognitive = _group(cognitive_items)["mean"] if cognitive_items else None
    return {
        "n_items": len(items),
        "n_scored": len(scored),
        "n_unscored": len(items) - len(scored),
        "unscored_reasons": dict(reasons),
        "status": status,
        "overall": _mean([i.score for i in scored if i.score is not None]),
        "overall_ci": _interval(items, samples, seed),
        "interval_unit": "conversation",
        "by_category": by_category,
        "by_relation": by_relation,
        "factual": {"unweighted": unweighted, "item_weighted": weighted,
                    "definitions": dict(FACTUAL_DEFINITIONS)},
        "cognitive": cognitive,
        "cognitive_ci": _interval(cognitive_items, samples, seed) if cognitive_items else None,
        "gap": {"unweighted": _diff(unweighted, cognitive),
                "item_weighted": _diff(weighted, cognitive)},
    }
