"""One job of a multirun (``python -m locomo_exp -m ...``): a child of the sweep's MLflow run."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from locomo_exp.cli.command_line import task_overrides
from locomo_exp.config import to_experiment_config
from locomo_exp.config.checks import keep_typed_text
from locomo_exp.results import interrupts

if TYPE_CHECKING:  # the jobs are imported where they run: --help loads none of them
    from locomo_exp.benchmarks.plugin import SweepJobRun

log = logging.getLogger(__name__)


def run_sweep_job(cfg: DictConfig) -> SweepJobRun | None:
    """One job of a multirun (``python -m locomo_exp -m ...``); never raises for a failed job.

    The job is a child of the sweep's MLflow parent run (read from the sweep dir's
    ``sweep_context.json``, see :mod:`locomo_exp.sweep`), named and tagged with its swept
    values. Any exception is caught so that the other jobs still run: the child run ends
    FAILED (the error is raised inside it), the error is printed, and ``sweep_job.json``
    records it for the sweep summary; the sweep's exit status is then 1.

    The registered benchmark that claims the job (:func:`locomo_exp.benchmarks.plugin_for`;
    LoCoMo, the last, claims the rest) runs it through its sweep hook
    (:meth:`~locomo_exp.benchmarks.plugin.SweepPlugin.run_in_sweep`).

    Returns:
        The job's ``SweepJobRun``, or ``None`` when the job failed or is pending.
    """
    from locomo_exp import sweep, tracking
    from locomo_exp.benchmarks.locomo.types import JudgeErrorRateExceeded
    from locomo_exp.benchmarks.names import registry_name_problems
    from locomo_exp.benchmarks.plugin import SweepPlugin
    from locomo_exp.benchmarks.registry import plugin_for
    from locomo_exp.data import DataValidationError
    from locomo_exp.judge import JudgeBatchPending
    from locomo_exp.judge.protocols.templates.settings import apply_template_settings
    from locomo_exp.judge.spend import paid_of

    hydra_cfg = HydraConfig.get()
    start_dir = Path(hydra_cfg.runtime.cwd or Path.cwd()).resolve()
    output_dir = Path(hydra_cfg.runtime.output_dir).resolve()
    sweep_dir = (start_dir / str(hydra_cfg.sweep.dir)).resolve()
    context = sweep.SweepContext.read(sweep_dir)
    overrides = task_overrides()
    num = int(hydra_cfg.job.num)
    # without the callback's context (no parent run), every task override labels the job
    swept_keys = (
        context.swept_keys if context is not None else [sweep.override_key(o) for o in overrides]
    )
    swept = sweep.swept_values(overrides, swept_keys)
    run_name = sweep.job_label(swept) if swept else f"job {num}"  # until the config is read
    tags = tracking.child_tags(num, context.name if context is not None else None, swept)
    record = sweep.JobRecord(
        job=num,
        overrides=overrides,
        swept=swept,
        run_name=run_name,
        status=sweep.RUNNING,
        output_dir=str(output_dir),
    )
    from locomo_exp.sweep.reuse import completed_job

    done = None if cfg.get("overwrite") else completed_job(output_dir, overrides)
    if done is not None:  # the same sweep run again: a completed job is kept, not re-run
        print(f"sweep job {num} ({done.run_name}): done in an earlier run of this sweep; kept")
        return None
    started = time.monotonic()
    record.write()  # started: INTERRUPTED, not NOT RUN, if the sweep stops before it returns
    try:
        keep_typed_text(cfg, overrides)
        apply_template_settings(cfg, overrides)
        typed = to_experiment_config(cfg, registry_name_problems)
        plugin = plugin_for(typed, start_dir)  # the registered benchmark's job (LoCoMo last)
        if not isinstance(plugin, SweepPlugin):
            raise ValueError(f"{plugin.title} jobs do not run in a sweep: run each on its own")
        record.f1_variant = plugin.sweep_f1_variant(typed)
        if swept:
            run_name = record.run_name = tracking.child_run_name(
                swept,
                model=typed.judge.model if typed.scorer.uses_judge else None,
                scorer=plugin.sweep_scorer(typed),
            )
        if context is not None and context.tracking_uri and typed.tracking.enabled:
            uri = tracking.resolve_tracking_uri(typed.tracking.uri, start_dir)
            if (uri, typed.tracking.experiment) != (context.tracking_uri, context.experiment):
                shown, experiment = tracking.redact_uri, typed.tracking.experiment
                raise ValueError(
                    f"this job would log to {shown(uri)} / {experiment}, the sweep's parent run "
                    f"is in {shown(context.tracking_uri)} / {context.experiment}"
                )
        parent_run_id = context.parent_run_id if context is not None else None
        result = plugin.run_in_sweep(typed, output_dir, start_dir, run_name=run_name,
                                     parent_run_id=parent_run_id, extra_tags=tags,
                                     swept_keys=list(swept))
        interrupts.raise_if_received()  # not COMPLETED: the sweep stops (exit 130)
    except JudgeBatchPending as waiting:  # judge.batch.wait=false: not a failure
        record.status = sweep.PENDING
        record.error = str(waiting)
        record.wall_time_s = time.monotonic() - started
        record.write()
        print(f"sweep job {num} ({run_name}): {waiting}")
        return None
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the sweep stops (exit 130 / 143)
        record.status, record.error = sweep.INTERRUPTED, "interrupted (Ctrl-C or SIGTERM)"
        record.wall_time_s = time.monotonic() - started
        record.write()
        raise
    except Exception as error:  # one failed job must not stop the sweep
        record.status = sweep.FAILED
        expected = isinstance(error, (DataValidationError, JudgeErrorRateExceeded, ValueError))
        if not expected:
            log.exception("sweep job %d (%s) raised", num, run_name)
        message = str(error).strip() or type(error).__name__  # the whole problem list
        record.error = message if expected else f"{type(error).__name__}: {message}"
        record.error_type = type(error).__name__
        paid = paid_of(error)  # a job stopped after paying: the sweep summary shows the cost
        record.paid = paid.to_json() if paid is not None else None
        record.wall_time_s = time.monotonic() - started
        record.write()
        print(f"error: sweep job {num} ({run_name}) failed: {record.error}", file=sys.stderr)
        return None
    record.status = sweep.COMPLETED
    record.run_id = result.run_id
    record.wall_time_s = time.monotonic() - started
    record.write()
    print(f"sweep job {num} ({run_name}) done in {record.wall_time_s:.1f} s: {result.report_path}")
    return result


__all__ = ["run_sweep_job"]
