"""The recorded job's steps: the MLflow run from the start, a record before the judge is paid.

A benchmark whose :class:`~locomo_exp.benchmarks.steps.JobSteps` set ``records_first``
(LoCoMo's job) runs after :func:`.pipeline.preflight` through these steps, each a short
function:

1. :func:`open_tracking`: the MLflow run, with the params known at the start (a sweep's
   keys included). A judged, paid job's run is set up on a thread while the judge's first
   calls wait on the network (:func:`locomo_exp.tracking.deferred_mlflow_run`); a run that
   cannot be set up stops the calls.
2. ``before_judge``: what needs no judge (F1, BLEU-1, an errata key) computed and written,
   so a failing judge loses nothing computed.
3. :func:`judge_recorded`: the judge and its trust checks (as :func:`.pipeline.judge_step`),
   the heap frozen (``long_lived``) and the deferred run started right before the first
   call; one stop for the spend cap and the MLflow run. A judge that fails is recorded
   (``judge_failed``); a batch still processing (``JudgeBatchPending``) is recorded, its
   run tagged ``judge.batch_status=pending``, and raised once the run has ended.
4. ``write`` and ``track``: the outputs, then the MLflow params, metrics, tags and
   artifacts; a judge result that fails the job (``failure``: no usable J, a failed
   audit) is raised after that, before an earlier run would be replaced.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.steps import (
    InputT,
    JobContext,
    JobPlan,
    JobResult,
    JobSteps,
    JudgedT,
    where_lines,
)

if TYPE_CHECKING:
    from locomo_exp import tracking as tracking_mod

LOG_FILE = "locomo_exp.log"
"""The job's log, written by Hydra into the output dir (``hydra.job.name``); uploaded to MLflow."""

WARM_UP_MODULES = (
    "matplotlib.figure",  # the report's plots (report/plots.py)
    "matplotlib.backends.backend_agg",
    "pandas",  # mlflow.log_table builds a DataFrame
)
"""Modules a judge job imports after its calls, imported while the calls wait instead."""


@dataclass(frozen=True)
class RunNaming:
    """How the caller names the job's MLflow run.

    Attributes:
        run_name: the run name, or ``None`` (``tracking.run_name``, else the steps' own).
        parent_run_id: a sweep's parent run, or ``None``.
        extra_tags: more tags (a sweep job's number and swept values), or ``None``.
        swept_keys: the keys a sweep varies (logged as params).
    """

    run_name: str | None = None
    parent_run_id: str | None = None
    extra_tags: dict[str, str] | None = None
    swept_keys: tuple[str, ...] = ()


@dataclass
class Tracked:
    """The job's MLflow run as :func:`open_tracking` opened it.

    Attributes:
        run: the active MLflow run, or ``None`` (tracking off, or deferred and not yet waited).
        later: the deferred run being set up, or ``None``.
        uri: the resolved store, or ``None`` with tracking off.
        params: the params logged at the start.
    """

    run: Any = None
    later: tracking_mod.PendingRun | None = None
    uri: str | None = None
    params: dict[str, str] | None = None

    def wait(self) -> Any:
        """The active run (waits for a deferred one to be set up), or ``None``."""
        if self.later is not None:
            self.run = self.later.wait()
        return self.run


def warm_up_outputs(*, freeze: bool = False) -> None:
    """Import :data:`WARM_UP_MODULES` (on the MLflow thread, during a judge job's calls).

    Args:
        freeze: then ``gc.freeze()`` (see :func:`.pipeline.run_job`'s ``long_lived``).
    """
    import importlib

    for name in WARM_UP_MODULES:
        importlib.import_module(name)
    if freeze:
        gc.freeze()


def _calls_start(later: tracking_mod.PendingRun | None, long_lived: bool) -> None:
    """Right before the judge's first call: freeze the heap, start the MLflow thread."""
    if long_lived:
        gc.freeze()
    if later is not None:
        later.start()


def _stop_calls(calls_stop: Any, error: BaseException) -> None:
    """The MLflow run could not be set up: stop paying for judge calls (a thread's callback)."""
    calls_stop.set(f"the MLflow run could not be set up: {error}", error)


@contextmanager
def open_tracking(steps: JobSteps[Any, Any], plan: JobPlan[Any], naming: RunNaming,
                  long_lived: bool) -> Iterator[tuple[Tracked, JobContext]]:
    """Open the job's MLflow run (deferred for a paid judge); yield it and the job's context.

    The context carries the stop a deferred run sets when it cannot be set up, and the
    callback that starts it (and freezes the heap) right before the first judge call.

    Raises:
        locomo_exp.tracking.TrackingStoreError: the run cannot be created (not deferred).
    """
    from locomo_exp import tracking

    ctx, cfg = plan.ctx, plan.ctx.cfg
    deferred = cfg.tracking.enabled and plan.judge is not None and not plan.judge.dry_run
    if not cfg.tracking.enabled:
        yield Tracked(), replace(ctx, on_calls_start=functools.partial(
            _calls_start, None, long_lived))
        return
    uri = tracking.resolve_tracking_uri(cfg.tracking.uri, ctx.start_dir)
    params = steps.start_params(ctx, naming.swept_keys)
    spec = tracking.RunSpec(
        tracking_uri=uri, experiment=cfg.tracking.experiment,
        run_name=naming.run_name or steps.run_name(ctx),
        tags={**steps.start_tags(ctx), **(naming.extra_tags or {})},
        parent_run_id=naming.parent_run_id,
    )
    if not deferred:
        with tracking.mlflow_run(spec, log_file=ctx.output_dir / LOG_FILE) as run:
            tracking.log_params(params)
            yield Tracked(run=run, uri=uri, params=params), replace(
                ctx, on_calls_start=functools.partial(_calls_start, None, long_lived))
        return
    from locomo_exp.judge import CallsStop

    calls_stop = CallsStop()  # a run that cannot be set up stops the judge's calls
    with tracking.deferred_mlflow_run(
        replace(spec, params=params), log_file=ctx.output_dir / LOG_FILE,
        then=functools.partial(warm_up_outputs, freeze=long_lived),
        on_failure=functools.partial(_stop_calls, calls_stop),
    ) as later:
        yield Tracked(later=later, uri=uri, params=params), replace(
            ctx, calls_stop=calls_stop,
            on_calls_start=functools.partial(_calls_start, later, long_lived))


