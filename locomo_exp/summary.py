"""Build the run's typed results and the flat metrics logged to MLflow.

:func:`build_summary` returns a :class:`~locomo_exp.results.RunSummary` (written as
``summary.json`` by its ``to_json``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import numpy as np

from locomo_exp.records import CATEGORY_GROUPS, CATEGORY_IDS, QARecord
from locomo_exp.results import Analysis, InputInfo, JudgeSummary, LatencyStats, RunSummary
from locomo_exp.scoring.aggregate import aggregate_by_category, lexical_aggregates
from locomo_exp.scoring.specs import OFFICIAL_VERSIONS
from locomo_exp.scoring.stored import compare_stored

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
    judge: JudgeSummary | Mapping[str, Any] | None = None,
    status: Mapping[str, str] | None = None,
    analysis: Analysis | None = None,
    stored_judge_detail: dict[str, Any] | None = None,
    stored_metrics: Mapping[str, Mapping[str, float]] | None = None,
    runs: dict[str, Any] | None = None,
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
        stored_metrics: question id -> the file's own per-question metrics
            (``LoadedResults.stored_metrics``); compared with ``lexical`` into
            ``stored_vs_recomputed`` (:func:`locomo_exp.scoring.stored.compare_stored`).
        runs: per-run lexical means for ``data.runs``
            (:func:`locomo_exp.scoring.runs.runs_section`).

    A ``stored_judge`` section (0-100 per category) is added when the input carries
    verdicts of another judge (``data.fields.judge_score``; the Mem0 harness's
    ``llm_score``).

    ``metrics`` also holds ``f1_locomo_official``: the mean of each question's
    ``round(f1_locomo, 3)``, as LoCoMo's own aggregation computes it (its version text is
    added to ``versions``); ``f1_locomo`` keeps the unrounded mean.

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
    metrics = lexical_aggregates(lexical, categories)
    versions = dict(versions)
    versions.update({n: OFFICIAL_VERSIONS[n] for n in metrics if n in OFFICIAL_VERSIONS})
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
        stored_vs_recomputed=compare_stored(records, lexical, stored_metrics or {}),
        runs=runs,
    )
