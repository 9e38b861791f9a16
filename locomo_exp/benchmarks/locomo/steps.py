"""LoCoMo's hooks on the one job pipeline: a recorded job (``records_first``).

:class:`LocomoSteps` wraps what LoCoMo's job computes: every answers file read and pooled
(``data.runs``, a glob), the errata key, F1/BLEU-1 written before the judge is paid, the
judge (:func:`locomo_exp.judge.run_judge`) and its trust checks (audit, labels, panel:
:mod:`locomo_exp.trust.job`), the outputs and the MLflow run (:mod:`.track`). Each stage
(the F1 record, a failed judge's record, the judged run) builds its run once
(:func:`locomo_exp.report.locomo_run.build_locomo_run`) and hands it to the writer
(:func:`locomo_exp.report.outputs.write_locomo_run`), ``questions.html`` and MLflow. The
pipeline (:func:`locomo_exp.benchmarks.pipeline.run_job`) drives them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.locomo.types import (
    LocomoInput,
    LocomoJudged,
    LocomoWritten,
    resolve_path,
)
from locomo_exp.benchmarks.steps import JobContext, JobSteps, Written
from locomo_exp.data import LoadedRuns, expand_paths, load_data
from locomo_exp.data.input_file import check_regular_file
from locomo_exp.data.layouts import layout_spec
from locomo_exp.report.locomo_run import LocomoRun, build_locomo_run
from locomo_exp.report.outputs import write_locomo_run
from locomo_exp.report.question_rows import write_locomo_questions
from locomo_exp.results import interrupts
from locomo_exp.results.status import JUDGE_RUNNING, judge_status
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.repeated_runs import runs_section

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.judge.spend import Part
    from locomo_exp.results import QARecord

log = logging.getLogger(__name__)


def _write(run: LocomoRun, write_dir: Path) -> LocomoWritten:
    """Write a built run's files (:func:`write_locomo_run`); what was written, with the run."""
    files = write_locomo_run(run, write_dir)
    return LocomoWritten(summary=run.summary.to_json(), files=files, rows=run.rows,
                         typed_summary=run.summary, run=run)


