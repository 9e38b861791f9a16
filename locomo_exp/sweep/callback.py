"""The Hydra callback that makes a multirun one validated, tracked, summarised sweep.

Part of the command-line layer: it prints the validation errors and the summary table,
and ends the process with :class:`SystemExit`. MLflow is reached only through
:mod:`locomo_exp.tracking`.
"""

from __future__ import annotations

import atexit
import json
import logging
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from locomo_exp import tracking
from locomo_exp.benchmarks.registry import sweep_plugin_for_rows
from locomo_exp.report.run_dir import atomic_write_text
from locomo_exp.report.run_swap import RunReplacement, stop_reason
from locomo_exp.results.money import round_money
from locomo_exp.sweep.flips import FlipStore, record_plugin_flips
from locomo_exp.sweep.job_files import (
    COMPLETED,
    FAILED,
    INTERRUPTED,
    NOT_RUN,
    RUNNING,
    JobRecord,
    SweepContext,
    read_job_records,
)
from locomo_exp.sweep.plan import (
    SweepPlan,
    job_label,
    mixed_benchmark_refusal,
    plan_sweep,
    swept_values,
    validate_jobs,
)
from locomo_exp.sweep.plot import plot_sweep
from locomo_exp.sweep.reuse import replacing_sweep, sweep_dir_problem
from locomo_exp.sweep.summary import (
    SUMMARY_JSON,
    SUMMARY_MD,
    SUMMARY_PLOT,
    build_sweep_summary,
    render_sweep_summary,
    summary_row,
)
from locomo_exp.sweep.vs_baseline import (
    VS_BASELINE_DIR,
    BaselineNotFound,
    baseline_job,
    compare_with_baseline,
    plugin_vs_baseline,
)
from locomo_exp.tracking import sweep as sweep_runs

log = logging.getLogger(__name__)

EXIT_INVALID_SWEEP = 2
"""Exit status when the sweep is refused before any job starts."""

EXIT_JOB_FAILED = 1
"""Exit status of a sweep in which at least one job failed (after all jobs ran)."""


def sweep_dir_of(config: DictConfig, start_dir: Path) -> Path:
    """The absolute sweep directory (``hydra.sweep.dir`` against the start directory)."""
    return (start_dir / Path(str(config.hydra.sweep.dir)).expanduser()).resolve()


