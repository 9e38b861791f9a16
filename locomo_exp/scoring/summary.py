"""Build the run's typed results: the summary, its uncertainty and its error analysis.

:func:`build_summary` returns a :class:`~locomo_exp.results.RunSummary` (written as
``summary.json`` by its ``to_json``); :func:`analyse` the
:class:`~locomo_exp.results.Analysis` the report's uncertainty, reliability and
error-analysis sections show. Analysis rows are the dicts written to ``scores.jsonl``:
``question_id``, ``category``, ``question``, ``ground_truth``, ``prediction``, lexical
scores (0-1) and, when the judge ran, ``j_mean`` (0-100) and ``j_runs`` (one entry per run
with ``outcome`` and ``score``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS, CATEGORY_IDS
from locomo_exp.results import (
    Analysis,
    BootstrapCI,
    Extremes,
    InputInfo,
    JudgeSummary,
    LatencyStats,
    QARecord,
    QuestionBrief,
    Reliability,
    RunSummary,
)
from locomo_exp.results.analysis import CONVERSATION, QUESTION
from locomo_exp.scoring.aggregate import aggregate_by_category, lexical_aggregates
from locomo_exp.scoring.specs import OFFICIAL_VERSIONS
from locomo_exp.scoring.stored_vs_recomputed import compare_stored
from locomo_exp.stats.agreement import krippendorff_alpha
from locomo_exp.stats.bootstrap import (
    CONFIDENCE,
    MIN_RUN_CLUSTERS,
    bootstrap_ci,
    cluster_bootstrap_ci,
)

log = logging.getLogger(__name__)

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
        analysis: output of :func:`locomo_exp.scoring.summary.analyse`.
        stored_judge_detail: stored J as the file's authors compute it, from
            :func:`locomo_exp.data.info.stored_judge_section`.
        stored_metrics: question id -> the file's own per-question metrics
            (``LoadedResults.stored_metrics``); compared with ``lexical`` into
            ``stored_vs_recomputed``
            (:func:`locomo_exp.scoring.stored_vs_recomputed.compare_stored`).
        runs: per-run lexical means for ``data.runs``
            (:func:`locomo_exp.scoring.repeated_runs.runs_section`).

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


def bootstrap_by_category(
    rows: Sequence[dict[str, Any]], metric: str, n_resamples: int = 1000, seed: int = 0
) -> dict[str, BootstrapCI | None]:
    """:func:`bootstrap_ci` of ``metric`` per category id and overall.

    Args:
        rows: per-question rows.
        metric: row key, e.g. ``f1`` (0-1) or ``j_mean`` (0-100).
        n_resamples: bootstrap resamples.
        seed: random seed.

    Returns:
        ``{"1": BootstrapCI | None, ..., "overall_1_4": ..., "overall": ...}``, in the
        metric's unit; ``None`` for a group without values.
    """
    result: dict[str, BootstrapCI | None] = {}
    for key, members in CATEGORY_GROUPS.items():
        values = [
            row[metric]
            for row in rows
            if row["category"] in members and row.get(metric) is not None
        ]
        interval = bootstrap_ci(values, n_resamples, seed)
        result[key] = BootstrapCI(*interval) if interval else None
    return result


def question_level_reason(rows: Sequence[dict[str, Any]]) -> str:
    """Why a run's headline interval must resample questions, or ``""`` when it need not.

    Args:
        rows: per-question rows (``conversation_id`` may be ``None``).

    Returns:
        ``""`` when every question carries a conversation id and there are at least
        :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations; else one
        sentence naming what is missing.
    """
    if not rows:
        return "no questions"
    missing = sum(1 for row in rows if row.get("conversation_id") in (None, ""))
    why = (
        "questions are resampled as if independent, which may understate the uncertainty "
        "when questions of one conversation are correlated"
    )
    if missing == len(rows):
        return f"the input has no conversation ids: {why}"
    if missing:
        return f"{missing} of {len(rows)} questions have no conversation id: {why}"
    n = len({str(row["conversation_id"]) for row in rows})
    if n < MIN_RUN_CLUSTERS:
        return (
            f"{n} conversation{'s' if n != 1 else ''}: a conversation-cluster interval needs "
            f"at least {MIN_RUN_CLUSTERS} (fewer give too few distinct resamples); {why}"
        )
    return ""


def cluster_bootstrap_by_category(
    rows: Sequence[dict[str, Any]], metric: str, n_resamples: int = 1000, seed: int = 0
) -> dict[str, BootstrapCI | None]:
    """:func:`cluster_bootstrap_ci` of ``metric`` per category id and overall.

    Args:
        rows: per-question rows, each with a ``conversation_id``.
        metric: row key, e.g. ``f1`` (0-1) or ``j_mean`` (0-100).
        n_resamples: bootstrap resamples.
        seed: random seed (the same for every group, as :func:`bootstrap_by_category`).

    Returns:
        ``{"1": BootstrapCI | None, ..., "overall_1_4": ..., "overall": ...}``, in the
        metric's unit; ``None`` for a group without values or with fewer than
        :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations.
    """
    result: dict[str, BootstrapCI | None] = {}
    for key, members in CATEGORY_GROUPS.items():
        chosen = [r for r in rows if r["category"] in members and r.get(metric) is not None]
        interval = cluster_bootstrap_ci(
            [r[metric] for r in chosen],
            [str(r["conversation_id"]) for r in chosen],
            n_resamples,
            seed,
        )
        result[key] = BootstrapCI(*interval) if interval else None
    return result


def _run_matrix(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """Runs x questions matrix of valid judge scores, NaN where a run has none."""
    judged = [row for row in rows if row.get("j_runs")]
    if not judged:
        return np.empty((0, 0))
    n_runs = max(len(row["j_runs"]) for row in judged)
    matrix = np.full((n_runs, len(judged)), np.nan)
    for column, row in enumerate(judged):
        for run in row["j_runs"]:
            if run.get("outcome") == "valid" and run.get("score") is not None:
                matrix[int(run.get("run", 0)), column] = float(run["score"])
    return matrix


def judge_reliability(rows: Sequence[dict[str, Any]], protocol: str) -> dict[str, Any]:
    """Agreement between the judge's runs on the same questions.

    Krippendorff's alpha (:func:`locomo_exp.stats.agreement.krippendorff_alpha`) with runs as
    coders and questions as units, at the protocol's level (its spec's
    ``krippendorff_level``: interval for the 0-100 ``rubric``, nominal for ``binary``).
    Also the share of questions whose valid runs all gave the same score.

    Args:
        rows: per-question rows with ``j_runs``.
        protocol: a judge protocol name (``rubric``, ``binary``), or the level itself
            (``interval``, ``nominal``: a template's, from the judge summary).

    Returns:
        ``{"krippendorff_alpha": float | None, "level": str, "unanimous_share": float | None,
        "questions": int}``; ``None`` where it cannot be computed (fewer than 2 runs, or no
        variation at all).
    """
    from locomo_exp.judge.protocols import get_protocol

    level = (
        get_protocol(protocol).krippendorff_level
        if protocol not in ("interval", "nominal")
        else ("interval" if protocol == "interval" else "nominal")
    )
    matrix = _run_matrix(rows)
    result: dict[str, Any] = {
        "krippendorff_alpha": None,
        "level": level,
        "unanimous_share": None,
        "questions": int(matrix.shape[1]) if matrix.size else 0,
    }
    if matrix.size == 0:
        return result
    unanimous = []
    for column in matrix.T:
        valid = column[~np.isnan(column)]
        if valid.size:
            unanimous.append(bool(np.all(valid == valid[0])))
    if unanimous:
        result["unanimous_share"] = sum(unanimous) / len(unanimous)
    if matrix.shape[0] >= 2:
        result["krippendorff_alpha"] = krippendorff_alpha(matrix, level)
    return result




def _brief(row: dict[str, Any], keys: Iterable[str], gap: float | None = None) -> QuestionBrief:
    return QuestionBrief(
        question_id=row.get("question_id"),
        category=row.get("category"),
        question=row.get("question"),
        ground_truth=row.get("ground_truth"),
        prediction=row.get("prediction"),
        scores={k: row.get(k) for k in keys},
        gap=gap,
    )


def extremes(
    rows: Sequence[dict[str, Any]], metric: str, k: int = 5, also: Sequence[str] = ()
) -> Extremes:
    """The ``k`` highest and lowest questions by a metric (ties broken by file order).

    Args:
        rows: per-question rows.
        metric: row key to sort on.
        k: how many at each end.
        also: other row keys to carry along.

    Returns:
        :class:`Extremes`: ``top`` highest first, ``bottom`` lowest first; each brief's
        ``scores`` hold ``metric`` then ``also``.
    """
    scored = [row for row in rows if row.get(metric) is not None]
    order = sorted(scored, key=lambda row: -row[metric])
    keys = (metric, *also)
    return Extremes(
        top=tuple(_brief(row, keys) for row in order[:k]),
        bottom=tuple(_brief(row, keys) for row in list(reversed(order))[:k]),
    )


def f1_j_disagreements(
    rows: Sequence[dict[str, Any]], f1_key: str = "f1", k: int = 5
) -> tuple[QuestionBrief, ...]:
    """Questions where F1 (as 0-100) and J (0-100) differ most, largest gap first.

    Args:
        rows: per-question rows with both ``f1_key`` and ``j_mean``.
        f1_key: which F1 to compare.
        k: how many.

    Returns:
        Briefs with scores ``f1_key`` (0-1) and ``j_mean`` (0-100), and ``gap`` = J - 100 * F1.
    """
    both = [row for row in rows if row.get(f1_key) is not None and row.get("j_mean") is not None]
    ranked = sorted(both, key=lambda row: -abs(row["j_mean"] - 100.0 * row[f1_key]))
    return tuple(
        _brief(row, (f1_key, "j_mean"), gap=row["j_mean"] - 100.0 * row[f1_key])
        for row in ranked[:k]
    )


def analyse(
    rows: Sequence[dict[str, Any]],
    *,
    protocol: str | None = None,
    bootstrap_samples: int = 1000,
    seed: int = 0,
) -> Analysis:
    """Everything the report's uncertainty, reliability and error-analysis sections show.

    Args:
        rows: per-question rows.
        protocol: the judge protocol when J was run, else ``None``.
        bootstrap_samples: resamples per interval.
        seed: random seed.

    Returns:
        :class:`~locomo_exp.results.Analysis`: intervals of ``f1`` (0-1) and ``j_mean``
        (0-100) for the metrics present, extremes per metric (carrying the file's stored
        verdict ``stored_judge_score``, 0-100, when no judge ran), F1-J disagreements when
        both ran, and judge reliability when the judge ran.
    """
    has_f1 = any(row.get("f1") is not None for row in rows)
    has_j = any(row.get("j_mean") is not None for row in rows)
    metrics = [m for m, present in (("f1", has_f1), ("j_mean", has_j)) if present]
    # without this project's judge, the file's own verdicts fill the error analysis' J column
    stored = (
        ["stored_judge_score"]
        if not has_j and any(row.get("stored_judge_score") is not None for row in rows)
        else []
    )
    note = question_level_reason(rows)
    clusters: dict[str, int] = {}
    cluster: dict[str, dict[str, BootstrapCI | None]] = {}
    if not note:
        clusters = {
            key: len({str(r["conversation_id"]) for r in rows if r["category"] in members})
            for key, members in CATEGORY_GROUPS.items()
        }
        cluster = {
            m: cluster_bootstrap_by_category(rows, m, bootstrap_samples, seed) for m in metrics
        }
    return Analysis(
        confidence=CONFIDENCE,
        bootstrap_samples=bootstrap_samples,
        seed=seed,
        bootstrap={m: bootstrap_by_category(rows, m, bootstrap_samples, seed) for m in metrics},
        extremes={
            m: extremes(rows, m, also=[*(o for o in metrics if o != m), *stored]) for m in metrics
        },
        disagreements=f1_j_disagreements(rows) if has_f1 and has_j else None,
        reliability=(
            Reliability.from_json(judge_reliability(rows, protocol)) if has_j and protocol else None
        ),
        cluster_bootstrap=cluster,
        clusters=clusters,
        headline=QUESTION if note else CONVERSATION,
        headline_note=note,
    )
