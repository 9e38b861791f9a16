"""A sweep's summary: one row per job, rendered as ``sweep_summary.json``/``.md`` and a plot.

Pure functions from job records and their ``summary.json`` to data and markdown (the
plot writes a PNG). F1 is read on its 0-1 scale from ``summary.json`` and shown in
percent; J is 0-100; cost in US dollars; wall time in seconds.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_IDS
from locomo_exp.report.run_dir import atomic_path
from locomo_exp.results.analysis import headline_intervals_json
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS
from locomo_exp.sweep.job_files import (
    COMPLETED,
    FAILED,
    INTERRUPTED,
    NOT_RUN,
    PENDING,
    JobRecord,
    SweepContext,
)
from locomo_exp.sweep.plan import job_label
from locomo_exp.sweep.vs_baseline import vs_baseline_cells

SUMMARY_JSON = "sweep_summary.json"
SUMMARY_MD = "sweep_summary.md"
SUMMARY_PLOT = "sweep_plot.png"
_VS_HEADER = ["F1 Δ vs base", "F1 95% CI", "F1 verdict", "J Δ vs base", "J 95% CI", "J verdict"]


def _mean(by_key: dict[str, Any], key: str) -> float | None:
    value = (by_key.get(key) or {}).get("mean")
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _interval(by_key: Any) -> list[float] | None:
    """The ``overall`` ``[low, high]`` of one bootstrap entry, when both bounds are finite."""
    bounds = (by_key or {}).get("overall") if isinstance(by_key, dict) else None
    if not bounds or len(bounds) != 2:
        return None
    low, high = bounds
    ok = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (low, high))
    return [float(low), float(high)] if ok else None


def summary_row(record: JobRecord, summary: dict[str, Any] | None) -> dict[str, Any]:
    """One row of the sweep summary from a job's record and its ``summary.json``.

    Args:
        record: the job's record.
        summary: the job's ``summary.json`` (``None`` for a failed job).

    Returns:
        ``job, status, swept, run_name, run_id, output_dir, error, wall_time_s`` and, for
        a completed job, ``n_questions``, ``f1`` (key -> mean, 0-1, keys ``"1"``..``"5"``,
        ``overall_1_4``, ``overall``), ``f1_variant``, ``j_overall`` and
        ``j_std_across_runs`` (0-100), ``j`` (category key -> mean, 0-100),
        ``stored_j_overall`` (the input's stored verdicts, 0-100, over categories 1-4 when
        present), ``f1_ci`` (0-1) and ``j_ci`` (0-100): the job's headline 95% bootstrap
        interval of F1 and J overall (``[low, high]`` or ``None``; ``ci_unit``:
        ``conversation`` for the cluster bootstrap, ``question`` without conversation ids),
        ``parse_failures``, ``api_errors``, ``input_tokens``, ``output_tokens``,
        ``estimated_cost_usd``, and ``dry_run_estimate`` (the judge's dry-run estimate:
        calls, tokens, cost with the audit's, when ``judge.dry_run`` was set). Missing values
        are ``None``.
    """
    row: dict[str, Any] = {
        "job": record.job,
        "status": record.status,
        "swept": dict(record.swept),
        "run_name": record.run_name,
        "run_id": record.run_id,
        "output_dir": record.output_dir,
        "error": record.error,
        "wall_time_s": record.wall_time_s,
        "n_questions": None,
        "f1_variant": None,
        "f1": {},
        "j_overall": None,
        "j_std_across_runs": None,
        "j": {},
        "stored_j_overall": None,
        "f1_ci": None,
        "j_ci": None,
        "ci_unit": None,
        "parse_failures": None,
        "api_errors": None,
        "input_tokens": None,
        "output_tokens": None,
        "estimated_cost_usd": None,
        "dry_run_estimate": None,
    }
    if summary is None:
        return row
    row["dry_run_estimate"] = (summary.get("judge") or {}).get("dry_run_estimate")
    row["ci_unit"], bootstrap = headline_intervals_json(summary.get("analysis"))
    row["f1_ci"] = _interval(bootstrap.get("f1"))
    row["j_ci"] = _interval(bootstrap.get("j_mean"))
    row["n_questions"] = (summary.get("counts") or {}).get("overall")
    f1 = (summary.get("metrics") or {}).get("f1") or {}
    row["f1"] = {key: _mean(f1, key) for key in f1}
    row["f1_variant"] = record.f1_variant if f1 else None
    stored = summary.get("stored_judge") or {}
    if stored:  # another judge's verdicts in the input (0-100), over the judged categories
        key = "overall_1_4" if "overall_1_4" in stored else "overall"
        row["stored_j_overall"] = _mean(stored, key)
    judge = summary.get("judge") or {}
    j = judge.get("j") or {}
    if j:
        overall = j.get("overall") or {}
        row["j_overall"] = _mean(j, "overall")
        std = overall.get("std_across_runs")
        row["j_std_across_runs"] = float(std) if isinstance(std, (int, float)) else None
        row["j"] = {key: _mean(j, key) for key in j}
    if judge:
        counts = judge.get("counts") or {}
        tokens = judge.get("tokens") or {}
        row["parse_failures"] = counts.get("parse_failure")
        row["api_errors"] = counts.get("api_error")
        row["input_tokens"] = tokens.get("input")
        row["output_tokens"] = tokens.get("output")
        # one cost everywhere: answers + audit + panel, calls actually paid
        trust = judge.get("trust") or {}
        row["estimated_cost_usd"] = trust.get("total_cost_usd", judge.get("estimated_cost_usd"))
    return row


def build_sweep_summary(context: SweepContext, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The content of ``sweep_summary.json``.

    Args:
        context: the sweep's context.
        rows: :func:`summary_row` per job, in job order.

    Returns:
        Sweep identity (name, dir, parent run, store, experiment, swept keys), ``n_jobs``,
        ``n_failed``, ``failed_jobs`` (job, swept values, error), ``n_pending``,
        ``pending_jobs``, ``n_interrupted`` and ``n_not_run`` (an interrupted sweep),
        ``scales`` and ``rows``.
    """
    failed = [r for r in rows if r["status"] == FAILED]
    pending = [r for r in rows if r["status"] == PENDING]
    stopped = [r for r in rows if r["status"] in (INTERRUPTED, NOT_RUN)]
    return {
        "sweep": context.name,
        "sweep_dir": context.sweep_dir,
        "swept_keys": context.swept_keys,
        "swept_overrides": context.swept_overrides,
        "parent_run_id": context.parent_run_id,
        "tracking_uri": context.tracking_uri,
        "experiment": context.experiment,
        "n_jobs": len(rows),
        "n_failed": len(failed),
        "failed_jobs": [
            {"job": r["job"], "swept": r["swept"], "error": r["error"]} for r in failed
        ],
        "n_pending": len(pending),
        "pending_jobs": [{"job": r["job"], "swept": r["swept"]} for r in pending],
        "n_interrupted": sum(r["status"] == INTERRUPTED for r in stopped),
        "n_not_run": sum(r["status"] == NOT_RUN for r in stopped),
        "scales": {"f1": "0-1", "j": "0-100", "wall_time_s": "seconds", "cost": "USD"},
        "rows": rows,
    }


def cell(value: Any, fmt: str = ".2f", scale: float = 1.0) -> str:
    """A table cell: ``—`` for ``None``, numbers times ``scale`` in ``fmt``, ``|`` escaped."""
    if value is None:
        return "—"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if fmt == "d":
            return str(round(value * scale))
        return format(value * scale, fmt)
    return str(value).replace("|", "\\|")


def _vs_baseline_gaps(rows: list[dict[str, Any]], base: dict[str, Any]) -> list[str]:
    """Why a job's vs-baseline cells are "—", one line per job (none when all compared)."""
    gaps = []
    for r in rows:
        if r["job"] == base.get("job"):
            continue
        vs = r.get("vs_baseline") or {}
        if r["status"] != COMPLETED:
            why = f"the job did not complete ({r['status']})"
        elif vs.get("error"):
            why = f"the comparison was refused: {vs['error']}"
        elif not vs:
            why = "no metric both jobs carry"
        else:
            has = {"F1": "f1" in vs, "J": "j" in vs or "stored_j" in vs}
            missing = [name for name, present in has.items() if not present]
            if not missing:
                continue
            why = "no " + " and no ".join(missing) + " in both jobs"
        gaps.append(f"- job {r['job']}: — vs baseline: {why}")
    return ["", *gaps] if gaps else []


def render_sweep_summary(summary: dict[str, Any]) -> str:
    """``sweep_summary.md``: one row per job, then the failed jobs with their errors.

    F1 is shown in percent (variant in the heading), J on 0-100 as mean ± the standard
    deviation across runs, cost in US dollars, wall time in seconds.
    """
    rows = summary["rows"]
    keys = summary["swept_keys"]
    categories = [str(c) for c in CATEGORY_IDS]
    variants = sorted({r["f1_variant"] for r in rows if r["f1_variant"]})
    lines = [
        f"# Sweep: {summary['sweep']}",
        "",
        f"- sweep dir: `{summary['sweep_dir']}`",
        f"- jobs: {summary['n_jobs']} ({summary['n_failed']} failed"
        + (f", {summary['n_pending']} with judge batches still processing: run the same "
           "command again to collect" if summary.get("n_pending") else "")
        + _stopped_text(summary)
        + ")",
    ]
    if summary.get("parent_run_id"):
        lines.append(
            f"- MLflow: parent run `{summary['parent_run_id']}` in experiment "
            f"`{summary['experiment']}` of `{summary['tracking_uri']}`"
        )
    f1_text = (
        f"F1 in percent ({', '.join(variants)} variant{'s' if len(variants) > 1 else ''})"
        if variants
        else "F1 not measured (no job scored F1)"
    )
    lines.append(
        f"- {f1_text}; J on 0-100, mean ± standard deviation of the overall J across runs"
    )
    if any(isinstance(r.get("dry_run_estimate"), dict) for r in rows):
        lines.append(
            "- dry run (judge.dry_run=true): no judge call was made and no J exists; `~` marks "
            "the dry run's estimates (tokens of the answer calls, cost with the audit's calls)"
        )
    compared = any(r.get("vs_baseline") for r in rows)
    base = summary.get("baseline") or {}
    if base.get("error"):
        lines.append(f"- vs baseline: not compared ({base['error']})")
    elif base.get("label") is not None:
        lines.append(
            f"- vs baseline: each job minus job {base['job']} ({base['label']}), points; 95% "
            f"interval from a cluster bootstrap over conversations (with at least "
            f"{MIN_RUN_CLUSTERS} conversations; with fewer, the question-level paired interval, "
            "marked (questions)); verdict higher/lower when the "
            "Holm-adjusted paired test is below 0.05 and the interval excludes 0 (compare.md in "
            "vs_baseline/<job>/)"
        )
        if base.get("method"):
            lines.append(f"- method (as `mode=compare` of the two runs): {base['method']}")
    lines.append("")
    header = [
        "job",
        *keys,
        "status",
        "F1 overall",
        *(f"F1 c{c}" for c in categories),
        "J ± std",
        *(_VS_HEADER if compared else []),
        "parse failures",
        "API errors",
        "input tokens",
        "output tokens",
        "cost $",
        "wall s",
    ]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for r in rows:
        j = "—"
        if r["j_overall"] is not None:
            j = f"{r['j_overall']:.2f}"
            if r["j_std_across_runs"] is not None:
                j += f" ± {r['j_std_across_runs']:.2f}"
        elif r.get("stored_j_overall") is not None:
            j = f"{r['stored_j_overall']:.2f} (stored)"
        vs: list[str] = []
        if compared:
            if base.get("job") == r["job"]:
                vs = ["baseline", "", "", "baseline", "", ""]
            else:
                j_column = "j" if (r.get("vs_baseline") or {}).get("j") else "stored_j"
                vs = vs_baseline_cells(r, "f1") + vs_baseline_cells(r, j_column)
        status, tokens, cost = _spending_cells(r)
        cells = [
            str(r["job"]),
            *(cell(r["swept"].get(key)) for key in keys),
            status,
            cell(r["f1"].get("overall"), scale=100.0),
            *(cell(r["f1"].get(c), scale=100.0) for c in categories),
            j,
            *vs,
            cell(r["parse_failures"], "d"),
            cell(r["api_errors"], "d"),
            *tokens,
            cost,
            cell(r["wall_time_s"], ".1f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += _vs_baseline_gaps(rows, base) if compared or base.get("label") is not None else []
    if summary["failed_jobs"]:
        lines += ["", "## Failed jobs", ""]
        for failed in summary["failed_jobs"]:
            label = job_label(failed["swept"])
            error_text = (failed["error"] or "no error recorded").replace("\n", "\n  ")
            lines.append(f"- job {failed['job']} ({label}): {error_text}")
    return "\n".join(lines) + "\n"


def _stopped_text(summary: dict[str, Any]) -> str:
    """``, 1 interrupted, 1 not run: ...`` for an interrupted sweep; empty otherwise."""
    parts = [
        f"{summary[key]} {word}"
        for key, word in (("n_interrupted", "interrupted"), ("n_not_run", "not run"))
        if summary.get(key)
    ]
    if not parts:
        return ""
    return ", " + ", ".join(parts) + ": the sweep was interrupted; run the same command to resume"


def _spending_cells(row: dict[str, Any]) -> tuple[str, list[str], str]:
    """Status, token and cost cells of a row; a dry run shows its estimates, marked.

    A dry run makes no call, so its tokens and cost are 0; the row shows the dry run's
    estimates instead (``~`` before each, the cost with the audit's calls) and its status
    says ``(dry run)``, so a job that was only counted never reads as free.
    """
    estimate = row.get("dry_run_estimate")
    if not isinstance(estimate, dict):
        tokens = [cell(row["input_tokens"], "d"), cell(row["output_tokens"], "d")]
        return row["status"], tokens, cell(row["estimated_cost_usd"], ".4f")
    cost = estimate.get("total_estimated_cost_usd", estimate.get("estimated_cost_usd"))
    tokens = [
        "~" + cell(estimate.get("estimated_input_tokens"), "d"),
        "~" + cell(estimate.get("estimated_output_tokens"), "d"),
    ]
    return f"{row['status']} (dry run)", tokens, "~" + cell(cost, ".4f")


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
    done: list[tuple[float, dict[str, Any]]], baseline_job: Any
) -> list[tuple[str, list[tuple[float, float, list[float] | None, str | None]]]]:
    """(label, [(x, y, [low, high] or None, verdict)]) for J, stored J and F1 overall."""
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
    if f1_points:
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
    distinguishable*, a small dot when not compared. Failed jobs are left out.

    Returns:
        ``path``, or ``None`` when there is no numeric axis or nothing to plot.
    """
    key = numeric_axis(summary)
    if key is None:
        return None
    done = sorted((float(r["swept"][key]), r) for r in summary["rows"] if r["status"] == COMPLETED)
    baseline_job = (summary.get("baseline") or {}).get("job")
    series = _series(done, baseline_job)
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