class SweepCallback(Callback):
    """Hydra callback making a multirun one validated, tracked, summarised sweep.

    Registered in ``conf/config.yaml``::

        hydra:
          callbacks:
            sweep:
              _target_: locomo_exp.sweep.SweepCallback

    Does nothing in single-run mode. See :mod:`locomo_exp.sweep` for what happens when.
    The object is pickled into joblib workers; it holds only plain data.
    """

    def __init__(self) -> None:
        """Start with no sweep (``on_multirun_start`` sets one up)."""
        self._context: SweepContext | None = None
        self._finished = False
        self._baseline: str | None = None
        self._replacement: RunReplacement | None = None  # overwrite=true over a used dir
        self._since_ns: int | None = None  # job records older than the new sweep: not its

    # -- start ---------------------------------------------------------------------
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Validate every job, create the experiment and the parent run, write the context.

        Hydra turns an exception of a callback into a warning and goes on, so every
        failure here ends the process with :class:`SystemExit` instead.

        Raises:
            SystemExit: with :data:`EXIT_INVALID_SWEEP` when any job's config is invalid
                (after printing every problem), or when the tracking store cannot be
                set up; nothing has been launched then.
        """
        try:
            self._start(config)
        except BaseException as error:
            if self._replacement is not None:  # the earlier sweep stays as it was
                self._replacement.abandon(stop_reason(error))
            if not isinstance(error, Exception):  # SystemExit, Ctrl-C
                raise
            log.debug("sweep start failed", exc_info=True)
            sys.stderr.write(f"error: the sweep was not started: {type(error).__name__}: {error}\n")
            raise SystemExit(EXIT_INVALID_SWEEP) from None  # Hydra would only warn and launch

    def _start(self, config: DictConfig) -> None:
        start_dir = Path(str(config.hydra.runtime.cwd or Path.cwd())).resolve()
        plan = plan_sweep(config)
        refused = mixed_benchmark_refusal(config, plan, start_dir)
        if refused:
            sys.stderr.write(f"error: {refused}\n")
            raise SystemExit(EXIT_INVALID_SWEEP)
        problems, target = validate_jobs(config, plan, start_dir)
        baseline = OmegaConf.select(config, "sweep.baseline", default=None)
        if baseline is not None and plan.jobs is not None:  # a value not swept: refused now
            try:
                baseline_job([{"swept": swept_values(o, plan.swept_keys)} for o in plan.jobs],
                             str(baseline))
            except BaselineNotFound as error:
                problems.append(str(error))
        if problems:
            n_jobs = len(plan.jobs) if plan.jobs is not None else 1
            planned = f"{n_jobs} job{'s' if n_jobs != 1 else ''} planned"
            listed = (  # one problem: one line
                f" {problems[0]}\n" if len(problems) == 1
                else f" {len(problems)} problems:\n" + "".join(f"  - {p}\n" for p in problems)
            )
            sys.stderr.write(
                f"error: the sweep was not started ({planned}; no job ran and no API call was "
                f"made):{listed}"
            )
            raise SystemExit(EXIT_INVALID_SWEEP)
        sweep_dir = sweep_dir_of(config, start_dir)
        overwrite = bool(OmegaConf.select(config, "overwrite", default=False))
        used = sweep_dir_problem(sweep_dir, plan.jobs, overwrite)
        if used:
            sys.stderr.write(f"error: the sweep was not started: {used}\n")
            raise SystemExit(EXIT_INVALID_SWEEP)
        enabled, uri, experiment = target if target is not None else (False, None, "")
        run_name = OmegaConf.select(config, "tracking.run_name", default=None) or plan.name
        context = SweepContext(
            name=str(run_name),
            sweep_dir=str(sweep_dir),
            swept_keys=plan.swept_keys,
            swept_overrides=plan.swept_overrides,
            jobs=plan.jobs,
        )
        if enabled and uri is not None:
            context.tracking_uri = uri
            context.experiment = experiment
            context.experiment_id = tracking.ensure_experiment(uri, experiment)
            context.parent_run_id = self._start_parent(config, context, plan)
        self._open(context, overwrite)
        baseline = OmegaConf.select(config, "sweep.baseline", default=None)
        self._baseline = None if baseline is None else str(baseline)
        atexit.register(self._finish_at_exit)
        planned = str(len(plan.jobs)) if plan.jobs is not None else "?"
        log.info(
            "sweep %r: %s jobs, dir %s%s",
            context.name,
            planned,
            sweep_dir,
            f", MLflow parent run {context.parent_run_id}" if context.parent_run_id else "",
        )

    def _open(self, context: SweepContext, overwrite: bool) -> None:
        """Set the sweep dir up for ``context`` (every job validated) and write the context.

        With ``overwrite`` over a directory holding a sweep, the new sweep's files go to a
        stage (:func:`~locomo_exp.sweep.reuse.replacing_sweep`); the earlier sweep's stay
        until the new sweep has finished (:meth:`finish`).

        Raises:
            OSError: the stage or the context cannot be written.
        """
        sweep_dir = Path(context.sweep_dir)
        self._replacement = replacing_sweep(sweep_dir, overwrite)
        written = context.write(self._write_dir(sweep_dir))
        if self._replacement is not None:  # the earlier jobs' records are not this sweep's
            self._since_ns = written.stat().st_mtime_ns
        self._context = context

    @staticmethod
    def _start_parent(config: DictConfig, context: SweepContext, plan: SweepPlan) -> str:
        from locomo_exp import __version__

        assert context.tracking_uri is not None and context.experiment is not None
        launcher = str(OmegaConf.select(config, "hydra.launcher._target_", default="") or "")
        tags = tracking.parent_tags(
            version=__version__,
            swept_keys=plan.swept_keys,
            swept_overrides=plan.swept_overrides,
            fixed_overrides=plan.fixed_overrides,
            sweep_dir=context.sweep_dir,
            launcher=launcher,
            n_jobs=len(plan.jobs) if plan.jobs is not None else None,
        )
        return sweep_runs.start_parent_run(
            context.tracking_uri,
            context.experiment,
            context.name,
            tags,
            tracking.parent_params(plan.values_by_key()),
        )

    # -- end -----------------------------------------------------------------------
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Write the summary, end the parent run, and exit non-zero if a job failed.

        Raises:
            SystemExit: with :data:`EXIT_JOB_FAILED` when at least one job failed.
        """
        if self._context is None:
            return
        try:
            summary = self.finish()
        except Exception as error:  # Hydra would only warn and exit 0
            log.exception("sweep: could not write the summary")
            sys.stderr.write(f"error: the sweep summary failed: {type(error).__name__}: {error}\n")
            raise SystemExit(EXIT_JOB_FAILED) from None
        context = self._context
        if self._replacement is not None and not self._replacement.committed:
            print(f"\nSweep summary (not kept: the earlier sweep in {context.sweep_dir} is)")
        else:
            print(f"\nSweep summary: {Path(context.sweep_dir) / SUMMARY_MD}")
        print(render_sweep_summary(summary))
        if context.parent_run_id:
            print(
                f"MLflow: parent run {context.parent_run_id} in experiment "
                f"'{context.experiment}'.\n"
                f"{tracking.open_ui_hint(str(context.tracking_uri), context.experiment_id)}"
            )
        if summary["n_failed"]:
            failed = ", ".join(
                f"{f['job']} ({job_label(f['swept'])})" for f in summary["failed_jobs"]
            )
            sys.stderr.write(
                f"error: {summary['n_failed']} of {summary['n_jobs']} sweep jobs failed: {failed}\n"
            )
            raise SystemExit(EXIT_JOB_FAILED)

    def _finish_at_exit(self) -> None:
        if not self._finished and self._context is not None:
            log.warning("sweep ended before all jobs returned; closing the parent run as FAILED")
            try:
                self.finish(interrupted=True)
            except Exception:  # best effort while the process exits
                log.exception("sweep: could not write the summary at exit")

    def _write_dir(self, sweep_dir: Path) -> Path:
        """Where the sweep's own files go: the sweep dir, or the stage of a replacing sweep."""
        return self._replacement.write_dir if self._replacement is not None else sweep_dir

    def finish(self, *, interrupted: bool = False) -> dict[str, Any]:
        """Gather job records, write the summary files, log them, end the parent run.

        A sweep replacing an earlier one (``overwrite=true``) then swaps its files in when
        every job completed; otherwise (a job failed, pending or not run, Ctrl-C, an error
        here) it removes them and logs one line saying that the earlier sweep is kept
        (:data:`~locomo_exp.report.run_swap.KEPT_LINE`).

        Args:
            interrupted: the sweep did not reach its end (Ctrl-C, SIGTERM): the parent run
                ends KILLED, a job that started and did not return is INTERRUPTED and one
                that never started NOT RUN (both end ``FAILED`` otherwise).

        Returns:
            The summary (as in ``sweep_summary.json``).
        """
        replacement = self._replacement
        try:
            summary = self._summarise(interrupted)
            not_done = [row for row in summary["rows"] if row["status"] != COMPLETED]
            if replacement is not None and not interrupted and not not_done:
                replacement.commit()
        except BaseException as error:
            if replacement is not None:
                replacement.abandon(stop_reason(error))
            raise
        if replacement is not None and (interrupted or not_done):
            n_rows = len(summary["rows"])
            why = f"{len(not_done)} of {n_rows} jobs did not complete"
            replacement.abandon("interrupted" if interrupted else why)
        return summary

    def _summarise(self, interrupted: bool) -> dict[str, Any]:
        """:meth:`finish` up to the swap: the summary files (in the stage when replacing)."""
        context = self._context
        assert context is not None
        self._finished = True
        sweep_dir = Path(context.sweep_dir)
        write_dir = self._write_dir(sweep_dir)
        records = read_job_records(sweep_dir, self._since_ns)
        children: dict[int, sweep_runs.ChildRun] = {}
        if context.parent_run_id and context.tracking_uri and context.experiment:
            children = sweep_runs.child_runs(
                context.tracking_uri, context.experiment, context.parent_run_id
            )
        expected = range(len(context.jobs)) if context.jobs is not None else sorted(records)
        rows = []
        for num in expected:
            record = records.get(num) or _missing_record(context, num, interrupted)
            if record.status == RUNNING:  # started, never returned
                record.status = INTERRUPTED if interrupted else FAILED
                record.error = (
                    "interrupted (the sweep was stopped while this job ran)" if interrupted
                    else "the job did not report a result (crashed or killed)"
                )
            child = children.get(num)
            if child is not None:
                record.run_id = record.run_id or child.run_id
                if child.status == "RUNNING" and context.tracking_uri:
                    sweep_runs.mark_run_failed(
                        context.tracking_uri, child.run_id, "KILLED" if interrupted else "FAILED"
                    )
            rows.append(summary_row(record, _job_summary(record)))
        try:  # each job vs the baseline job (sweep.baseline); never loses the summary
            store = None
            if context.parent_run_id and context.tracking_uri and context.experiment_id:
                store = FlipStore(context.tracking_uri, context.experiment_id)
            plugin = sweep_plugin_for_rows(rows)  # a benchmark plug-in's jobs: its pairing
            if plugin is not None:
                baseline = plugin_vs_baseline(plugin, rows, self._baseline, write_dir)
                reader = getattr(plugin, "question_rows_of", None)  # its flips, as LoCoMo's
                if reader is not None:
                    record_plugin_flips(reader, rows, baseline, write_dir / VS_BASELINE_DIR,
                                        store)
            else:
                baseline = compare_with_baseline(rows, self._baseline, write_dir, store=store)
        except Exception:
            log.exception("sweep: could not compare the jobs with the baseline job")
            baseline = {"error": "comparison with the baseline job failed (see the log)"}
        summary = build_sweep_summary(context, rows)
        summary["baseline"] = baseline
        json_path = write_dir / SUMMARY_JSON
        md_path = write_dir / SUMMARY_MD
        body = json.dumps(round_money(summary), indent=2, ensure_ascii=False)
        atomic_write_text(json_path, body + "\n")
        atomic_write_text(md_path, render_sweep_summary(summary))
        files = [json_path, md_path]
        try:
            plot = plot_sweep(summary, write_dir / SUMMARY_PLOT)
        except Exception:  # a plot must not lose the summary
            log.exception("sweep: could not draw %s", SUMMARY_PLOT)
            plot = None
        if plot is not None:
            files.append(plot)
        if context.parent_run_id and context.tracking_uri:
            failed_jobs = ", ".join(str(f["job"]) for f in summary["failed_jobs"]) or "none"
            sweep_runs.finish_parent_run(
                context.tracking_uri,
                context.parent_run_id,
                files=files,
                tags={
                    "sweep.n_failed": str(summary["n_failed"]),
                    "sweep.failed_jobs": failed_jobs,
                    "sweep.n_warned": str(summary.get("n_warned", 0)),
                    "sweep.warned_jobs": ", ".join(
                        str(w["job"]) for w in summary.get("warned_jobs") or ()
                    ) or "none",
                    tracking.NOTE_TAG: tracking.sweep_description(
                        summary, plot=plot.name if plot is not None else None
                    ),
                },
                metrics=tracking.parent_metrics(summary["rows"]),
                table=tracking.sweep_table(summary["rows"], context.swept_keys),
                status=(
                    "KILLED" if interrupted else "FAILED" if summary["n_failed"] else "FINISHED"
                ),
                chart_image=plot,
            )
        return summary


def _missing_record(context: SweepContext, num: int, interrupted: bool = False) -> JobRecord:
    """The record of a job that wrote none: never started (``NOT RUN`` when interrupted)."""
    overrides = context.jobs[num] if context.jobs is not None else []
    swept = swept_values(overrides, context.swept_keys)
    return JobRecord(
        job=num,
        overrides=overrides,
        swept=swept,
        run_name=job_label(swept),
        status=NOT_RUN if interrupted else FAILED,
        output_dir="",
        error=(
            "not run: the sweep was interrupted before this job started" if interrupted
            else "the job did not report a result (crashed, killed or not run)"
        ),
    )


def _job_summary(record: JobRecord) -> dict[str, Any] | None:
    """A completed job's ``summary.json``; an unreadable one fails the record instead."""
    if record.status != COMPLETED:
        return None
    path = Path(record.output_dir) / "summary.json"
    try:
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        record.status = FAILED
        record.error = f"summary.json unreadable: {error}"
        return None
    return loaded
