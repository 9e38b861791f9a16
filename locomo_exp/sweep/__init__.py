"""Hydra multirun sweeps: validated up front, one MLflow parent run, one child run per job.

``python -m locomo_exp -m judge.temperature=0.0,0.5,1.0`` runs three jobs. The
:class:`SweepCallback` (registered under ``hydra.callbacks`` in ``conf/config.yaml``)
makes the sweep one unit:

1. **Before any job** (``on_multirun_start``, in the launching process): every job's
   config is composed and checked (:mod:`.plan`). One bad value stops the whole sweep
   here: nothing is launched, no store is created, no API call is made.
2. The MLflow experiment is created once, then one **parent run** named after the sweep,
   tagged with the swept keys and with them as params. Its id, the store and the swept
   keys are written to ``<sweep dir>/sweep_context.json`` (:mod:`.job_files`), which every
   job reads: this works with Hydra's basic launcher, joblib's worker processes and
   submitit's SLURM (or local) jobs, and shares nothing else.
3. **Each job** (:func:`locomo_exp.cli.run_sweep_job`) is a child run (``parent_run_id``
   passed explicitly), named with its swept values first (``T=0.5 · sonnet-4-6 · both``,
   :func:`locomo_exp.tracking.child_run_name`) and tagged with them. A failing job does
   not stop the others: its run ends FAILED and it writes ``sweep_job.json``.
4. **After all jobs** (``on_multirun_end``): ``sweep_summary.json``, ``sweep_summary.md``
   and, for one numeric swept axis, ``sweep_plot.png`` (:mod:`.summary`) are written to
   the sweep dir and logged on the parent with, per swept value, the headline metrics
   (``sweep/T:0.5/j_overall``) and the summary table (``log_table``). Children left
   RUNNING (a killed worker) are marked FAILED. The parent ends FINISHED when every job
   completed and FAILED otherwise; the process exits with status 1 when any job failed.
   A sweep stopped by Ctrl-C or SIGTERM is summarised at exit: its parent and the running
   job's run end KILLED, that job is INTERRUPTED and the jobs never started NOT RUN.
"""

from __future__ import annotations

from locomo_exp.sweep.callback import EXIT_INVALID_SWEEP, EXIT_JOB_FAILED, SweepCallback
from locomo_exp.sweep.job_files import (
    COMPLETED,
    CONTEXT_FILE,
    FAILED,
    INTERRUPTED,
    JOB_RECORD_FILE,
    NOT_RUN,
    PENDING,
    RUNNING,
    JobRecord,
    SweepContext,
    read_job_records,
)
from locomo_exp.sweep.plan import (
    BASIC_SWEEPER,
    SweepPlan,
    compose_job,
    display_value,
    job_label,
    job_problems,
    override_key,
    plan_sweep,
    swept_values,
    validate_jobs,
)
from locomo_exp.sweep.plot import numeric_axis, plot_sweep
from locomo_exp.sweep.summary import (
    SUMMARY_JSON,
    SUMMARY_MD,
    SUMMARY_PLOT,
    build_sweep_summary,
    render_sweep_summary,
    summary_row,
)

__all__ = [
    "BASIC_SWEEPER",
    "COMPLETED",
    "CONTEXT_FILE",
    "EXIT_INVALID_SWEEP",
    "EXIT_JOB_FAILED",
    "FAILED",
    "INTERRUPTED",
    "JOB_RECORD_FILE",
    "NOT_RUN",
    "PENDING",
    "RUNNING",
    "SUMMARY_JSON",
    "SUMMARY_MD",
    "SUMMARY_PLOT",
    "JobRecord",
    "SweepCallback",
    "SweepContext",
    "SweepPlan",
    "build_sweep_summary",
    "compose_job",
    "display_value",
    "job_label",
    "job_problems",
    "numeric_axis",
    "override_key",
    "plan_sweep",
    "plot_sweep",
    "read_job_records",
    "render_sweep_summary",
    "summary_row",
    "swept_values",
    "validate_jobs",
]
