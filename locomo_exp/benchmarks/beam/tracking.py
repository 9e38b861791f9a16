"""What a BEAM run logs to MLflow: params, metrics and tags from ``summary.json`` (pure).

Metric names: ``beam-nugget/pass_rate/<ability or overall>`` (percent),
``beam-nugget/avg_score/<...>`` (0-1), ``beam-official/score/<ability>`` (0-1) and
``beam-official/mean_of_abilities`` (0-1; not the authors' figure); a judged run's audit
under LoCoMo's audit names (percent): ``audit/false_accept_rate``,
``audit/false_reject_rate`` (+ ``_ci_low``, ``_ci_high``), ``audit/<kind>/error_rate``,
``audit/<kind>/n``, ``audit/gate_passed`` (100 passed, 0 failed or not measured; absent
when no limit is set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp import __version__
from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import NAME


def run_params(summary: Mapping[str, Any]) -> dict[str, str]:
    """The run's params: benchmark, profiles with versions, input, stored judge, intervals."""
    inp = summary["input"]
    params = {
        "benchmark": NAME,
        "data.file": inp["path"].rsplit("/", 1)[-1],
        "data.sha256": inp["sha256"],
        "data.layout": inp["layout"],
        "data.setting": str(inp["setting"]),
        "verdicts": summary["verdicts"]["source"],
        "verdicts.judge_model": str(summary["verdicts"]["judge_model"]),
        "report.bootstrap_samples": str(summary["intervals"]["samples"]),
        "report.seed": str(summary["intervals"]["seed"]),
    }
    for name, info in summary["profiles"].items():
        params[f"profile.{name}.version"] = str(info["version"])
    return params


def run_metrics(summary: Mapping[str, Any]) -> dict[str, float]:
    """Every figure of both profiles as MLflow metrics (``None`` figures left out)."""
    metrics: dict[str, float] = {}
    nugget = summary["figures"].get(p.NUGGET)
    if nugget:
        blocks = {**nugget["abilities"], "overall": nugget["overall"]}
        for key, b in blocks.items():
            for figure in ("pass_rate", "avg_score"):
                if b[figure] is not None:
                    metrics[f"{p.NUGGET}/{figure}/{key}"] = float(b[figure])
    official = summary["figures"].get(p.OFFICIAL)
    if official:
        for key, b in official["abilities"].items():
            if b["score"] is not None:
                metrics[f"{p.OFFICIAL}/score/{key}"] = float(b["score"])
        if official["mean_of_abilities"] is not None:
            metrics[f"{p.OFFICIAL}/mean_of_abilities"] = float(official["mean_of_abilities"])
    return {**metrics, **audit_metrics((summary.get("judge") or {}).get("audit"))}


def _put_rate(out: dict[str, float], name: str, block: Mapping[str, Any]) -> None:
    if block.get("rate") is None:
        return
    out[name] = 100 * float(block["rate"])
    for bound in ("ci_low", "ci_high"):
        if block.get(bound) is not None:
            out[f"{name}_{bound}"] = 100 * float(block[bound])


def audit_metrics(audit: Mapping[str, Any] | None) -> dict[str, float]:
    """The audit block's MLflow metrics (rates as percent), ``{}`` without controls.

    Args:
        audit: the ``judge.audit`` block of ``summary.json`` (:func:`.audit.audit_section`).
    """
    if not audit or not audit.get("kinds"):
        return {}
    out: dict[str, float] = {}
    for kind, row in audit["kinds"].items():
        out[f"audit/{kind}/n"] = float(row["n"])
        _put_rate(out, f"audit/{kind}/error_rate", row)
    _put_rate(out, "audit/false_accept_rate", audit["false_accept"])
    _put_rate(out, "audit/false_reject_rate", audit["false_reject"])
    state = (audit.get("gate") or {}).get("state")
    if state not in (None, "not set"):
        out["audit/gate_passed"] = 100.0 if state == "passed" else 0.0
    return out


def run_tags(summary: Mapping[str, Any]) -> dict[str, str]:
    """Tags: the tool's version, the benchmark, the headline profile."""
    return {
        "locomo_exp.version": __version__,
        "benchmark": NAME,
        "profile": p.NUGGET if summary["figures"] else "none",
    }


__all__ = ["audit_metrics", "run_metrics", "run_params", "run_tags"]
