"""LoCoMo-Plus's run log: the typed :class:`~locomo_exp.results.run_log.RunLog` of its summary.

Built from the ``summary.json`` content :mod:`.summary` makes (also from a version-1 file,
written before the log: the same sections), copying its figures; computes nothing. The
headline figures are named and scaled as the run's MLflow metrics (:mod:`.tracking`:
``<reading>/overall`` in percent, 2 decimals).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import NAME, TITLE
from locomo_exp.benchmarks.plugin_trust import plugin_spend, trust_brief
from locomo_exp.results.run_log import (
    Figure,
    GroupResult,
    InputFile,
    MetricResult,
    RunLog,
    RunSpec,
)

PERCENT = 100.0
OVERALL = "overall"
"""The group key of every item (beside LoCoMo-Plus's category keys)."""

JUDGED_SOURCES = ("judged", "dry run")
"""``verdicts.source`` of a run that asked this project's judge (the rest read stored ones)."""


def _ci(pair: Any) -> tuple[float | None, float | None]:
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        return pair[0], pair[1]
    return None, None


def _pct(value: Any) -> float | None:
    """As the run's MLflow metric: percent, 2 decimals (:mod:`.tracking`)."""
    return round(float(value) * PERCENT, 2) if isinstance(value, (int, float)) else None


def _reading(name: str, figures: Mapping[str, Any]) -> MetricResult:
    groups = {
        str(key): GroupResult(n=int(group.get("n_scored") or 0), value=group.get("mean"))
        for key, group in (figures.get("by_category") or {}).items()
    }
    low, high = _ci(figures.get("overall_ci"))
    groups[OVERALL] = GroupResult(n=int(figures.get("n_scored") or 0),
                                  value=figures.get("overall"), ci_low=low, ci_high=high)
    unit = figures.get("interval_unit")
    return MetricResult(
        title=f"mean label score, {name} reading (correct 1, partial 0.5, wrong 0; 0-1)",
        unit="0-1", interval=f"95% {unit}-cluster bootstrap" if low is not None else None,
        groups=groups)


def _f1_metric(f1: Mapping[str, Any]) -> MetricResult:
    """The factual items' F1 (``scorer=both``): 0-1 per category and item-weighted overall."""
    groups = {str(cat): GroupResult(n=int(g.get("n") or 0), value=g.get("mean"))
              for cat, g in (f1.get("by_category") or {}).items()}
    groups[OVERALL] = GroupResult(n=int(f1.get("n_items") or 0),
                                  value=(f1.get("factual") or {}).get("item_weighted"))
    return MetricResult(title=f"{f1.get('title')} ({f1.get('version')}), factual items only "
                              "(Cognitive items have no gold answer)",
                        unit="0-1", interval=None, groups=groups)


def plus_run_log(summary: Mapping[str, Any]) -> RunLog:
    """The run log of a LoCoMo-Plus run (stored, judged or a judge dry run).

    Args:
        summary: the run's ``summary.json`` content, or a version-1 file's.

    Returns:
        :class:`RunLog`: one metric per reading (``ours``, ``authors``: 0-1 by category and
        ``overall``, the overall's 95% interval); headline ``<reading>/overall`` and
        ``<reading>/cognitive`` of the headline reading, percent as its MLflow metrics; the
        judge's spend for a judged run, the whole job's (the items', the audit's and the
        panel's calls and cost: :func:`~locomo_exp.benchmarks.plugin_trust.plugin_spend`;
        a dry run: its estimate, nothing counted).

    Raises:
        KeyError: when a section every LoCoMo-Plus summary has (``input``, ``readings``) is
            missing.
    """
    readings = summary["readings"]
    reading = str(summary.get("headline") or "ours")
    head = readings.get(reading) or {}
    verdicts = summary.get("verdicts") or {}
    judged = verdicts.get("source") in JUDGED_SOURCES
    judge = summary.get("judge") or {}
    low, high = _ci(head.get("overall_ci"))
    cog_low, cog_high = _ci(head.get("cognitive_ci"))
    headline = [
        Figure(name=f"{reading}/overall", value=_pct(head.get("overall")), unit="0-100",
               ci_low=_pct(low), ci_high=_pct(high), n=head.get("n_scored")),
        Figure(name=f"{reading}/cognitive", value=_pct(head.get("cognitive")), unit="0-100",
               ci_low=_pct(cog_low), ci_high=_pct(cog_high)),
    ]
    spend = None
    if judged and judge:
        dry = judge.get("dry_run")
        spend = plugin_spend([judge], judge.get("trust"),
                             status="dry run" if dry is not None else "ok",
                             dry_run_estimate=dry if isinstance(dry, Mapping) else None)
    inp = summary["input"]
    metrics = {name: _reading(name, figures) for name, figures in readings.items()}
    f1 = summary.get("f1")
    if f1:
        metrics[f"f1_{f1['variant']}"] = _f1_metric(f1)
    return RunLog(
        benchmark=NAME,
        title=TITLE,
        spec=RunSpec(
            scorer=("both" if f1 else "judge") if judged else "stored verdicts",
            judge_model=judge.get("model") if judged else None,
            judge_protocol=judge.get("protocol") if judged else None,
            judge_runs=judge.get("runs") if judged else None,
            parser=(summary.get("parser") or {}).get("name"),
        ),
        input=InputFile(path=str(inp["path"]), sha256=str(inp["sha256"]),
                        format=str(inp.get("layout")), records=int(inp.get("rows") or 0)),
        metrics=metrics,
        headline=headline,
        judge=spend,
        trust=trust_brief(judge.get("trust") if judged else None,
                          warnings=[str(w) for w in summary.get("warnings") or ()]),
        warnings=[str(w) for w in summary.get("warnings") or ()],
        status={"figures": str(head.get("status") or "not measured")},
    )


__all__ = ["plus_run_log"]
