"""A sweep row's cells every benchmark shares, read from the job's typed run log.

The headline figures (the sweep parent's MLflow metrics, named as each job's run names
them) and the judge's spend (counts, tokens, US dollars) come from the
:class:`~locomo_exp.results.run_log.RunLog` of the job's ``summary.json``
(:func:`locomo_exp.benchmarks.registry.run_log_of`), never from a benchmark's own keys.
Copies, computes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from locomo_exp.results.run_log import RunLog

SPEND_CELLS = {
    "parse_failures": "parse_failures",
    "api_errors": "api_errors",
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "input_tokens_in_all": "input_tokens_in_all",
    "output_tokens_in_all": "output_tokens_in_all",
    "estimated_cost_usd": "cost_usd",
    "cost_in_all_usd": "cost_in_all_usd",
}
"""Row cell -> :class:`~locomo_exp.results.run_log.JudgeSpend` field."""


def log_row_fields(log: RunLog) -> dict[str, Any]:
    """The shared cells of a plug-in job's sweep row.

    Args:
        log: the job's run log.

    Returns:
        ``headlines`` (figure name -> value in its unit, ``None``: not measured) and, when
        the job asked a judge, :data:`SPEND_CELLS` (counts; tokens; US dollars, ``None``
        when a price is unknown) and ``dry_run_estimate`` for a dry run.
    """
    out: dict[str, Any] = {"headlines": log.headline_values()}
    if log.judge is not None:
        out.update({cell: getattr(log.judge, field) for cell, field in SPEND_CELLS.items()})
        if log.judge.dry_run_estimate is not None:
            out["dry_run_estimate"] = dict(log.judge.dry_run_estimate)
    return out


def job_run_log(output_dir: str | Path, summary: dict[str, Any]) -> RunLog:
    """The run log of a job's ``summary.json`` (any benchmark, any version this code reads).

    Raises:
        ValueError: one line naming the file (a newer ``schema_version``, a bad section).
    """
    from locomo_exp.benchmarks.registry import run_log_of

    return run_log_of(summary, str(Path(output_dir) / "summary.json"))


__all__ = ["SPEND_CELLS", "job_run_log", "log_row_fields"]
