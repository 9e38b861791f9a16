"""A used sweep directory is treated like a used run directory.

A sweep directory that holds a finished sweep is refused unless ``overwrite=true``; one
that holds an unfinished run of the same sweep (same jobs: interrupted, or with failed or
pending jobs) is resumed: jobs that completed are kept, the others run again.

With ``overwrite=true`` the earlier sweep's own files (:data:`SWEEP_FILES`: summary,
plot, context, comparisons with the baseline job) stay where they are while the new
sweep writes its own into the stage (:func:`replacing_sweep`); they are swapped in only
when every job completed and every summary file is written and logged
(:mod:`locomo_exp.report.run_swap`). Each job's own run is replaced by that job when it
finished (the jobs run with ``overwrite=true`` too).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from locomo_exp.report.run_dir import run_dir_state
from locomo_exp.report.run_swap import RunReplacement, recover_cut_swap
from locomo_exp.sweep.job_files import (
    COMPLETED,
    CONTEXT_FILE,
    JOB_RECORD_FILE,
    JobRecord,
    SweepContext,
)
from locomo_exp.sweep.summary import SUMMARY_JSON, SUMMARY_MD, SUMMARY_PLOT
from locomo_exp.sweep.vs_baseline import VS_BASELINE_DIR

log = logging.getLogger(__name__)

SWEEP_FILES = (SUMMARY_JSON, SUMMARY_MD, SUMMARY_PLOT, CONTEXT_FILE, VS_BASELINE_DIR)
"""The sweep's own outputs in its directory, replaced together by a sweep with overwrite."""


def _finished(sweep_dir: Path) -> bool:
    """A summary whose every job completed (an unreadable summary counts as finished)."""
    path = sweep_dir / SUMMARY_JSON
    if not path.is_file():
        return False
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
        return all(row.get("status") == COMPLETED for row in summary.get("rows") or [])
    except (OSError, ValueError, AttributeError):
        return True


def sweep_dir_problem(
    sweep_dir: Path, jobs: list[list[str]] | None, overwrite: bool
) -> str | None:
    """Why this sweep may not use ``sweep_dir``, or ``None``.

    Args:
        sweep_dir: the absolute ``hydra.sweep.dir``.
        jobs: the planned jobs' override lists (``None`` when unknown).
        overwrite: ``overwrite=true`` on the command line.

    Returns:
        One line naming the directory and what to do, or ``None`` (new directory, the
        same sweep not yet finished, or ``overwrite``).
    """
    used = [name for name in (SUMMARY_JSON, CONTEXT_FILE) if (sweep_dir / name).is_file()]
    if not used or overwrite:
        return None
    try:
        context = SweepContext.read(sweep_dir, staged=False)
    except (OSError, ValueError, TypeError):
        context = None
    same = context is not None and jobs is not None and context.jobs == jobs
    if same and not _finished(sweep_dir):
        log.info("%s holds an unfinished run of this sweep: resuming it", sweep_dir)
        return None
    what = "this sweep, finished" if same else "another sweep"
    return (
        f"{sweep_dir} already holds {what} ({', '.join(used)}); choose another "
        "hydra.sweep.dir, or pass overwrite=true to replace it"
    )


def replacing_sweep(sweep_dir: Path, overwrite: bool) -> RunReplacement | None:
    """Set the sweep directory up for a new sweep; the replacement of an earlier one.

    Called once the sweep was accepted (every job validated, :func:`sweep_dir_problem`):
    a swap cut by a killed sweep is finished or undone and a stage left by one removed
    (:func:`~locomo_exp.report.run_swap.recover_cut_swap`). With ``overwrite`` over a
    directory holding a sweep, the new sweep's files go to a new stage until
    :meth:`~locomo_exp.report.run_swap.RunReplacement.commit`.

    Args:
        sweep_dir: the absolute ``hydra.sweep.dir``.
        overwrite: ``overwrite=true`` on the command line.

    Returns:
        The replacement (its ``write_dir`` is the stage), or ``None``: nothing is replaced
        and the sweep writes into ``sweep_dir``.

    Raises:
        OSError: the stage cannot be created.
    """
    if not sweep_dir.is_dir():
        return None
    recover_cut_swap(sweep_dir)
    if not overwrite or not any((sweep_dir / name).exists() for name in SWEEP_FILES):
        return None
    return RunReplacement(sweep_dir, True, files=SWEEP_FILES, noun="sweep")


def clear_sweep_dir(sweep_dir: Path) -> list[Path]:
    """Remove the sweep's summary files and every job record (``overwrite=true``).

    The jobs' own outputs are replaced by the jobs (each with ``overwrite=true``).

    Returns:
        The files removed.
    """
    removed = []
    for path in [sweep_dir / name for name in (SUMMARY_JSON, SUMMARY_MD, SUMMARY_PLOT)] + sorted(
        sweep_dir.rglob(JOB_RECORD_FILE)
    ):
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def completed_job(output_dir: Path, overrides: list[str]) -> JobRecord | None:
    """The record of this job from an earlier run of the same sweep, if it completed.

    Args:
        output_dir: the job's output directory.
        overrides: the job's task overrides.

    Returns:
        The :class:`JobRecord` when it completed with the same overrides and its run
        directory holds a finished run; else ``None`` (the job runs).
    """
    path = output_dir / JOB_RECORD_FILE
    try:
        record = JobRecord(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    if record.status != COMPLETED or record.overrides != overrides:
        return None
    return record if run_dir_state(output_dir) == "finished" else None


__all__ = [
    "SWEEP_FILES",
    "clear_sweep_dir",
    "completed_job",
    "replacing_sweep",
    "sweep_dir_problem",
]
