"""What the command line prints for a LoCoMo run: the figures, then where the outputs are.

The lines of the recorded job's :class:`~locomo_exp.benchmarks.steps.JobResult`
(``console``), which the command line prints for every benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def locomo_console(summary: Mapping[str, Any], answer_key: Mapping[str, Any] | None = None
                   ) -> list[str]:
    """The figures of a LoCoMo run, as printed before ``Report: ...``.

    Args:
        summary: the run's summary (:meth:`~locomo_exp.results.RunSummary.to_json`).
        answer_key: the run's errata section (``data.errata``), as built
            (:attr:`locomo_exp.report.locomo_run.LocomoRun.answer_key`), or ``None``.

    Returns:
        A blank line, what was scored (``Scored 20 questions from <file>``, or read by a
        judge-only dry run), the F1 variant, the input notes, the dry run's estimate, the
        per-category table and one ``WARNING:`` line per warning; a line may hold several
        (the table is one string).
    """
    from locomo_exp.report.console import console_table, dry_run_lines, input_notes
    from locomo_exp.results import RunSummary
    from locomo_exp.results.words import counted

    estimate = (summary.get("judge") or {}).get("dry_run_estimate")
    scored = "f1" in summary["versions"] or not estimate  # a judge-only dry run scores nothing
    verb = "Scored" if scored else "Read (judge dry run: nothing scored)"
    lines = ["", f"{verb} {counted(summary['counts']['overall'], 'question')} from "
                 f"{summary['input']['path']}"]
    if "f1" in summary["versions"]:
        lines.append(f"F1 = {summary['versions']['f1']}; scores in percent")
    lines += input_notes(summary, answer_key)  # as the report's header says
    if estimate:
        lines.append("\n".join(dry_run_lines(estimate, summary.get("judge"))))
    lines.append(console_table(summary))
    lines += [f"WARNING: {warning}" for warning in RunSummary.from_json(dict(summary)).warnings]
    return lines


__all__ = ["locomo_console"]
