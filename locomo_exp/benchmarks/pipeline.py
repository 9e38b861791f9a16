"""One job for every pipeline benchmark: preflight -> judge -> trust -> run log -> write -> track.

:func:`run_job` drives a benchmark's :class:`~locomo_exp.benchmarks.steps.JobSteps` through
named steps, each a short function:

1. :func:`preflight`: every check that can refuse, before anything is written, deleted or
   paid: settings, tracking URI, judge settings and key, a writable directory, the input
   files (several when pooled, side files such as an errata file) read and validated, the
   judge's checks on the records, the trust plan (audit, labels, panel),
   ``judge.max_cost_usd`` over the whole job, a directory holding a finished run without
   ``overwrite=true``.
2. :func:`judge_step`: the benchmark's judge hook (realtime, batch, dry run: the judge
   engine's; every call through the judge cache, so a re-run or a resumed run pays no call
   twice), then its trust hook.
3. the run log: the benchmark's summary, built once.
4. :func:`write_and_track`: the files written into the run directory, or beside an earlier
   run and swapped in only when every file is written (``overwrite=true``:
   :func:`locomo_exp.report.run_swap.replacing_run`); the MLflow run; the console.

A recorded job (``JobSteps.records_first``: LoCoMo's) runs steps 2-4 as
:func:`locomo_exp.benchmarks.pipeline_recorded.run_recorded` instead: its MLflow run from
the start, F1 written before the judge is paid, a failed judge or a pending batch recorded.

The plug-in side (its job, sweep job, checks, comparison) is
:class:`locomo_exp.benchmarks.pipeline_plugin.PipelinePlugin`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from locomo_exp.benchmarks.file_plugin import plugin_mlflow_run
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
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.judge.prompt_book import PromptBook
    from locomo_exp.judge.spend import JobSpend
    from locomo_exp.llm.cache import JudgeCache
    from locomo_exp.llm.messages import JudgeClient
    from locomo_exp.llm.stop import CallsStop

log = logging.getLogger(__name__)


def _check_tracking(cfg: ExperimentConfig, start_dir: Path) -> None:
    """A ``tracking.uri`` MLflow cannot use: one line before any work."""
    if cfg.tracking.enabled:
        from locomo_exp import tracking

        tracking.check_tracking_uri(
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir),
            connect_timeout_s=cfg.tracking.connect_timeout_s,
        )


def _open_job_cache(judge: JudgeConfig, start_dir: Path) -> JudgeCache | None:
    """The job's judge cache, checked as ``preflight_judge`` checks it, left open for the job.

    An existing file is opened, ``quick_check``-ed and probed once
    (:func:`~locomo_exp.llm.cache.health.open_existing_cache`); the judge step's
    :func:`~locomo_exp.judge.run_judge` uses this connection (``JobContext.cache``).

    Returns:
        The open cache, or ``None`` (``judge.cache=false`` or no file yet).

    Raises:
        JudgeError: a directory, a file that is not SQLite, a corrupt, truncated, locked or
            read-only file (one line naming it).
    """
    if not judge.cache:
        return None
    from locomo_exp.llm.cache import cache_path_problem, resolve_cache_path
    from locomo_exp.llm.cache.health import open_existing_cache
    from locomo_exp.llm.errors import JudgeError

    path = resolve_cache_path(judge.cache_path, start_dir)
    problem = cache_path_problem(path)
    if problem is not None:
        raise JudgeError(problem)
    return open_existing_cache(path)


def _judge_checks(steps: JobSteps[InputT, Any], judge: JudgeConfig, inp: InputT,
                  cfg: ExperimentConfig, path: Path, start_dir: Path, prompts: PromptBook,
                  cache: JudgeCache | None) -> tuple[InputT, JobSpend | None]:
    """The judge's checks on the records, the trust plan, ``judge.max_cost_usd`` over the job.

    The prompts built for the size checks are kept in ``prompts`` for the judge step; the
    cache was checked already (:func:`_open_job_cache`), ``cache`` serves the estimate.

    Returns:
        The input with its trust plan (:meth:`JobSteps.plan_trust`), and the job's spend
        plan, or ``None`` (no cap, or a dry run).

    Raises:
        JudgeError: a record the protocol cannot judge, a prompt over the limit, a trust
            setting that cannot be used, or the whole job's estimate above the cap (no
            call made).
    """
    from locomo_exp.judge import preflight_judge
    from locomo_exp.judge.spend import plan_job_spend

    source = steps.source(inp, path)
    preflight_judge(judge, steps.judge_records(inp, judge), start_dir=None, source=source,
                    prompts=prompts)  # start_dir=None: the cache is checked and open
    inp = steps.plan_trust(inp, judge, start_dir, source)
    if judge.max_cost_usd is None or judge.dry_run:
        return inp, None
    return inp, plan_job_spend(steps.spend_parts(inp, judge, cfg), judge.max_cost_usd,
                               start_dir, cache=cache)


def preflight(
    steps: JobSteps[InputT, Any], cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
    client: JudgeClient | None = None, calls_stop: CallsStop | None = None,
) -> JobPlan[InputT]:
    """Every check that can refuse the job, in order; nothing written, deleted or paid.

    Args:
        steps: the benchmark's hooks.
        cfg: the typed config.
        output_dir: the run directory (absolute; created, and probed with a temporary file).
        start_dir: where relative paths are resolved (absolute).
        client: a judge client to use instead of the provider's SDK (tests).
        calls_stop: set by another thread to stop paying.

    Returns:
        :class:`JobPlan`; its ``ctx.cache`` is the judge cache, opened and probed here when
        the file exists (once per job: the spend estimate and the judge use it), closed by
        :func:`run_job` (and here, when a later check refuses the job).

    Raises:
        ValueError: bad settings or input (``DataValidationError``: one line naming file,
            record and field); ``OutputDirInUse`` for a finished run without ``overwrite``;
            ``OutputDirNotWritable``.
        JudgeError: bad judge settings, a missing key, or the whole job's estimate above
            ``judge.max_cost_usd`` (no call made).
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.
    """
    from locomo_exp.report.run_dir import check_output_dir, check_writable
    from locomo_exp.report.run_swap import recover_cut_swap

    steps.check_settings(cfg)
    _check_tracking(cfg, start_dir)
    judge = steps.judge_config(cfg)
    cache = None
    if judge is not None:  # settings, key, template, cache: before reading
        from locomo_exp.judge import preflight_judge

        preflight_judge(judge, [], start_dir=None)  # then the cache, as preflight_judge does
        cache = _open_job_cache(judge, start_dir)  # opened and probed once per job
    try:
        check_writable(output_dir)
        paths = steps.input_paths(cfg, start_dir)  # several when data.runs or a glob pools
        path = paths[0]
        inp = steps.read(cfg, path, start_dir, judging=judge is not None)
        spend = prompts = None
        if judge is not None:
            from locomo_exp.judge.prompt_book import PromptBook

            prompts = PromptBook()  # built once per job: the checks, then the judge step
            inp, spend = _judge_checks(steps, judge, inp, cfg, path, start_dir, prompts, cache)
        recover_cut_swap(output_dir)  # a swap of runs cut by a killed job: finished or undone
        state = check_output_dir(output_dir, cfg.overwrite)  # a finished run needs overwrite
    except BaseException:
        if cache is not None:
            cache.close()
        raise
    replacing = cfg.overwrite and state != "empty"
    ctx = JobContext(cfg=cfg, output_dir=output_dir, start_dir=start_dir, data_path=path,
                     client=client, calls_stop=calls_stop, spend=spend, data_paths=tuple(paths),
                     prompts=prompts, cache=cache)
    return JobPlan(ctx=ctx, inp=inp, judge=judge, replacing=replacing)


def judge_step(steps: JobSteps[InputT, JudgedT], plan: JobPlan[InputT]) -> JudgedT | None:
    """The benchmark's judge (or dry run), then its trust checks; ``None`` without a judge.

    Raises:
        JudgeError, JudgeInterrupted, CallsStopped, JudgeBatchPending: from the judge
            engine (:func:`locomo_exp.judge.run_judge`); every completed call is cached and
            no earlier run has been touched.
    """
    if plan.judge is None:
        return None
    judged = steps.judge(plan.inp, plan.judge, plan.ctx)
    return steps.trust(plan.inp, judged, plan.ctx)


def write_files(steps: JobSteps[Any, Any], write_dir: Path, cfg: ExperimentConfig,
                summary: dict[str, Any], rows: list[dict[str, Any]],
                more: Sequence[tuple[str, str]] = ()) -> list[Path]:
    """Write ``scores.jsonl``, ``report.md``, ``summary.json``, ``card.json``, ``config.yaml``.

    ``more``: ``(name, text)`` of files written after those five (``questions.html``).

    Each file is written atomically, their fsyncs at once and their moves into place in
    this order (:func:`~locomo_exp.report.atomic_many.atomic_write_files`); costs are
    rounded as money when the benchmark asks
    (:attr:`~locomo_exp.benchmarks.steps.JobSteps.round_money`).

    Returns:
        The paths written, in that order.

    Raises:
        OSError: a file cannot be written.
    """
    from locomo_exp.report.atomic_many import Writer, atomic_write_files
    from locomo_exp.report.config_text import config_yaml
    from locomo_exp.results.money import round_money

    def saved(obj: dict[str, Any]) -> str:
        kept = round_money(obj) if steps.round_money else obj
        return json.dumps(kept, indent=2, ensure_ascii=False) + "\n"

    card = steps.card(summary)
    texts = {
        "report.md": steps.report(summary, card),
        "summary.json": saved(summary),
        "card.json": saved(card),
        "config.yaml": config_yaml(cfg),
        **dict(more),
    }

    def lines(handle: TextIO) -> None:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def whole(text: str) -> Writer:
        return lambda handle: handle.write(text)

    # written and synced at once, in place in this order (report/atomic_many.py)
    return atomic_write_files([(write_dir / "scores.jsonl", lines),
                               *((write_dir / name, whole(text)) for name, text in texts.items())])


def write_and_track(
    steps: JobSteps[InputT, JudgedT], plan: JobPlan[InputT], judged: JudgedT | None,
    summary: dict[str, Any], *, run_name: str | None, parent_run_id: str | None,
    extra_tags: dict[str, str] | None,
) -> JobResult:
    """Write the outputs (beside an earlier run, swapped in at the end), track, word the console.

    Raises:
        OSError: a file cannot be written (an earlier run is kept as it was).
        KeyboardInterrupt: Ctrl-C before the swap (an earlier run is kept as it was).
    """
    from locomo_exp import tracking
    from locomo_exp.report.run_swap import replacing_run
    from locomo_exp.results import interrupts

    ctx, cfg = plan.ctx, plan.ctx.cfg
    console = steps.console(summary)
    run_context, tracking_uri = plugin_mlflow_run(
        cfg, ctx.start_dir, ctx.output_dir,
        run_name=run_name or cfg.tracking.run_name or f"{ctx.data_path.stem} · {steps.name}",
        tags={**steps.run_tags(summary), **(extra_tags or {})}, parent_run_id=parent_run_id,
    )
    with replacing_run(ctx.output_dir, plan.replacing) as replacement, run_context as run:
        rows = steps.score_rows(plan.inp, judged)
        model = plan.judge.model if plan.judge is not None and judged is not None else None
        questions = steps.question_rows(rows, model)
        if questions and model is not None:  # the judged audit's controls: tagged rows
            from locomo_exp.report.question_rows import audit_control_rows, summary_audit

            questions += audit_control_rows(summary_audit(summary), questions, model)
        more: list[tuple[str, str]] = []
        if questions:  # every question: questions.html (last), and MLflow traces when asked
            from locomo_exp.report.questions_html import (
                QUESTIONS_HTML,
                render_table_html,
                run_table,
            )

            title = f"{ctx.data_path.name} · {steps.name}"
            more.append((QUESTIONS_HTML, render_table_html(title, *run_table(questions))))
        files = write_files(steps, replacement.write_dir, cfg, summary, rows, more)
        metrics = steps.run_metrics(summary)
        if run is not None:
            traces = (tracking.QuestionLogging(questions, run.info.run_id)
                      if cfg.tracking.questions and questions else None)
            tracking.log_params(steps.run_params(summary))
            tracking.log_metrics(metrics)
            tracking.set_tags(steps.end_tags(summary, console))
            tracking.log_artifacts(files)
            if traces is not None:
                traces.wait()
        interrupts.raise_if_received()  # a swallowed Ctrl-C: an earlier run stays
        replacement.commit()  # finished, every output written: now it replaces the old run
        files = [replacement.final_path(path) for path in files]
    console = [*console, *where_lines(
        ctx.output_dir, run_id=run.info.run_id if run is not None else None,
        experiment=cfg.tracking.experiment, tracking_uri=tracking_uri,
        experiment_id=run.info.experiment_id if run is not None else None)]
    gate = steps.gate(summary)
    if gate is not None:
        console.append(f"error: {gate}")
    return JobResult(
        output_dir=ctx.output_dir, summary=summary, metrics=metrics, files=files,
        console=console, run_id=run.info.run_id if run is not None else None,
        tracking_uri=tracking_uri, exit_status=1 if gate is not None else 0,
    )


def run_job(
    steps: JobSteps[Any, Any], cfg: ExperimentConfig, output_dir: Path,
    start_dir: Path | None = None, *, client: JudgeClient | None = None,
    calls_stop: CallsStop | None = None, run_name: str | None = None,
    parent_run_id: str | None = None, extra_tags: dict[str, str] | None = None,
    swept_keys: Sequence[str] = (), long_lived: bool = False,
) -> JobResult:
    """Run one benchmark job through the pipeline's steps.

    A benchmark whose steps set :attr:`~.steps.JobSteps.records_first` (LoCoMo) runs
    the recorded steps instead of :func:`judge_step` -> summary -> :func:`write_and_track`:
    its MLflow run starts with the job, a record is written before the judge is paid, and a
    pending batch or a failed judge is recorded (:func:`.pipeline_recorded.run_recorded`).

    Args:
        steps: the benchmark's hooks.
        cfg: the typed config.
        output_dir: where to write the outputs.
        start_dir: where relative paths are resolved (default: the working directory).
        client: a judge client to use instead of the provider's SDK (tests).
        calls_stop: set by another thread to stop paying (completed calls stay cached).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file stem> · <benchmark>``); a sweep job's name.
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).
        swept_keys: the keys a sweep varies, logged as params by a recorded job
            (:meth:`~.steps.JobSteps.start_params`).
        long_lived: the process runs this one job (``python -m locomo_exp``): a recorded
            job freezes the heap (``gc.freeze``) when the judge's calls start.

    Returns:
        :class:`~locomo_exp.benchmarks.steps.JobResult`.

    Raises:
        ValueError, OSError, JudgeError, TrackingStoreError: as :func:`preflight` (nothing
            written, deleted or paid).
        JudgeInterrupted, CallsStopped, JudgeBatchPending, JudgeError: from the judge
            (:func:`judge_step`); an earlier run is untouched, completed calls cached.
            A recorded job raises ``JudgeBatchPending`` after its record is written and
            its MLflow run tagged ``judge.batch_status=pending``, and
            :meth:`~.steps.JobSteps.failure`'s error once its outputs are logged.
    """
    start_dir = (start_dir or Path.cwd()).resolve()
    plan = preflight(steps, cfg, Path(output_dir).resolve(), start_dir, client=client,
                     calls_stop=calls_stop)
    try:
        if steps.records_first:
            from locomo_exp.benchmarks.pipeline_recorded import RunNaming, run_recorded

            return run_recorded(steps, plan, RunNaming(run_name, parent_run_id, extra_tags,
                                                       tuple(swept_keys)), long_lived=long_lived)
        judged = judge_step(steps, plan)
    finally:
        if plan.ctx.cache is not None:  # the preflight's, used by the judge: closed once
            plan.ctx.cache.close()
    summary = steps.summary(plan.inp, judged, cfg)  # the run log, built once
    return write_and_track(steps, plan, judged, summary, run_name=run_name,
                           parent_run_id=parent_run_id, extra_tags=extra_tags)


__all__ = [
    "JobPlan",
    "judge_step",
    "preflight",
    "run_job",
    "write_and_track",
    "write_files",
]
