"""A used sweep directory is treated like a used run directory.

A sweep directory that holds a finished sweep is refused unless ``overwrite=true`` (its
summary and job records are then cleared once every job has been validated); one that
holds an unfinished run of the same sweep (same jobs: interrupted, or with failed or
pending jobs) is resumed: jobs that completed are kept, the others run again.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from locomo_exp.report.run_dir import run_dir_state
from locomo_exp.sweep.job_files import (
    COMPLETED,
    CONTEXT_FILE,
    JOB_RECORD_FILE,
    JobRecord,
    SweepContext,
)
from locomo_exp.sweep.summary import SUMMARY_JSON, SUMMARY_MD, SUMMARY_PLOT

log = logging.getLogger(__name__)


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
        context = SweepContext.read(sweep_dir)
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


__all__ = ["clear_sweep_dir", "completed_job", "sweep_dir_problem"]