class LocomoSteps(JobSteps[LocomoInput, LocomoJudged]):
    """LoCoMo's job: several answers files pooled, F1 first, then the judge and its trust."""

    records_first = True

    def __init__(self) -> None:
        super().__init__("locomo", "LoCoMo", "results file")

    # -- preflight -----------------------------------------------------------------------
    def input_paths(self, cfg: ExperimentConfig, start_dir: Path) -> list[Path]:
        """``data.runs`` or ``data.path`` (a list or glob pools files), and ``data.errata``.

        Raises:
            ValueError: neither is set (one line).
            locomo_exp.data.DataValidationError: a file missing, unreadable or not regular.
        """
        if not cfg.data.path and not cfg.data.runs:
            raise ValueError(
                "data.path is not set: pass data.path=<results file> (or use data=example)")
        paths = expand_paths(cfg.data.runs or cfg.data.path, start_dir)
        for path in paths:
            check_regular_file(path)  # never opens a FIFO
        if cfg.data.errata:
            check_regular_file(resolve_path(cfg.data.errata, start_dir), "errata file")
        return paths

    def read(self, cfg: ExperimentConfig, path: Path, start_dir: Path, *, judging: bool
             ) -> LocomoInput:
        """Read and validate ``data``; for ``data.runs`` run 1 with every run's stored J."""
        loaded = load_data(cfg.data, start_dir, cfg.category_names)
        if isinstance(loaded, LoadedRuns):
            loaded = replace(loaded.runs[0], across_runs=loaded.stored_j_across_runs(),
                             runs=loaded.runs)
        return LocomoInput(loaded=loaded)

    def source(self, inp: LocomoInput, path: Path) -> str:
        """The answers file(s) the records come from, as a refusal line names them."""
        others = len(inp.loaded.sources) - 1
        return str(inp.loaded.path) + (f" (and {others} pooled file(s))" if others > 0 else "")

    def judge_records(self, inp: LocomoInput, judge: JudgeConfig) -> list[QARecord]:
        """Every record (the judge judges each answer)."""
        return inp.loaded.records

    def plan_trust(self, inp: LocomoInput, judge: JudgeConfig, start_dir: Path, source: str
                   ) -> LocomoInput:
        """The audit's controls, labels and panel (:func:`locomo_exp.trust.job.plan_trust`)."""
        from locomo_exp.trust.job import plan_trust

        plan = plan_trust(inp.loaded.records, judge, start_dir=start_dir, source=source)
        return replace(inp, trust_plan=plan)

    def spend_parts(self, inp: LocomoInput, judge: JudgeConfig, cfg: ExperimentConfig
                    ) -> list[Part]:
        """The answers, the audit and the panel (:func:`locomo_exp.trust.job.spend_parts`)."""
        from locomo_exp.trust.job import spend_parts

        assert inp.trust_plan is not None  # planned before the spend
        return spend_parts(inp.trust_plan, inp.loaded.records, judge)

    # -- the console ------------------------------------------------------------------------
    def recorded_console(self, written: Written, ctx: JobContext) -> list[str]:
        """The figures the command line prints (:func:`.console.locomo_console`)."""
        from locomo_exp.benchmarks.locomo.console import locomo_console

        run = written.run if isinstance(written, LocomoWritten) else None  # errata, as built
        return locomo_console(written.summary, run.answer_key if run is not None else None)

    # -- the MLflow run's start -------------------------------------------------------------
    def start_tags(self, ctx: JobContext) -> dict[str, str]:
        """The run directory (:func:`locomo_exp.tracking.run_tags`)."""
        from locomo_exp import tracking

        return tracking.run_tags(output_dir=str(ctx.output_dir.resolve()))

    def start_params(self, ctx: JobContext, swept_keys: Sequence[str]) -> dict[str, str]:
        """The measurement's settings and the swept keys (``config_measurement_params``)."""
        from locomo_exp import tracking
        from locomo_exp.report.locomo_run import config_tree

        return tracking.config_measurement_params(
            config_tree(ctx.cfg), judge_ran=ctx.cfg.scorer.uses_judge, swept_keys=swept_keys)

    def run_name(self, ctx: JobContext) -> str:
        """``tracking.run_name``, else file, scorer, judge, F1 variant and sample."""
        from locomo_exp import tracking

        cfg = ctx.cfg
        return cfg.tracking.run_name or tracking.single_run_name(
            ctx.data_path.stem, cfg.scorer.name.value, f1_variant=cfg.f1.variant.value,
            limit=cfg.data.limit,
            judge_model=cfg.judge.model if cfg.scorer.uses_judge else None,
            judge_runs=cfg.judge.runs)

    # -- before the judge: F1, BLEU-1, the errata key, written ------------------------------
    def before_judge(self, inp: LocomoInput, ctx: JobContext, write_dir: Path
                     ) -> LocomoInput:
        """Score F1/BLEU-1 (every run for ``data.runs``) and the errata key; write them.

        Raises:
            locomo_exp.data.ErrataError: a bad errata file (one line).
            KeyboardInterrupt: a swallowed Ctrl-C (no output says "ok").
            OSError: a file cannot be written.
        """
        cfg, loaded = ctx.cfg, inp.loaded
        log.info("read %d records from %s (format %s)", len(loaded.records), ctx.data_path,
                 loaded.format)
        own_f1 = layout_spec(loaded.format).own_f1
        if own_f1 is not None and cfg.f1.variant.value != own_f1:
            log.info("%s has the %s layout, whose harness reports F1 as f1=%s; the reported F1 "
                     "here is f1_%s (all variants are in the report)", ctx.data_path.name,
                     loaded.format, own_f1, cfg.f1.variant.value)
        variant = cfg.f1.variant.value
        lexical = (score_lexical(loaded.records, variant, cfg.f1.bleu1)
                   if cfg.scorer.uses_f1 else [])
        if loaded.runs and lexical:  # data.runs: every run scored, mean ± std across runs
            loaded = replace(loaded, runs_summary=runs_section(
                [run.records for run in loaded.runs], [run.label for run in loaded.runs],
                variant, cfg.f1.bleu1))
        answer_key = None
        if cfg.data.errata and lexical:  # both keys, per category, with the ceilings
            from locomo_exp.scoring.errata import score_errata

            answer_key = score_errata(loaded.records, resolve_path(cfg.data.errata,
                                      ctx.start_dir), with_bleu1=cfg.f1.bleu1)
        elif cfg.data.errata:  # J only: not applied (the judge sees the original gold), read
            from locomo_exp.data.errata import load_errata

            load_errata(resolve_path(cfg.data.errata, ctx.start_dir))  # a bad file: one line
        interrupts.raise_if_received()  # a swallowed Ctrl-C: no outputs saying "ok"
        status = {"f1": "ok"} if cfg.scorer.uses_f1 else {}
        if cfg.scorer.uses_judge:
            status["judge"] = JUDGE_RUNNING
        inp = replace(inp, loaded=loaded, lexical=lexical, answer_key=answer_key, status=status)
        record = build_locomo_run(cfg, loaded, lexical, status=status, answer_key=answer_key,
                                  plots=not cfg.scorer.uses_judge)
        return replace(inp, record=_write(record, write_dir))

    # -- the judge and its trust --------------------------------------------------------------
    def judge(self, inp: LocomoInput, judge: JudgeConfig, ctx: JobContext) -> LocomoJudged:
        """Judge every answer (:func:`locomo_exp.judge.run_judge`; realtime, batch, dry run).

        Raises:
            CallsStopped: widened by the audit's and panel's calls left unmade.
        """
        from locomo_exp.judge import CallsStopped, run_judge

        assert inp.trust_plan is not None  # planned in the preflight whenever the judge runs
        try:
            result = run_judge(
                inp.loaded.records, judge, start_dir=ctx.start_dir,
                category_names=ctx.cfg.category_names, client=ctx.client,
                on_calls_start=ctx.on_calls_start, calls_stop=ctx.calls_stop, spend=ctx.spend,
                prompts=ctx.prompts, cache=ctx.cache)
        except CallsStopped as stopped:  # the audit's and panel's calls are left too
            later_calls = sum(inp.trust_plan.part_calls(judge))
            raise stopped.widened(later=later_calls) from stopped.__cause__
        return LocomoJudged(result=result)

    def trust(self, inp: LocomoInput, judged: LocomoJudged, ctx: JobContext) -> LocomoJudged:
        """The audit, labels and panel (:func:`locomo_exp.trust.job.run_trust`).

        Its numbers and words go into the judge's summary (the report renders them).
        """
        from locomo_exp.judge.spend import note_paid
        from locomo_exp.trust.job import run_trust

        assert inp.trust_plan is not None
        try:
            trust = run_trust(inp.trust_plan, inp.loaded.records, ctx.cfg.judge, judged.result,
                              start_dir=ctx.start_dir, category_names=ctx.cfg.category_names,
                              calls_stop=ctx.calls_stop, spend=ctx.spend)
        except BaseException as error:
            note_paid(error, ctx.spend, judged.result.summary)
            raise
        judged.result.summary["trust"] = trust.to_json()
        return replace(judged, trust=trust)

    def judge_failed(self, inp: LocomoInput, error: BaseException, ctx: JobContext,
                     write_dir: Path) -> LocomoInput:
        """Write the outputs again with the judge's status (``failed: ...``, pending ...)."""
        from locomo_exp.judge.spend import note_paid

        inp.status["judge"] = judge_status(error)
        note_paid(error, ctx.spend, None)
        try:
            record = _write(build_locomo_run(ctx.cfg, inp.loaded, inp.lexical,
                                             status=inp.status, answer_key=inp.answer_key),
                            write_dir)
        except Exception:  # never hide the judge's own error
            log.exception("could not record the judge status in %s", ctx.output_dir)
            return inp
        return replace(inp, record=record)

    # -- outputs, MLflow, failure -------------------------------------------------------------
    def write(self, inp: LocomoInput, judged: LocomoJudged | None, ctx: JobContext,
              write_dir: Path) -> Written:
        """The judged run built and written (else the record written), and questions.html.

        Raises:
            OSError: a file cannot be written.
        """
        cfg = ctx.cfg
        written = inp.record
        if judged is not None:
            from locomo_exp.trust.checks import warning_status

            inp.status["judge"] = warning_status(  # "warning: J inflated (...)" when checked
                judged.result.finished_status(cfg.judge.max_error_rate), judged.trust.warnings)
            gate = judged.trust.audit.gate if judged.trust.audit is not None else None
            if gate is not None and gate.fails_run:
                inp.status["judge_audit"] = f"failed: {gate.message}"
            written = _write(build_locomo_run(cfg, inp.loaded, inp.lexical, judged.result,
                                              status=inp.status, answer_key=inp.answer_key),
                             write_dir)
        assert isinstance(written, LocomoWritten) and written.run is not None  # the record
        written.questions = written.run.questions  # every question (and audit control)
        write_locomo_questions(write_dir, f"{ctx.data_path.name} · {cfg.scorer.name.value}",
                               written.questions, written.files)
        return written

    def written_metrics(self, written: Written, ctx: JobContext) -> dict[str, float]:
        """Every metric of the run (:func:`locomo_exp.tracking.run_metrics`)."""
        from locomo_exp import tracking

        return tracking.run_metrics(written.typed_summary, ctx.cfg.category_names)

    def track(self, written: Written, metrics: dict[str, float], ctx: JobContext,
              logged: dict[str, str], judged: LocomoJudged | None, run: Any) -> None:
        """Params, headline metrics, tags, artifacts and tables (:func:`.track.track_run`)."""
        from locomo_exp.benchmarks.locomo.track import track_run

        track_run(written, metrics, ctx, logged,
                  judged.result.summary if judged is not None else None, run.info.run_id)

    def failure(self, judged: LocomoJudged | None, written: Written, ctx: JobContext,
                where: str) -> Exception | None:
        """No usable J (:class:`JudgeErrorRateExceeded`), or a failed audit gate."""
        from locomo_exp.benchmarks.locomo.track import judge_failure

        return judge_failure(judged, written, ctx, where)
