"""What a sweep's processes tell each other through files: the context and job records.

The launching process writes ``<sweep dir>/sweep_context.json`` before any job starts;
each job (possibly another process, with joblib or submitit) reads it and writes its
own ``sweep_job.json``; the launching process reads those after the last job. A sweep
that replaces an earlier one (``overwrite=true``) writes its context into the stage
(``<sweep dir>/.locomo_exp-new/``, :mod:`locomo_exp.report.run_swap`), where the jobs
read it; the earlier sweep's context stays in place until the new sweep is swapped in.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.report.run_dir import atomic_write_text
from locomo_exp.report.run_swap import STAGE_DIR

log = logging.getLogger(__name__)

CONTEXT_FILE = "sweep_context.json"
"""Written to the sweep dir before any job starts; read by every job."""

JOB_RECORD_FILE = "sweep_job.json"
"""Written by each job to its own output dir: status, error, wall time."""

COMPLETED = "COMPLETED"
FAILED = "FAILED"
PENDING = "PENDING"
"""A judge.mode=batch job with judge.batch.wait=false whose batches are still processing."""
RUNNING = "RUNNING"
"""What a job records when it starts; replaced by its outcome when it returns."""
INTERRUPTED = "INTERRUPTED"
"""A job stopped by Ctrl-C or SIGTERM (or still running when the sweep was interrupted)."""
NOT_RUN = "NOT RUN"
"""A job the interrupted sweep never started."""


@dataclass
class SweepContext:
    """What every job of a sweep needs to know; stored as ``<sweep dir>/sweep_context.json``.

    Attributes:
        name: the sweep's (parent run's) name.
        sweep_dir: absolute sweep directory.
        swept_keys: keys swept.
        swept_overrides: sweep overrides as typed.
        jobs: expected override lists by job number, or ``None``.
        parent_run_id: MLflow parent run, ``None`` with ``tracking=none``.
        tracking_uri: the one store of the sweep, or ``None``.
        experiment: MLflow experiment name, or ``None``.
        started_at: Unix time the sweep started.
        experiment_id: MLflow experiment id, or ``None``.
    """

    name: str
    sweep_dir: str
    swept_keys: list[str]
    swept_overrides: list[str]
    jobs: list[list[str]] | None = None
    parent_run_id: str | None = None
    tracking_uri: str | None = None
    experiment: str | None = None
    started_at: float = field(default_factory=time.time)
    experiment_id: str | None = None

    def write(self, directory: Path | None = None) -> Path:
        """Write the context file (atomically) and return its path.

        Args:
            directory: where (default: the sweep dir; the stage of a replacing sweep).

        Raises:
            OSError: the file cannot be written.
        """
        path = Path(directory or self.sweep_dir) / CONTEXT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def read(cls, sweep_dir: Path, *, staged: bool = True) -> SweepContext | None:
        """Read the context of a sweep dir; ``None`` when there is none (no callback).

        Args:
            sweep_dir: the sweep directory.
            staged: read the context of a sweep replacing an earlier one (in the stage)
                when there is one; ``False`` reads the sweep dir's own only.
        """
        path = Path(sweep_dir) / STAGE_DIR / CONTEXT_FILE
        if not staged or not path.is_file():
            path = Path(sweep_dir) / CONTEXT_FILE
        if not path.is_file():
            return None
        return cls(**json.loads(path.read_text(encoding="utf-8")))


@dataclass
class JobRecord:
    """What one job reports to the sweep (``<job output dir>/sweep_job.json``).

    Attributes:
        job: Hydra job number.
        overrides: the job's task overrides.
        swept: swept key -> display value.
        run_name: the child run's name.
        status: ``COMPLETED``, ``FAILED``, ``PENDING`` (batches submitted, collect later),
            ``INTERRUPTED``, ``NOT RUN`` (the sweep was interrupted first) or ``RUNNING``
            (started, no outcome yet).
        output_dir: the job's output dir (absolute).
        error: the error of a failed job (the whole message, e.g. every invalid record).
        error_type: the exception's class name.
        run_id: the child run, when one was created.
        wall_time_s: the job's wall time, seconds.
        f1_variant: the F1 variant reported as ``f1`` (``f1.variant``).
        paid: what a job that failed after paying paid for its judge calls: ``calls``,
            ``input_tokens``, ``output_tokens``, ``cost_usd`` (USD; ``None`` when unknown,
            :class:`~locomo_exp.judge.spend.PaidCalls`); ``None`` when nothing is known paid.
    """

    job: int
    overrides: list[str]
    swept: dict[str, str]
    run_name: str
    status: str
    output_dir: str
    error: str | None = None
    error_type: str | None = None
    run_id: str | None = None
    wall_time_s: float | None = None
    f1_variant: str | None = None
    paid: dict[str, Any] | None = None

    def write(self) -> Path:
        """Write the record into its output dir and return the path."""
        path = Path(self.output_dir) / JOB_RECORD_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n")
        return path


def read_job_records(sweep_dir: Path, since_ns: int | None = None) -> dict[int, JobRecord]:
    """Every ``sweep_job.json`` under a sweep dir, by job number (any ``hydra.sweep.subdir``).

    Args:
        sweep_dir: the sweep directory.
        since_ns: read only records written at or after this modification time (ns, as
            ``os.stat``'s ``st_mtime_ns``): a sweep replacing an earlier one leaves the
            earlier jobs' records in place until each job writes its own.

    Returns:
        Job number -> record; an unreadable record is skipped with a warning.
    """
    records: dict[int, JobRecord] = {}
    for path in sorted(Path(sweep_dir).rglob(JOB_RECORD_FILE)):
        if STAGE_DIR in path.parts or (since_ns is not None and _older(path, since_ns)):
            continue
        try:
            record = JobRecord(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as error:
            log.warning("sweep: unreadable job record %s: %s", path, error)
            continue
        records[record.job] = record
    return records


def _older(path: Path, since_ns: int) -> bool:
    """Whether ``path`` was last written before ``since_ns`` (gone: older)."""
    try:
        return path.stat().st_mtime_ns < since_ns
    except OSError:
        return True