def judge_recorded(steps: JobSteps[InputT, Any], plan: JobPlan[InputT], inp: InputT,
                   ctx: JobContext, tracked: Tracked, write_dir: Any
                   ) -> tuple[InputT, Any, BaseException | None]:
    """The judge and its trust checks; a failure recorded, a pending batch kept for later.

    Returns:
        ``(inp, judged, pending)``: the input with what ``judge_failed`` recorded, the
        judge's result (``None`` without a judge or with a batch pending) and the
        ``JudgeBatchPending`` to raise once the run has ended.

    Raises:
        JudgeError, JudgeInterrupted, CallsStopped, KeyboardInterrupt: after
            ``judge_failed`` recorded them.
    """
    from locomo_exp import tracking
    from locomo_exp.judge import JudgeBatchPending

    if plan.judge is None:
        return inp, None, None
    if ctx.spend is not None:  # one stop for the cap and the MLflow run
        ctx = replace(ctx, calls_stop=ctx.spend.share_stop(ctx.calls_stop))
    try:
        judged = steps.judge(inp, plan.judge, ctx)
        return inp, steps.trust(inp, judged, ctx), None
    except BaseException as error:  # the record says the judge did not finish
        inp = steps.judge_failed(inp, error, ctx, write_dir)
        if not isinstance(error, JudgeBatchPending):
            raise
        run = tracked.wait()
        if run is not None:
            tracking.set_tags(tracking.pending_batch_tags(error.batch_ids))
        return inp, None, error


def _where(replacement: Any) -> str:
    """Where a failed run's outputs are: its directory, or none kept (the old run stays)."""
    if replacement.active:
        return f"those outputs are not kept: the earlier run in {replacement.output_dir} stays"
    return f"outputs are in {replacement.output_dir}"


def run_recorded(steps: JobSteps[InputT, JudgedT], plan: JobPlan[InputT], naming: RunNaming,
                 *, long_lived: bool = False) -> JobResult:
    """Run a recorded job's steps after the preflight (see the module's docstring).

    Returns:
        :class:`~locomo_exp.benchmarks.steps.JobResult`, its ``console`` the steps'
        :meth:`~locomo_exp.benchmarks.steps.JobSteps.recorded_console` and where the
        outputs are (:func:`~locomo_exp.benchmarks.steps.where_lines`).

    Raises:
        JudgeBatchPending: batches still processing (record written, run tagged pending).
        JudgeError, JudgeInterrupted, CallsStopped, KeyboardInterrupt, OSError: the judge
            or a write failed (an earlier run is kept as it was); ``failure``'s error.
    """
    from locomo_exp import tracking
    from locomo_exp.report.run_swap import replacing_run
    from locomo_exp.results import interrupts

    with replacing_run(plan.ctx.output_dir, plan.replacing) as replacement:
        write_dir = replacement.write_dir
        with open_tracking(steps, plan, naming, long_lived) as (tracked, ctx):
            inp = steps.before_judge(plan.inp, ctx, write_dir)  # a record before any call
            inp, judged, pending = judge_recorded(steps, plan, inp, ctx, tracked, write_dir)
            written = steps.write(inp, judged, ctx, write_dir)
            metrics = steps.written_metrics(written, ctx)
            run = tracked.wait()
            if run is not None:
                steps.track(written, metrics, ctx, tracked.params or {}, judged, run)
            failed = steps.failure(judged, written, ctx, _where(replacement))
            if failed is not None:
                raise failed
            files = written.files
            if pending is None:  # finished, every output written: now it replaces the old run
                interrupts.raise_if_received()  # a swallowed Ctrl-C: the old run stays
                replacement.commit()
                files = [replacement.final_path(path) for path in files]
    if pending is not None:
        raise pending  # after the run ended: the record and its metrics are logged
    run = tracked.run
    run_id = run.info.run_id if run is not None else None
    uri = tracked.uri if run is not None else None
    experiment_id = run.info.experiment_id if run is not None else None
    console = [*steps.recorded_console(written, plan.ctx), *where_lines(
        plan.ctx.output_dir, run_id=run_id, experiment=plan.ctx.cfg.tracking.experiment,
        tracking_uri=uri, experiment_id=experiment_id)]
    return JobResult(
        output_dir=plan.ctx.output_dir, summary=written.summary,
        metrics=tracking.finite_metrics(metrics), files=files, console=console,
        run_id=run_id, tracking_uri=uri, experiment_id=experiment_id,
        typed_summary=written.typed_summary,
    )


__all__ = ["LOG_FILE", "RunNaming", "Tracked", "open_tracking", "run_recorded",
           "warm_up_outputs"]
