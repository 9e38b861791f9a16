"""What a finished LongMemEval run prints before where its outputs are: what was read, figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.longmemeval.report import console_table
from locomo_exp.benchmarks.longmemeval.summary import dry_run_of
from locomo_exp.results.words import counted


def console_lines(summary: Mapping[str, Any]) -> list[str]:
    """The console of a LongMemEval run, before the pipeline's ``Report:`` and MLflow lines.

    An empty line, a line saying what was read and scored (or read, for a judge dry run),
    then the headline table with the judge's checks' ``WARNING:`` lines (as in the report).

    Args:
        summary: the run's ``summary.json`` content.

    Returns:
        The lines (the table is one multi-line string).
    """
    counts = summary["input"]["counts"]
    verb = "read (judge dry run)" if dry_run_of(summary) else "scored"
    return [
        "",
        f"LongMemEval: {verb} {counted(counts['matched'], 'question')} from "
        f"{summary['input']['path']} ({counted(counts['skipped_ids'], 'id')} not in the "
        "reference skipped); accuracy in percent",
        console_table(summary),
    ]


__all__ = ["console_lines"]
