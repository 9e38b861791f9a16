"""BEAM's run log: the typed :class:`~locomo_exp.results.run_log.RunLog` of a BEAM summary.

Built from the ``summary.json`` content :func:`.summary.build_summary` makes (also from a
version-1 file, written before the log: the same sections), copying its figures; computes
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import NAME, TITLE
from locomo_exp.benchmarks.plugin_trust import plugin_spend, trust_brief
from locomo_exp.results.run_log import (
    Figure,
    GroupResult,
    InputFile,
    MetricResult,
    RunLog,
    RunSpec,
    TrustBrief,
    Unit,
)

OVERALL = "overall"
"""The group key of every question (beside the ten abilities' keys)."""


def _ci(pair: Any) -> tuple[float | None, float | None]:
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        return pair[0], pair[1]
    return None, None


def _group(figures: Mapping[str, Any], value: str, ci: str) -> GroupResult:
    low, high = _ci(figures.get(ci))
    return GroupResult(n=int(figures.get("n") or 0), value=figures.get(value), ci_low=low,
                       ci_high=high)


def _nugget(figures: Mapping[str, Any], value: str, title: str, unit: Unit,
            interval: str | None) -> MetricResult:
    groups = {str(k): _group(g, value, f"{value}_ci")
              for k, g in (figures.get("abilities") or {}).items()}
    groups[OVERALL] = _group(figures.get(OVERALL) or {}, value, f"{value}_ci")
    return MetricResult(title=title, unit=unit, interval=interval, groups=groups)


def _official(figures: Mapping[str, Any], interval: str | None) -> MetricResult:
    groups = {str(k): _group(g, "score", "ci") for k, g in (figures.get("abilities") or {}).items()}
    return MetricResult(title=f"{p.OFFICIAL} ability score (0-1)", unit="0-1", interval=interval,
                        groups=groups)


def _headline(figures: Mapping[str, Any]) -> list[Figure]:
    nugget = (figures.get(p.NUGGET) or {}).get(OVERALL) or {}
    official = figures.get(p.OFFICIAL) or {}
    out = []
    units: tuple[tuple[str, Unit], ...] = (("pass_rate", "0-100"), ("avg_score", "0-1"))
    for value, unit in units:
        low, high = _ci(nugget.get(f"{value}_ci"))
        out.append(Figure(name=f"{p.NUGGET}/{value}/{OVERALL}", value=nugget.get(value), unit=unit,
                          ci_low=low, ci_high=high, n=nugget.get("n")))
    out.append(Figure(name=f"{p.OFFICIAL}/mean_of_abilities",
                      value=official.get("mean_of_abilities"), unit="0-1"))
    return out


def _trust(judge: Mapping[str, Any], warnings: list[str]) -> TrustBrief | None:
    """BEAM's own audit (rates, gate) and the labels' corrected accept rate, in brief."""
    audit = judge.get("audit")
    return trust_brief(judge.get("trust"), audit=audit if isinstance(audit, Mapping) else None,
                       warnings=warnings)


def beam_run_log(summary: Mapping[str, Any]) -> RunLog:
    """The run log of a BEAM run.

    Args:
        summary: the run's ``summary.json`` content (:func:`.summary.build_summary`), or a
            version-1 file's.

    Returns:
        :class:`RunLog`: metrics ``beam-nugget/pass_rate`` (percent), ``beam-nugget/avg_score``
        and ``beam-official/score`` (0-1) by ability (and ``overall`` for beam-nugget) with
        their 95% cluster-bootstrap intervals over chats; headline: beam-nugget's overall
        pass rate and average score, beam-official's mean of the abilities (``None`` when an
        ability is not measured); the judge's spend, the whole job's: item, alignment and
        audit-control calls, and the panel's (:func:`~locomo_exp.benchmarks.plugin_trust.
        plugin_spend`).

    Raises:
        KeyError: when a section every BEAM summary has (``input``, ``figures``) is missing.
    """
    figures = summary["figures"]
    judge = summary.get("judge") or {}
    interval = (summary.get("intervals") or {}).get("method")
    metrics: dict[str, MetricResult] = {}
    if figures.get(p.NUGGET):
        metrics[f"{p.NUGGET}/pass_rate"] = _nugget(
            figures[p.NUGGET], "pass_rate", f"{p.NUGGET} pass rate (percent)", "0-100", interval)
        metrics[f"{p.NUGGET}/avg_score"] = _nugget(
            figures[p.NUGGET], "avg_score", f"{p.NUGGET} average score (0-1)", "0-1", interval)
    if figures.get(p.OFFICIAL):
        metrics[f"{p.OFFICIAL}/score"] = _official(figures[p.OFFICIAL], interval)
    inp = summary["input"]
    warnings = [str(w) for w in summary.get("warnings") or ()]
    status = {str(k): str(v) for k, v in (summary.get("status") or {}).items()}
    spend = None
    if judge:
        alignment = judge.get("alignment") or {}
        audit = judge.get("audit") or {}
        dry = judge.get("dry_run_estimate")
        own = [judge, *([alignment] if alignment else []),
               *([audit] if audit.get("counts") else [])]  # its audit's controls: own calls
        spend = plugin_spend(
            own, judge.get("trust"),
            status="dry run" if dry is not None else status.get("scoring", "ok"),
            dry_run_estimate=dry,
        )
    return RunLog(
        benchmark=NAME,
        title=TITLE,
        spec=RunSpec(
            scorer="judge" if judge else "stored verdicts",
            judge_model=judge.get("model"),
            judge_protocol=judge.get("protocol"),
            judge_runs=judge.get("runs"),
            profile=str(judge.get("profile") or p.NUGGET),
        ),
        input=InputFile(path=str(inp["path"]), sha256=str(inp["sha256"]),
                        format=str(inp.get("layout")), records=int(inp.get("questions") or 0)),
        metrics=metrics,
        headline=_headline(figures) if figures else [],
        judge=spend,
        trust=_trust(judge, warnings),
        warnings=warnings,
        status=status,
    )


__all__ = ["beam_run_log"]
