"""Report sections on reproducing a file's authors: stored vs recomputed metrics, and runs."""

from __future__ import annotations

from locomo_exp.report.format import fmt_pct
from locomo_exp.results import RunSummary
from locomo_exp.scoring.specs import METRIC_TITLES, REPORTED_F1


def _value(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def render_stored_vs_recomputed(summary: RunSummary) -> str:
    """The "Stored vs recomputed" section: the file's own per-question metrics checked.

    Args:
        summary: the run summary (``stored_vs_recomputed``).

    Returns:
        Markdown: one row per stored field (best-matching recomputed metric, equal
        count, largest difference, equal count of every other metric), then the first
        differing questions; ``""`` when the file stores no per-question metric.
    """
    section = summary.stored_vs_recomputed
    if not section:
        return ""
    lines = [
        "## Stored vs recomputed per-question metrics",
        "",
        "The file carries its authors' per-question scores. Each is compared with every metric "
        "this run computed; equal means within the file's rounding (half a unit of its last "
        "decimal; 1e-9 for unrounded values). The best match is the variant the file used.",
        "",
        "| stored field | n | best match | equal | largest difference | other metrics (equal) |",
        "|---|---:|---|---:|---:|---|",
    ]
    for name, row in section.items():
        others = ", ".join(
            f"`{metric}` {stats['equal']}"
            for metric, stats in row["candidates"].items()
            if metric != row["best"]
        )
        rounding = "unrounded" if row["decimals"] is None else f"{row['decimals']} decimals"
        lines.append(
            f"| `{name}` ({rounding}, {row['scale']}) | {row['n']} | `{row['best']}` | "
            f"{row['equal']} / {row['n']} | {_value(row['max_difference'])} | {others} |"
        )
    for name, row in section.items():
        if row["first_differences"]:
            lines += [
                "",
                f"First questions where `{name}` differs from `{row['best']}`:",
                "",
                "| question | stored | recomputed |",
                "|---|---:|---:|",
            ]
            lines += [
                f"| {d['question_id']} | {_value(d['stored'])} | {_value(d['recomputed'])} |"
                for d in row["first_differences"]
            ]
    return "\n".join(lines)


def render_runs(summary: RunSummary) -> str:
    """Per-run F1 table for ``data.runs``: each run's mean, then mean ± sample std (percent).

    Args:
        summary: the run summary (``runs``).

    Returns:
        Markdown with the reported F1 per run and category; ``""`` without runs.
    """
    runs = summary.runs
    if not runs or not runs.get("lexical"):
        return ""
    n = int(runs["n_runs"])
    metric = REPORTED_F1 if REPORTED_F1 in runs["lexical"] else next(iter(runs["lexical"]))
    files = ", ".join(f"run {i + 1} `{name}`" for i, name in enumerate(runs["files"]))
    settings = all("#" in name for name in runs["files"])  # one file, one run per setting
    lines = [
        f"## Runs ({n} settings of one file, each scored as a run)"
        if settings
        else f"## Runs (data.runs: {n} files)",
        "",
        f"Each run file scored on its own ({files}); mean ± sample std (n − 1) across runs, "
        f"the form papers print. {METRIC_TITLES.get(metric, metric)}, percent; every lexical "
        "metric per run is in `summary.json` → `runs`. Stored J of each run file is in the "
        "stored verdicts section; this run's judge and the per-question sections score run 1.",
        "",
        "| category | " + " | ".join(f"run {i + 1}" for i in range(n)) + " | mean ± std |",
        "|---|" + "---:|" * n + "---:|",
    ]
    for key, row in runs["lexical"][metric].items():
        if row["mean"] is None or key not in summary.shown_groups:
            continue
        cells = " | ".join(fmt_pct(v) for v in row["per_run"])
        lines.append(
            f"| {summary.category_label(key)} | {cells} | {fmt_pct(row['mean'])} ± "
            f"{fmt_pct(row['std'])} |"
        )
    return "\n".join(lines)


def fidelity_sections(summary: RunSummary) -> list[str]:
    """Every non-empty section of this module, in report order."""
    return [s for s in (render_runs(summary), render_stored_vs_recomputed(summary)) if s]


__all__ = ["fidelity_sections", "render_runs", "render_stored_vs_recomputed"]
