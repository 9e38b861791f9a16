"""LoCoMo's run log: the :class:`~locomo_exp.results.run_log.RunLog` of a :class:`RunSummary`.

Copies what the summary build already computed (means, counts, the headline bootstrap
intervals, the judge's counts and cost, the trust checks); computes nothing. Imports
pydantic (through :mod:`.run_log`): imported by the writer of ``summary.json`` and its
readers, never by ``--help``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.results.analysis import headline_intervals_json
from locomo_exp.results.run import RunSummary
from locomo_exp.results.run_log import (
    Figure,
    GroupResult,
    InputFile,
    MetricResult,
    RunLog,
    RunSpec,
    TrustBrief,
    Unit,
    judge_spend,
)

BENCHMARK = "locomo"
TITLE = "LoCoMo"
PERCENT = 100.0
"""F1 (0-1) is logged to MLflow in percent; the headline figure names it as MLflow does."""

_TITLES = {
    "stored_judge": "stored J (the input's own verdicts, 0-100)",
    "j": "J (this run's judge, mean over runs, 0-100)",
}


def _bounds(intervals: Mapping[str, Any], key: str) -> tuple[float | None, float | None]:
    pair = intervals.get(key) if isinstance(intervals, Mapping) else None
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        low, high = pair
        return (None if low is None else float(low), None if high is None else float(high))
    return None, None


def _metric(title: str, unit: Unit, groups: Mapping[str, Any], intervals: Mapping[str, Any],
            interval: str | None) -> MetricResult:
    """One metric's groups: mean and count of each, with its headline interval when there is one."""
    results = {}
    for key, stats in groups.items():
        low, high = _bounds(intervals, key)
        results[str(key)] = GroupResult(n=stats.count, value=stats.mean, ci_low=low, ci_high=high)
    return MetricResult(title=title, unit=unit, interval=interval if intervals else None,
                        groups=results)


def _headline(name: str, metric: MetricResult | None, key: str, scale: float = 1.0) -> Figure:
    group = metric.groups.get(key) if metric is not None else None
    unit: Unit = "0-100" if scale != 1.0 or (metric is not None and metric.unit == "0-100") \
        else "0-1"

    def scaled(value: float | None) -> float | None:
        return None if value is None else value * scale

    if group is None:
        return Figure(name=name, value=None, unit=unit)
    return Figure(name=name, value=scaled(group.value), unit=unit, ci_low=scaled(group.ci_low),
                  ci_high=scaled(group.ci_high), n=group.n)


def _scorer(summary: RunSummary) -> str:
    if summary.metrics and summary.judge is not None:
        return "both"
    return "judge" if summary.judge is not None else "f1"


def _trust(summary: RunSummary) -> TrustBrief | None:
    trust = summary.judge.trust if summary.judge is not None else None
    if trust is None:
        return None
    audit, corrected = trust.audit, trust.corrected
    gate = audit.gate.state if audit is not None else None
    return TrustBrief(
        gate_passed=None if gate not in ("passed", "failed") else gate == "passed",
        false_accept_rate=audit.false_accept.rate if audit is not None else None,
        false_reject_rate=audit.false_reject.rate if audit is not None else None,
        corrected=None if corrected is None else Figure(
            name="j_corrected/overall", value=corrected.value, unit="0-1",
            ci_low=corrected.ci_low, ci_high=corrected.ci_high, n=corrected.n_questions),
        warnings=list(summary.warnings),
    )


def locomo_run_log(summary: RunSummary) -> RunLog:
    """The run log of a LoCoMo run.

    Args:
        summary: the run's typed summary (:func:`locomo_exp.scoring.summary.build_summary`).

    Returns:
        :class:`RunLog` with ``metrics`` = every lexical metric (0-1), ``stored_judge`` and
        ``j`` (0-100), each by LoCoMo category key (``"1"``..``"5"``, ``overall_1_4``,
        ``overall``), the headline intervals (conversation-cluster or question bootstrap,
        95%) on ``f1`` and ``j``; ``headline`` = ``j/overall``, ``stored_judge/overall``,
        ``f1/overall`` (F1 in percent, as MLflow logs it); the judge's spend with the
        trust job's total cost (answers + audit + panel).
    """
    unit_name, bootstrap = headline_intervals_json(
        None if summary.analysis is None else summary.analysis.to_json())
    words = (f"95% {unit_name}-level bootstrap ({summary.analysis.bootstrap_samples} "
             f"resamples, seed {summary.analysis.seed})") if summary.analysis else None
    metrics: dict[str, MetricResult] = {}
    for name, groups in summary.metrics.items():
        intervals = bootstrap.get("f1") if name == "f1" else None
        metrics[name] = _metric(f"{name} ({summary.versions.get(name, 'lexical')}, 0-1)", "0-1",
                                groups, intervals or {}, words)
    if summary.stored_judge is not None:
        metrics["stored_judge"] = _metric(_TITLES["stored_judge"], "0-100",
                                          summary.stored_judge, {}, None)
    judge = summary.judge
    if judge is not None and judge.j:
        metrics["j"] = _metric(_TITLES["j"], "0-100", judge.j,
                               bootstrap.get("j_mean") or {}, words)
    headline = [
        _headline("j/overall", metrics.get("j"), "overall"),
        _headline("stored_judge/overall", metrics.get("stored_judge"), "overall"),
        _headline("f1/overall", metrics.get("f1"), "overall", PERCENT),
    ]
    spend = None
    if judge is not None:
        extra = judge.other or {}
        trust = judge.trust
        spend = judge_spend(
            [judge.to_json()],
            status=summary.status.get("judge", "ok"),
            dry_run_estimate=judge.dry_run_estimate,
            cost_usd=judge.total_cost_usd,
            cost_in_all_usd=(trust.total_cost_including_cached_usd if trust is not None
                             and trust.total_cost_including_cached_usd is not None
                             else extra.get("estimated_cost_usd_including_cached")),
        )
    return RunLog(
        benchmark=BENCHMARK,
        title=TITLE,
        spec=RunSpec(
            scorer=_scorer(summary),
            judge_model=judge.model if judge is not None else None,
            judge_protocol=judge.protocol if judge is not None else None,
            judge_runs=judge.runs if judge is not None else None,
        ),
        input=InputFile(path=summary.input.path, sha256=summary.input.sha256,
                        format=summary.input.format, records=summary.input.n_records),
        metrics=metrics,
        headline=[figure for figure in headline if figure.name.split("/")[0] in metrics],
        judge=spend,
        trust=_trust(summary),
        warnings=list(summary.warnings),
        status=dict(summary.status),
    )


__all__ = ["BENCHMARK", "TITLE", "locomo_run_log"]
