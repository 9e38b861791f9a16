"""Build the run's typed results and the flat metrics logged to MLflow.

:func:`build_summary` returns a :class:`~locomo_exp.results.RunSummary` (written as
``summary.json`` by its ``to_json``).
"""

from __future__ import annotations

from typing import Any, Final, Iterable, Mapping, Optional

import numpy as np

from locomo_exp.records import CATEGORY_GROUPS, CATEGORY_IDS, QARecord, group_metric_name
from locomo_exp.results import Analysis, InputInfo, JudgeSummary, LatencyStats, RunSummary
from locomo_exp.scoring.aggregate import aggregate_by_category

LATENCY_FIELDS: tuple[str, ...] = ("search_latency_s", "total_latency_s", "context_tokens")
"""Optional per-question fields summarised by :func:`latency_stats` (seconds; tokens)."""

PERCENTILE_METHOD: Final = "linear"
"""numpy's default percentile method (type 7 of Hyndman & Fan), stated in the report."""


def latency_stats(records: Iterable[QARecord]) -> dict[str, LatencyStats]:
    """p50/p95/mean of latency (seconds) and context-token fields present in the input.

    Args:
        records: the scored records.

    Returns:
        ``{field: LatencyStats}`` for each of :data:`LATENCY_FIELDS`; ``count`` 0 and
        ``None`` values when the input lacks the field. Percentiles use numpy's
        :data:`PERCENTILE_METHOD`.
    """
    records = list(records)
    stats: dict[str, LatencyStats] = {}
    for name in LATENCY_FIELDS:
        present = [getattr(r, name) for r in records if getattr(r, name) is not None]
        values = np.array(present, float)
        if values.size == 0:
            stats[name] = LatencyStats(count=0, p50=None, p95=None, mean=None)
        else:
            stats[name] = LatencyStats(
                count=int(values.size),
                p50=float(np.percentile(values, 50, method=PERCENTILE_METHOD)),
                p95=float(np.percentile(values, 95, method=PERCENTILE_METHOD)),
                mean=float(values.mean()),
            )
    return stats


def build_summary(
    records: list[QARecord],
    lexical: list[dict[str, float]],
    *,
    input_info: InputInfo | Mapping[str, Any],
    versions: dict[str, str],
    category_names: dict[int, str],
    judge: Optional[JudgeSummary | Mapping[str, Any]] = None,
    status: Optional[Mapping[str, str]] = None,
    analysis: Optional[Analysis] = None,
    stored_judge_detail: Optional[dict[str, Any]] = None,
) -> RunSummary:
    """Assemble the run's results (written as ``summary.json`` by :meth:`RunSummary.to_json`).

    Args:
        records: the scored records.
        lexical: per-record lexical scores from :func:`locomo_exp.scoring.score_lexical`
            (empty when F1 was not run).
        input_info: the scored file (an :class:`InputInfo`, or its JSON: path, sha256,
            format, skipped records...).
        versions: metric -> version string (F1 variant, BLEU-1, judge prompt).
        category_names: display names keyed by id.
        judge: the judge's summary (J on 0-100; the judge package's dict is wrapped in a
            :class:`JudgeSummary`), when the judge ran.
        status: part (``f1``, ``judge``) -> ``"ok"`` or what happened.
        analysis: output of :func:`locomo_exp.analysis.analyse`.
        stored_judge_detail: stored J as the file's authors compute it, from
            :func:`locomo_exp.data.info.stored_judge_section`.

    A ``stored_judge`` section (0-100 per category) is added when the input carries
    verdicts of another judge (``data.fields.judge_score``; the Mem0 harness's
    ``llm_score``).

    Returns:
        A :class:`RunSummary`; F1 and BLEU-1 means are 0-1. Category keys are ``"1"``..``"5"``,
        ``"overall_1_4"``, ``"overall"``.
    """
    categories = [r.category for r in records]
    counts = {
        key: sum(1 for c in categories if c in members) for key, members in CATEGORY_GROUPS.items()
    }
    conversations = {
        str(c): len({r.conversation_id for r in records if r.category == c}) for c in CATEGORY_IDS
    }
    conversations["overall"] = len({r.conversation_id for r in records})
    metrics = {
        name: aggregate_by_category((row[name] for row in lexical), categories)
        for name in (lexical[0] if lexical else ())
    }
    stored = [r.stored_judge_score for r in records]
    stored_judge = (
        aggregate_by_category(stored, categories) if any(v is not None for v in stored) else None
    )
    if judge is not None and not isinstance(judge, JudgeSummary):
        judge = JudgeSummary.from_json(judge)
    return RunSummary(
        input=input_info if isinstance(input_info, InputInfo) else InputInfo.from_json(input_info),
        versions=dict(versions),
        category_names={str(k): v for k, v in category_names.items()},
        counts=counts,
        conversations=conversations,
        metrics=metrics,
        latency=latency_stats(records),
        stored_judge=stored_judge,
        judge=judge,
        status=dict(status or {}),
        analysis=analysis,
        stored_judge_detail=stored_judge_detail,
    )


def summary_metrics(summary: dict[str, Any], category_names: dict[int, str]) -> dict[str, float]:
    """Flatten a summary into MLflow metrics such as ``f1/overall`` or ``f1/cat1_multi_hop``.

    Lexical means stay on their 0-1 scale; ``n_questions/<key>`` counts questions;
    latencies are ``latency/<field>_p50`` etc. in seconds. ``None`` values are left out.
    Data counts: ``data/skipped_records``, ``data/n_missing_predictions`` (predictions
    null/NaN/Infinity, scored 0) and ``data/n_excluded_no_gold`` (questions left out).

    Args:
        summary: output of :func:`build_summary`.
        category_names: display names keyed by id.

    Returns:
        name -> value (may still need :func:`locomo_exp.tracking.finite_metrics`).
    """

    def key_name(key: str) -> str:
        return group_metric_name(key, category_names)

    flat: dict[str, float] = {}
    for metric, by_key in summary["metrics"].items():
        for key, agg in by_key.items():
            if agg["mean"] is not None:
                flat[f"{metric}/{key_name(key)}"] = agg["mean"]
    for key, agg in (summary.get("stored_judge") or {}).items():
        if agg["mean"] is not None:
            flat[f"stored_judge/{key_name(key)}"] = agg["mean"]
    for key, count in summary["counts"].items():
        flat[f"n_questions/{key_name(key)}"] = count
    for name, stats in summary["latency"].items():
        for stat in ("p50", "p95", "mean"):
            if stats[stat] is not None:
                flat[f"latency/{name}_{stat}"] = stats[stat]
    bootstrap = (summary.get("analysis") or {}).get("bootstrap") or {}
    for metric, by_key in bootstrap.items():
        prefix = "j" if metric == "j_mean" else metric
        for key, interval in by_key.items():
            if interval:
                flat[f"{prefix}/{key_name(key)}_ci_low"] = interval[0]
                flat[f"{prefix}/{key_name(key)}_ci_high"] = interval[1]
    flat["data/skipped_records"] = summary["input"].get("n_skipped_records", 0)
    flat["data/n_missing_predictions"] = summary["input"].get("n_missing_predictions", 0)
    flat["data/n_excluded_no_gold"] = summary["input"].get("n_excluded_no_gold", 0)
    return flat
