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
        when a price is unknown) and ``dry_run_estimate`` for a dry run; ``trust``
        (:func:`trust_row_cells`).
    """
    out: dict[str, Any] = {"headlines": log.headline_values(), "trust": trust_row_cells(log)}
    if log.judge is not None:
        out.update({cell: getattr(log.judge, field) for cell, field in SPEND_CELLS.items()})
        if log.judge.dry_run_estimate is not None:
            out["dry_run_estimate"] = dict(log.judge.dry_run_estimate)
    return out


def trust_row_cells(log: RunLog) -> dict[str, Any]:
    """The trust cells of a plug-in job's sweep row, from its run log's trust brief.

    Args:
        log: the job's run log.

    Returns:
        ``{"corrected", "corrected_ci", "false_accept", "false_reject"}``: the corrected
        accept rate (Rogan-Gladen, from the labels or the audit) with its 95% interval
        ``[low, high]`` and the audit's pooled false-accept and false-reject rates, all 0-1
        as the run log holds them; ``None`` where the job did not measure one (no audit,
        no labels, a dry run).
    """
    trust = log.trust
    corrected = None if trust is None else trust.corrected
    ci = None if corrected is None or corrected.ci_low is None or corrected.ci_high is None \
        else [corrected.ci_low, corrected.ci_high]
    return {
        "corrected": None if corrected is None else corrected.value,
        "corrected_ci": ci,
        "false_accept": None if trust is None else trust.false_accept_rate,
        "false_reject": None if trust is None else trust.false_reject_rate,
    }


def job_run_log(output_dir: str | Path, summary: dict[str, Any]) -> RunLog:
    """The run log of a job's ``summary.json`` (any benchmark, any version this code reads).

    Raises:
        ValueError: one line naming the file (a newer ``schema_version``, a bad section).
    """
    from locomo_exp.benchmarks.registry import run_log_of

    return run_log_of(summary, str(Path(output_dir) / "summary.json"))


__all__ = ["SPEND_CELLS", "job_run_log", "log_row_fields", "trust_row_cells"]
