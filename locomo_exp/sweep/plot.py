"""The sweep's plot: J and F1 overall against a numeric swept value (``sweep_plot.png``).

Drawn from ``sweep_summary.json``'s content (:mod:`.summary`) with each job's headline 95%
bootstrap interval and its verdict against the baseline job (:mod:`.vs_baseline`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from locomo_exp.report.run_dir import atomic_path
from locomo_exp.sweep.job_files import COMPLETED
from locomo_exp.sweep.vs_baseline import f1_unchanged_by


def numeric_axis(summary: dict[str, Any]) -> str | None:
    """The swept key when the sweep has exactly one swept key and all its values are numbers."""
    keys = summary["swept_keys"]
    if len(keys) != 1:
        return None
    for row in summary["rows"]:
        try:
            value = float(row["swept"].get(keys[0], "nan"))
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
    return str(keys[0])


VERDICT_MARKERS = {"higher": "^", "lower": "v", "not distinguishable": "o", "baseline": "s"}
"""Marker of each vs-baseline verdict on the sweep plot (filled when distinguishable)."""


def _verdict(row: dict[str, Any], column: str, baseline_job: Any) -> str | None:
    """``higher``/``lower``/``not distinguishable``/``baseline`` of one job, or ``None``."""
    if baseline_job is not None and row["job"] == baseline_job:
        return "baseline"
    cell = (row.get("vs_baseline") or {}).get(column) or {}
    verdict = cell.get("verdict")
    return {"A higher": "higher", "B higher": "lower"}.get(verdict, verdict) if verdict else None


def _series(
    done: list[tuple[float, dict[str, Any]]], baseline_job: Any, same_f1: bool = False
) -> list[tuple[str, list[tuple[float, float, list[float] | None, str | None]]]]:
    """(label, [(x, y, [low, high] or None, verdict)]) for J, stored J and F1 overall.

    ``same_f1``: F1 cannot depend on the swept key (a judge setting): no F1 series.
    """
    series = []
    j_points = [
        (x, r["j_overall"], r.get("j_ci"), _verdict(r, "j", baseline_job))
        for x, r in done
        if r["j_overall"] is not None
    ]
    if j_points:
        series.append(("J overall (0-100)", j_points))
    stored_points = [  # jobs our judge did not score: the input's stored verdicts, labelled
        (x, r["stored_j_overall"], None, _verdict(r, "stored_j", baseline_job))
        for x, r in done
        if r["j_overall"] is None and r.get("stored_j_overall") is not None
    ]
    if stored_points:
        series.append(("stored J overall (0-100, another judge's verdicts)", stored_points))
    f1_points = [
        (
            x,
            r["f1"]["overall"] * 100.0,
            [b * 100.0 for b in r["f1_ci"]] if r.get("f1_ci") else None,
            _verdict(r, "f1", baseline_job),
        )
        for x, r in done
        if r["f1"].get("overall") is not None
    ]
    if f1_points and not same_f1:
        series.append(("F1 overall (percent)", f1_points))
    return series


def plot_sweep(summary: dict[str, Any], path: Path) -> Path | None:
    """J and F1 overall against the swept value, with 95% intervals and verdicts vs the baseline.

    One numeric swept key only. Each point is a completed job: J overall (0-100; the
    input's stored J, labelled, for a job our judge did not score) and F1 overall
    (percent), with error bars from the job's own headline 95% bootstrap interval
    (``summary.json`` -> ``analysis``: conversations resampled when the questions carry
    conversation ids, else questions). The marker says
    how the job compares with the baseline job (``sweep.baseline``: conversation-cluster
    bootstrap and Holm-adjusted paired test, :mod:`.vs_baseline`): a square for the
    baseline, a filled up/down triangle for *higher*/*lower*, a hollow circle for *not
    distinguishable*, a small dot when not compared. Failed jobs are left out; F1 is left out
    when the swept key is a judge setting (:func:`~.vs_baseline.f1_unchanged_by`).

    Returns:
        ``path``, or ``None`` when there is no numeric axis or nothing to plot.
    """
    key = numeric_axis(summary)
    if key is None:
        return None
    done = sorted((float(r["swept"][key]), r) for r in summary["rows"] if r["status"] == COMPLETED)
    baseline_job = (summary.get("baseline") or {}).get("job")
    series = _series(done, baseline_job, f1_unchanged_by([key]) is not None)
    if not series:
        return None
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    figure = Figure(figsize=(8, 4.5))
    axis = figure.subplots()
    for index, (label, points) in enumerate(series):
        color = f"C{index}"
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        low = [p[1] - p[2][0] if p[2] else 0.0 for p in points]
        high = [p[2][1] - p[1] if p[2] else 0.0 for p in points]
        has_ci = any(low) or any(high)
        axis.errorbar(
            xs, ys, yerr=[low, high] if has_ci else None, color=color, capsize=4,
            label=label + (" with 95% interval" if has_ci else ""),
        )
        for x, y, _, verdict in points:
            marker = VERDICT_MARKERS.get(verdict or "", ".")
            hollow = verdict == "not distinguishable"
            axis.plot(
                [x], [y], marker=marker, markersize=9 if verdict else 5, color=color,
                markerfacecolor="white" if hollow else color, linestyle="none",
            )
            if verdict:
                axis.annotate(
                    verdict, (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8,
                    color=color,
                )
    axis.set_xlabel(key)
    axis.set_ylabel("score (0-100)")
    axis.margins(x=0.15)  # room for the verdict labels of the last value
    axis.set_title(summary["sweep"][:80], fontsize=10)
    axis.legend(fontsize=8, loc="best")
    axis.grid(alpha=0.3)
    figure.tight_layout()
    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=100, format="png")
    return path
