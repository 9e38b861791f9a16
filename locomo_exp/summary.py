"""Machine-readable run summary (``summary.json``); its MLflow metrics are named in :mod:`locomo_exp.tracking`."""

from __future__ import annotations

from typing import Any, Final, Iterable, Optional

import numpy as np

from locomo_exp.records import CATEGORY_GROUPS, CATEGORY_IDS, QARecord
from locomo_exp.scoring.aggregate import aggregate_by_category

LATENCY_FIELDS: tuple[str, ...] = ("search_latency_s", "total_latency_s", "context_tokens")
"""Optional per-question fields summarised by :func:`latency_stats` (seconds; tokens)."""

PERCENTILE_METHOD: Final = "linear"
"""numpy's default percentile method (type 7 of Hyndman & Fan), stated in the report."""


def latency_stats(records: Iterable[QARecord]) -> dict[str, dict[str, Optional[float]]]:
    """p50/p95/mean of latency (seconds) and context-token fields present in the input.

    Args:
        records: the scored records.

    Returns:
        ``{field: {"count", "p50", "p95", "mean"}}`` for each of :data:`LATENCY_FIELDS`;
        ``count`` 0 and ``None`` values when the input lacks the field.
    """
    records = list(records)
    stats: dict[str, dict[str, Optional[float]]] = {}
    for name in LATENCY_FIELDS:
        values = np.array([getattr(r, name) for r in records if getattr(r, name) is not None], float)
        if values.size == 0:
            stats[name] = {"count": 0, "p50": None, "p95": None, "mean": None}
        else:
            stats[name] = {
                "count": int(values.size),
                "p50": float(np.percentile(values, 50, method=PERCENTILE_METHOD)),
                "p95": float(np.percentile(values, 95, method=PERCENTILE_METHOD)),
                "mean": float(values.mean()),
            }
    return stats


def build_summary(
    records: list[QARecord],
    lexical: list[dict[str, float]],
    *,
    input_info: dict[str, Any],
    versions: dict[str, str],
    category_names: dict[int, str],
    judge: Optional[dict[str, Any]] = None,
) -> dict[str, Any]:
    """Assemble ``summary.json``.

    Args:
        records: the scored records.
        lexical: per-record lexical scores from :func:`locomo_exp.scoring.score_lexical`
            (empty when F1 was not run).
        input_info: path, sha256, format, skipped records...
        versions: metric -> version string (F1 variant, BLEU-1, judge prompt).
        category_names: display names keyed by id.
        judge: the judge's summary (J on 0-100), when the judge ran.

    A ``stored_judge`` section (0-100 per category) is added when the input carries
    verdicts of another judge (``data.fields.judge_score``; the Mem0 harness's
    ``llm_score``).

    Returns:
        ``{"input", "versions", "category_names", "counts", "metrics": {metric: {category
        key: {"mean", "count", "min", "max"}}}, "latency", "judge"?}``; F1 and BLEU-1
        means are 0-1. Category keys are ``"1"``..``"5"``, ``"overall_1_4"``, ``"overall"``.
    """
    categories = [r.category for r in records]
    counts = {key: sum(1 for c in categories if c in members) for key, members in CATEGORY_GROUPS.items()}
    conversations = {
        str(c): len({r.conversation_id for r in records if r.category == c}) for c in CATEGORY_IDS
    }
    conversations["overall"] = len({r.conversation_id for r in records})
    metrics: dict[str, Any] = {}
    if lexical:
        for name in lexical[0]:
            aggregates = aggregate_by_category((row[name] for row in lexical), categories)
            metrics[name] = {key: agg.to_dict() for key, agg in aggregates.items()}
    summary: dict[str, Any] = {
        "input": input_info,
        "versions": versions,
        "category_names": {str(k): v for k, v in category_names.items()},
        "counts": counts,
        "conversations": conversations,
        "metrics": metrics,
        "latency": latency_stats(records),
    }
    stored = [r.stored_judge_score for r in records]
    if any(v is not None for v in stored):  # summarize() drops the None values
        aggregates = aggregate_by_category(stored, categories)  # type: ignore[arg-type]
        summary["stored_judge"] = {key: agg.to_dict() for key, agg in aggregates.items()}
    if judge is not None:
        summary["judge"] = judge
    return summary
