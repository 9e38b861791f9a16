"""A sweep's summary: one row per job, rendered as ``sweep_summary.json``/``.md`` and a plot.

Pure functions from job records and their ``summary.json`` to data and markdown (the
plot writes a PNG). F1 is read on its 0-1 scale from ``summary.json`` and shown in
percent; J is 0-100; cost in US dollars; wall time in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_IDS
from locomo_exp.benchmarks.registry import sweep_plugin_for_rows, sweep_row_fields
from locomo_exp.config.secrets import redact_uri
from locomo_exp.results.analysis import headline_intervals_json
from locomo_exp.results.checks_read import run_warnings, status_with_warnings
from locomo_exp.results.words import paid_words
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS
from locomo_exp.sweep.flips import flip_lines
from locomo_exp.sweep.job_files import (
    COMPLETED,
    FAILED,
    INTERRUPTED,
    NOT_RUN,
    PENDING,
    JobRecord,
    SweepContext,
)
from locomo_exp.sweep.log_rows import job_run_log, log_row_fields
from locomo_exp.sweep.plan import job_label
from locomo_exp.sweep.vs_baseline import f1_unchanged_by, vs_baseline_cells

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
        ``job, status, swept, run_name, run_id, output_dir, error, wall_time_s``,
        ``warnings`` (the job's judge-check warnings, as its own report's "Run status:
        WARNING" lists them: J inflated, J deflated, ...; ``[]`` when none) and
        ``run_status`` (``status`` with the warnings' heads, ``COMPLETED — WARNING: J
        inflated``; ``status`` alone when there is no warning) and, for
        a completed job, ``n_questions``, ``f1`` (key -> mean, 0-1, keys ``"1"``..``"5"``,
        ``overall_1_4``, ``overall``), ``f1_variant``, ``j_overall`` and
        ``j_std_across_runs`` (0-100), ``j`` (category key -> mean, 0-100),
        ``stored_j_overall`` (the input's stored verdicts, 0-100, over categories 1-4 when
        present), ``f1_ci`` (0-1) and ``j_ci`` (0-100): the job's headline 95% bootstrap
        interval of F1 and J overall (``[low, high]`` or ``None``; ``ci_unit``:
        ``conversation`` for the cluster bootstrap, ``question`` without conversation ids),
        ``parse_failures``, ``api_errors``, ``input_tokens``, ``output_tokens``,
        ``estimated_cost_usd`` (this run's calls) and ``input_tokens_in_all``,
        ``output_tokens_in_all``, ``cost_in_all_usd`` (with the calls answered from the
        judge cache, at their stored usage: a resumed job's whole work), and
        ``dry_run_estimate`` (the judge's dry-run estimate: calls, tokens, cost with the
        audit's, when ``judge.dry_run`` was set; then ``parse_failures`` and ``api_errors``
        are ``None``: not measured). Missing values are ``None``. ``paid``: a job that
        failed after paying (the record's ``paid``: calls, tokens, USD); its tokens and cost
        fill the row's and its ``run_status`` counts the calls (``FAILED after 18 paid
        calls``).
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
        "input_tokens_in_all": None,
        "output_tokens_in_all": None,
        "cost_in_all_usd": None,
        "dry_run_estimate": None,
        "warnings": [],
        "run_status": record.status,
        "paid": record.paid,
    }
    if summary is None:
        if record.paid:  # a job that failed after paying: its cost, never "—"
            row["input_tokens"] = row["input_tokens_in_all"] = record.paid.get("input_tokens")
            row["output_tokens"] = row["output_tokens_in_all"] = record.paid.get("output_tokens")
            row["estimated_cost_usd"] = row["cost_in_all_usd"] = record.paid.get("cost_usd")
            row["run_status"] = f"{record.status} after {record.paid.get('calls')} paid calls"
        return row
    row["warnings"] = run_warnings(summary)
    row["run_status"] = status_with_warnings(record.status, row["warnings"])
    row["dry_run_estimate"] = (summary.get("judge") or {}).get("dry_run_estimate")
    plugin_fields = sweep_row_fields(summary)  # a benchmark plug-in's run: its own figures
    if plugin_fields is not None:
        row.update(plugin_fields)
        try:  # what every benchmark shares: headlines, judge spend (docs/run_log.md)
            row.update(log_row_fields(job_run_log(record.output_dir, summary)))
        except ValueError as error:
            row["error"] = str(error)
        return row
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
        if row["dry_run_estimate"] is None:  # a dry run made no call: nothing to count
            row["parse_failures"] = counts.get("parse_failure")
            row["api_errors"] = counts.get("api_error")
        row["input_tokens"] = tokens.get("input")
        row["output_tokens"] = tokens.get("output")
        # in all: with the calls answered from the cache (a resumed job), at their stored usage
        row["input_tokens_in_all"] = (tokens.get("input") or 0) + (tokens.get("cached_input") or 0)
        row["output_tokens_in_all"] = (
            (tokens.get("output") or 0) + (tokens.get("cached_output") or 0)
        )
        # one cost everywhere: answers + audit + panel, calls actually paid
        trust = judge.get("trust") or {}
        row["estimated_cost_usd"] = trust.get("total_cost_usd", judge.get("estimated_cost_usd"))
        row["cost_in_all_usd"] = trust.get(
            "total_cost_including_cached_usd", judge.get("estimated_cost_usd_including_cached")
        )
    return row


def build_sweep_summary(context: SweepContext, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The content of ``sweep_summary.json``.

    Args:
        context: the sweep's context.
        rows: :func:`summary_row` per job, in job order.

    Returns:
        Sweep identity (name, dir, parent run, store, experiment, swept keys), ``n_jobs``,
        ``n_failed``, ``failed_jobs`` (job, swept values, error, and ``paid`` when it paid),
        ``n_pending``,
        ``pending_jobs``, ``n_interrupted`` and ``n_not_run`` (an interrupted sweep),
        ``n_warned`` and ``warned_jobs`` (job, swept values, warnings: the jobs whose J
        their own report flags), ``scales`` and ``rows``.
    """
    failed = [r for r in rows if r["status"] == FAILED]
    pending = [r for r in rows if r["status"] == PENDING]
    stopped = [r for r in rows if r["status"] in (INTERRUPTED, NOT_RUN)]
    warned = [r for r in rows if r.get("warnings")]
    return {
        "sweep": context.name,
        "sweep_dir": context.sweep_dir,
        "swept_keys": context.swept_keys,
        "swept_overrides": context.swept_overrides,
        "parent_run_id": context.parent_run_id,
        "tracking_uri": context.tracking_uri and redact_uri(context.tracking_uri),
        "experiment": context.experiment,
        "n_jobs": len(rows),
        "n_failed": len(failed),
        "failed_jobs": [
            {"job": r["job"], "swept": r["swept"], "error": r["error"],
             **({"paid": r["paid"]} if r.get("paid") else {})}  # what it paid, when known
            for r in failed
        ],
        "n_pending": len(pending),
        "pending_jobs": [{"job": r["job"], "swept": r["swept"]} for r in pending],
        "n_interrupted": sum(r["status"] == INTERRUPTED for r in stopped),
        "n_not_run": sum(r["status"] == NOT_RUN for r in stopped),
        "n_warned": len(warned),
        "warned_jobs": [
            {"job": r["job"], "swept": r["swept"], "warnings": r["warnings"]} for r in warned
        ],
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


def _resumed(row: dict[str, Any]) -> bool:
    """Whether a row's judge read calls from the cache (its in-all figures differ)."""
    return any(
        row.get(in_all) not in (None, row.get(now))
        for now, in_all in (("input_tokens", "input_tokens_in_all"),
                            ("estimated_cost_usd", "cost_in_all_usd"))
    )


def _has_f1(row: dict[str, Any]) -> bool:
    return row["f1"].get("overall") is not None


def _has_j(row: dict[str, Any]) -> bool:
    return row.get("j_overall") is not None or row.get("stored_j_overall") is not None


def _missing(
    name: str,
    row: dict[str, Any],
    base: dict[str, Any],
    has: Callable[[dict[str, Any]], bool],
) -> str:
    """Why one metric was not compared: which of the two jobs lacks it."""
    if isinstance(row.get("dry_run_estimate"), dict) and name == "J":
        return "J not measured (dry run: no judge call was made)"
    here, there = has(row), has(base)
    if not here and not there:
        return f"no {name} in either job"
    return f"no {name} in job {row['job'] if not here else base.get('job')}"


def _vs_baseline_gaps(
    rows: list[dict[str, Any]], base: dict[str, Any], same_f1: str | None = None
) -> list[str]:
    """Why a job's vs-baseline cells are "—", one line per job (none when all compared).

    ``same_f1`` (:func:`~.vs_baseline.f1_unchanged_by`) is said once, not per job.
    """
    gaps = [f"- F1 not compared: {same_f1} (only judge settings are swept)"] if same_f1 else []
    base_row = next((r for r in rows if r["job"] == base.get("job")), base)
    for r in rows:
        if r["job"] == base.get("job"):
            continue
        vs = r.get("vs_baseline") or {}
        if r["status"] != COMPLETED:
            why = f"the job did not complete ({r['status']})"
        elif vs.get("error"):
            why = f"the comparison was refused: {vs['error']}"
        else:
            checks: dict[str, tuple[bool, Callable[[dict[str, Any]], bool]]] = {}
            if not same_f1:
                checks["F1"] = ("f1" in vs, _has_f1)
            checks["J"] = ("j" in vs or "stored_j" in vs, _has_j)
            missing = [
                _missing(name, r, base_row, has)
                for name, (compared, has) in checks.items()
                if not compared
            ]
            if not missing:
                continue
            why = "; ".join(missing)
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
    if summary.get("n_warned"):
        lines.append(
            f"- **Warning: the J of {summary['n_warned']} of {summary['n_jobs']} job(s) is "
            "flagged by the job's own judge checks (status column; listed under the table, as "
            "each job's report.md opens with them).**"
        )
    if summary.get("parent_run_id"):
        lines.append(
            f"- MLflow: parent run `{summary['parent_run_id']}` in experiment "
            f"`{summary['experiment']}` of `{summary['tracking_uri']}`"
        )
    plugin = sweep_plugin_for_rows(rows)  # a benchmark plug-in's sweep: its own figures
    if plugin is not None:
        table = plugin.sweep_table(summary, _spending_cells)
        return "\n".join([*lines, *table, *flip_lines(rows), *_tail_lines(summary)]) + "\n"
    f1_text = (
        f"F1 in percent ({', '.join(variants)} variant{'s' if len(variants) > 1 else ''})"
        if variants
        else "F1 not measured (no job scored F1)"
    )
    with_std = any(r["j_std_across_runs"] is not None for r in rows)  # judge.runs > 1
    lines.append(
        f"- {f1_text}; J on 0-100"
        + (", mean ± standard deviation of the overall J across runs" if with_std else "")
    )
    if any(isinstance(r.get("dry_run_estimate"), dict) for r in rows):
        lines.append(
            "- dry run (judge.dry_run=true): no judge call was made and no J exists; parse "
            "failures, API errors and J comparisons are not measured (—); `~` marks "
            "the dry run's estimates (tokens and cost of the same calls: the answers', the "
            "audit's and the panel's)"
        )
    if any(_resumed(r) for r in rows):
        lines.append(
            "- tokens and cost: this run's calls; \"(in all N)\" adds the calls answered from "
            "the judge cache (a resumed job), at the usage stored with their replies"
        )
    same_f1 = f1_unchanged_by(list(keys))
    if same_f1 and variants:
        lines.append(f"- {same_f1}: every job has the same F1 (no F1 comparison or plot)")
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
        "J ± std" if with_std else "J",
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
    if compared or base.get("label") is not None:
        lines += _vs_baseline_gaps(rows, base, same_f1)
    lines += flip_lines(rows)
    warned = [(r["job"], w) for r in rows for w in r.get("vs_baseline_warnings") or ()]
    if warned:  # as mode=compare prints them: the table's numbers need them
        lines += ["", "Warnings of the comparisons with the baseline job (as `mode=compare` "
                  "prints them; vs_baseline/<job>/compare.md):", ""]
        lines += [f"- job {job}: ⚠ {warning}" for job, warning in warned]
    return "\n".join(lines + _tail_lines(summary)) + "\n"


def _tail_lines(summary: dict[str, Any]) -> list[str]:
    """The jobs with judge-check warnings and the failed jobs, under the table."""
    lines: list[str] = []
    if summary.get("warned_jobs"):
        lines += ["", "## Jobs with judge-check warnings", ""]
        for warned_job in summary["warned_jobs"]:
            label = job_label(warned_job["swept"])
            lines += [f"- job {warned_job['job']} ({label}): ⚠ {w}" for w in warned_job["warnings"]]
    if summary["failed_jobs"]:
        lines += ["", "## Failed jobs", ""]
        for failed in summary["failed_jobs"]:
            label = job_label(failed["swept"])
            error_text = (failed["error"] or "no error recorded").replace("\n", "\n  ")
            paid = f" ({paid_words(failed['paid'])})" if failed.get("paid") else ""
            lines.append(f"- job {failed['job']} ({label}){paid}: {error_text}")
    return lines


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
    estimates instead (``~`` before each; tokens and cost of the same calls, the answers'
    with the audit's and the panel's) and its status says ``(dry run)``, so a job that was
    only counted never reads as free.
    """
    estimate = row.get("dry_run_estimate")
    if not isinstance(estimate, dict):
        cells = []
        for now, in_all, fmt in (
            ("input_tokens", "input_tokens_in_all", "d"),
            ("output_tokens", "output_tokens_in_all", "d"),
            ("estimated_cost_usd", "cost_in_all_usd", ".4f"),
        ):
            text, all_text = cell(row[now], fmt), cell(row.get(in_all), fmt)
            if row.get("paid") and row[now] is None:  # paid, but the figure is unknown
                text = all_text = "unknown"
            differs = row.get(in_all) is not None and all_text != text
            cells.append(f"{text} (in all {all_text})" if differs else text)
        return row.get("run_status") or row["status"], cells[:2], cells[2]
    # tokens and cost of the same calls: the answers' with the audit's and the panel's
    # (estimates written before the totals had only the answers' tokens: cost likewise)
    total = "total_estimated_input_tokens" in estimate
    prefix = "total_" if total else ""
    cost = estimate.get(f"{prefix}estimated_cost_usd")
    tokens = [
        "~" + cell(estimate.get(f"{prefix}estimated_input_tokens"), "d"),
        "~" + cell(estimate.get(f"{prefix}estimated_output_tokens"), "d"),
    ]
    return f"{row.get('run_status') or row['status']} (dry run)", tokens, "~" + cell(cost, ".4f")
