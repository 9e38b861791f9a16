"""What a finished LongMemEval run prints: figures, where the outputs are, the MLflow run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from locomo_exp.benchmarks.longmemeval.report import console_table
from locomo_exp.benchmarks.longmemeval.summary import dry_run_of
from locomo_exp.results.words import counted

if TYPE_CHECKING:
    from locomo_exp.benchmarks.longmemeval.job import LmeRunResult


def console_text(result: LmeRunResult) -> str:
    """The console of a LongMemEval run, one string (the command line prints it).

    A line saying what was read and scored (or read, for a judge dry run), the headline
    table with the judge's checks' ``WARNING:`` lines (as in the report), where
    ``report.md`` is, and the MLflow run with how to open the UI on it.

    Args:
        result: the finished run (:func:`locomo_exp.benchmarks.longmemeval.job.run_longmemeval`).

    Returns:
        The text, starting with an empty line.
    """
    summary = result.summary
    counts = summary["input"]["counts"]
    verb = "read (judge dry run)" if dry_run_of(summary) else "scored"
    lines = [
        f"\nLongMemEval: {verb} {counted(counts['matched'], 'question')} from "
        f"{summary['input']['path']} ({counted(counts['skipped_ids'], 'id')} not in the "
        "reference skipped); accuracy in percent",
        console_table(summary),
        f"\nReport: {result.report_path}",
    ]
    if result.tracking_uri:
        from locomo_exp import tracking

        lines.append(
            f"MLflow: run {result.run_id} in experiment '{result.experiment}'.\n"
            f"{tracking.open_ui_hint(result.tracking_uri, result.experiment_id)}"
        )
    return "\n".join(lines)


__all__ = ["console_text"]
