"""One scoring job: read a results file, score it, write outputs, log to MLflow.

:func:`run_experiment` is the plain function behind ``python -m locomo_exp``; tests call
it directly. It never changes the working directory: relative paths are resolved
against ``start_dir`` (the directory the user started in).
"""

from __future__ import annotations

import functools
import gc
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp import tracking
from locomo_exp.config import ExperimentConfig
from locomo_exp.data import LoadedResults, LoadedRuns, expand_paths, load_data
from locomo_exp.data.input_file import absolute_path, check_regular_file
from locomo_exp.data.layouts import layout_spec
from locomo_exp.report.outputs import CARD_FILE, config_tree, write_outputs
from locomo_exp.report.question_rows import write_locomo_questions
from locomo_exp.report.run_dir import check_output_dir, check_writable
from locomo_exp.report.run_swap import RunReplacement, recover_cut_swap, replacing_run
from locomo_exp.results import RunSummary, interrupts
from locomo_exp.results.status import JUDGE_RUNNING, judge_status
from locomo_exp.scoring import F1_VERSIONS, score_lexical
from locomo_exp.scoring.repeated_runs import runs_section

if TYPE_CHECKING:
    from locomo_exp.llm.stop import CallsStop

log = logging.getLogger(__name__)


LOG_FILE = "locomo_exp.log"
"""The job's log, written by Hydra into the output dir (``hydra.job.name``); uploaded to MLflow."""


class JudgeErrorRateExceeded(RuntimeError):
    """The judge ended without a usable J (too many API errors, or no valid verdict)."""


@dataclass
class ExperimentResult:
    """What one job produced.

    Attributes:
        output_dir: where ``report.md``, ``scores.jsonl``, ``summary.json`` are.
        run_summary: the run's typed results (:attr:`summary` is their JSON).
        metrics: the flat metrics logged to MLflow.
        run_id: the MLflow run id, or ``None`` with ``tracking=none``.
        tracking_uri: the MLflow store, or ``None``.
        experiment: the MLflow experiment name, or ``None``.
        files: the output files written.
        experiment_id: the MLflow experiment id, or ``None``.
    """

    output_dir: Path
    run_summary: RunSummary
    metrics: dict[str, float]
    run_id: str | None = None
    tracking_uri: str | None = None
    experiment: str | None = None
    files: list[Path] = field(default_factory=list)
    experiment_id: str | None = None

    @property
    def report_path(self) -> Path:
        """``report.md`` of the run."""
        return self.output_dir / "report.md"

    @property
    def summary(self) -> dict[str, Any]:
        """The content of ``summary.json`` (:meth:`RunSummary.to_json`)."""
        return self.run_summary.to_json()


def resolve_path(path: str, start_dir: Path) -> Path:
    """Resolve a user path against the start directory (``~`` expanded)."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else absolute_path(start_dir / candidate)


def _load(cfg: ExperimentConfig, start_dir: Path) -> LoadedResults:
    """Read and validate ``data``; for ``data.runs`` run 1 with the stored J of every run."""
    loaded = load_data(cfg.data, start_dir, cfg.category_names)
    if isinstance(loaded, LoadedRuns):
        return replace(
            loaded.runs[0], across_runs=loaded.stored_j_across_runs(), runs=loaded.runs
        )
    return loaded


WARM_UP_MODULES = (
    "matplotlib.figure",  # the report's plots (report/plots.py)
    "matplotlib.backends.backend_agg",
    "pandas",  # mlflow.log_table builds a DataFrame
)
"""Modules a judge job imports after its calls, imported while the calls wait instead."""


def warm_up_outputs(*, freeze: bool = False) -> None:
    """Import :data:`WARM_UP_MODULES` (on the MLflow thread, during a judge job's calls).

    Args:
        freeze: then ``gc.freeze()`` (see ``run_experiment(long_lived=...)``).
    """
    import importlib

    for name in WARM_UP_MODULES:
        importlib.import_module(name)
    if freeze:
        gc.freeze()


def _calls_start(later: tracking.PendingRun | None, long_lived: bool) -> None:
    """Right before the judge's first call: freeze the heap, start the MLflow thread."""
    if long_lived:
        gc.freeze()
    if later is not None:
        later.start()


def _stop_calls(calls_stop: CallsStop, error: BaseException) -> None:
    """The MLflow run could not be set up: stop paying for judge calls (a thread's callback)."""
    calls_stop.set(f"the MLflow run could not be set up: {error}", error)


def _run_name(cfg: ExperimentConfig, data_path: Path, run_name: str | None = None) -> str:
    if run_name:
        return run_name
    if cfg.tracking.run_name:
        return cfg.tracking.run_name
    return tracking.single_run_name(  # file, scorer, judge, F1 variant, sample
        data_path.stem, cfg.scorer.name.value, f1_variant=cfg.f1.variant.value,
        limit=cfg.data.limit, judge_model=cfg.judge.model if cfg.scorer.uses_judge else None,
        judge_runs=cfg.judge.runs)


def run_experiment(
    cfg: ExperimentConfig,
    output_dir: Path,
    start_dir: Path | None = None,
    *,
    parent_run_id: str | None = None,
    extra_tags: dict[str, str] | None = None,
    run_name: str | None = None,
    swept_keys: Sequence[str] = (),
    long_lived: bool = False,
) -> ExperimentResult:
    """Score one results file and write its outputs.

    Steps: validate the judge settings (no call yet) -> read and validate the file ->
    F1/BLEU-1 -> write outputs -> judge (if ``scorer`` is ``judge``/``both``) -> write
    outputs again -> log to MLflow. Outputs with F1 are on disk before the judge starts,
    and judge calls are cached, so a failing judge loses nothing already computed.

    Args:
        cfg: the typed config.
        output_dir: where to write ``report.md``, ``scores.jsonl``, ``summary.json``.
        start_dir: directory relative paths are resolved against (default: cwd).
        parent_run_id: MLflow parent run (sweeps); works across processes.
        extra_tags: extra MLflow tags.
        run_name: the MLflow run name (sweeps name children by their swept values);
            default ``tracking.run_name``, else ``<file> · <scorer>``.
        swept_keys: the keys a sweep varies, logged as params with the measurement's
            settings (:func:`locomo_exp.tracking.config_measurement_params`).
        long_lived: the process runs this one job (``python -m locomo_exp``): the objects
            alive when the judge's calls start, and those the MLflow thread's imports make,
            are moved out of the garbage collector's sight (``gc.freeze``), so that its
            collections do not walk them again (about 0.3 s of CPU in a judge job). In-process
            callers (tests, sweeps) keep the default: frozen garbage would stay until exit.

    Returns:
        :class:`ExperimentResult`.

    Raises:
        locomo_exp.report.run_dir.OutputDirInUse: ``output_dir`` already holds a run's
            ``report.md``/``summary.json``/``scores.jsonl`` and ``cfg.overwrite`` is false
            (with it the new run replaces that one once finished: ``report/run_swap.py``).
        locomo_exp.report.run_dir.OutputDirNotWritable: ``output_dir`` cannot be written.
        locomo_exp.data.DataValidationError: for unreadable or invalid input.
        locomo_exp.judge.JudgeError: for judge config or fatal API errors.
        JudgeErrorRateExceeded: when API errors exceed ``judge.max_error_rate``.
        locomo_exp.judge.JudgeBatchPending: ``judge.mode=batch`` with ``judge.batch.wait=false``
            and batches still processing; F1 outputs are written and the MLflow run is tagged
            ``judge.batch_status=pending``; the same command later collects.
    """
    start_dir = (start_dir or Path.cwd()).resolve()
    output_dir = Path(output_dir).resolve()
    if cfg.tracking.enabled:  # one line before any call or write (the run is made later)
        tracking.check_tracking_uri(
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir),
            connect_timeout_s=cfg.tracking.connect_timeout_s,
        )
    check_writable(output_dir)  # one clear line for a read-only directory, before any work
    recover_cut_swap(output_dir)  # a swap of runs cut by a killed job: finished or undone
    dir_state = check_output_dir(output_dir, cfg.overwrite)  # a finished run needs overwrite
    if not cfg.data.path and not cfg.data.runs:
        raise ValueError(
            "data.path is not set: pass data.path=<results file> (or use data=example)"
        )
    data_paths = expand_paths(cfg.data.runs or cfg.data.path, start_dir)  # a list or glob pools
    for path in data_paths:
        check_regular_file(path)  # before any MLflow run or API call; never opens a FIFO
    data_path = data_paths[0]
    if cfg.data.errata:
        check_regular_file(resolve_path(cfg.data.errata, start_dir), "errata file")
    if cfg.scorer.uses_judge:
        from locomo_exp.judge import preflight_judge

        preflight_judge(cfg.judge, [], start_dir=start_dir)
    loaded = _load(cfg, start_dir)  # validated before any MLflow run or removal
    trust_plan = spend = None
    if cfg.scorer.uses_judge:  # the records, control files, labels, panel: before any write
        from locomo_exp.judge import preflight_judge
        from locomo_exp.judge.spend import plan_job_spend
        from locomo_exp.trust.job import plan_trust, spend_parts

        source = _source_words(loaded)
        preflight_judge(cfg.judge, loaded.records, source=source)
        trust_plan = plan_trust(loaded.records, cfg.judge, start_dir=start_dir, source=source)
        spend = plan_job_spend(  # judge.max_cost_usd over answers, audit and panel
            spend_parts(trust_plan, loaded.records, cfg.judge), cfg.judge.max_cost_usd,
            start_dir, dry_run=cfg.judge.dry_run,
        )
    # overwrite=true: the new run is built beside the old one, swapped in once finished
    with replacing_run(output_dir, cfg.overwrite and dir_state != "empty") as replacement:
        return _score_and_write(
            cfg, output_dir, replacement, start_dir, loaded, data_path, trust_plan, spend,
            parent_run_id=parent_run_id, extra_tags=extra_tags, run_name=run_name,
            swept_keys=swept_keys, long_lived=long_lived,
        )


def _score_and_write(
    cfg: ExperimentConfig, output_dir: Path, replacement: RunReplacement, start_dir: Path,
    loaded: LoadedResults, data_path: Path, trust_plan: Any, spend: Any, *,
    parent_run_id: str | None,
    extra_tags: dict[str, str] | None, run_name: str | None, swept_keys: Sequence[str],
    long_lived: bool,
) -> ExperimentResult:
    """:func:`run_experiment` once the input is valid: outputs into ``replacement.write_dir``."""
    write_dir = replacement.write_dir  # output_dir, or the stage of a run replacing another
    tracking_uri = None
    run_context: Any
    logged_params: dict[str, str] = {}
    # a judge job's MLflow run is set up on a thread while its calls wait on the network
    deferred = cfg.tracking.enabled and cfg.scorer.uses_judge and not cfg.judge.dry_run
    calls_stop = None
    if cfg.tracking.enabled:
        tracking_uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        tags = {
            **tracking.run_tags(output_dir=str(output_dir.resolve())),
            **(extra_tags or {}),
        }
        logged_params = tracking.config_measurement_params(
            config_tree(cfg), judge_ran=cfg.scorer.uses_judge, swept_keys=swept_keys
        )
        spec = tracking.RunSpec(
            tracking_uri=tracking_uri,
            experiment=cfg.tracking.experiment,
            run_name=_run_name(cfg, data_path, run_name),
            tags=tags,
            parent_run_id=parent_run_id,
        )
        if deferred:
            from locomo_exp.judge import CallsStop

            calls_stop = CallsStop()  # a run that cannot be set up stops the judge's calls
            run_context = tracking.deferred_mlflow_run(
                replace(spec, params=logged_params),
                log_file=output_dir / LOG_FILE,
                then=functools.partial(warm_up_outputs, freeze=long_lived),
                on_failure=functools.partial(_stop_calls, calls_stop),
            )
        else:
            run_context = tracking.mlflow_run(spec, log_file=output_dir / LOG_FILE)
    else:
        from contextlib import nullcontext

        run_context = nullcontext()

    pending: Exception | None = None
    with run_context as started:
        later: tracking.PendingRun | None = started if deferred else None
        run = None if deferred else started
        if run is not None:
            tracking.log_params(logged_params)
        log.info(
            "read %d records from %s (format %s)", len(loaded.records), data_path, loaded.format
        )
        own_f1 = layout_spec(loaded.format).own_f1
        if own_f1 is not None and cfg.f1.variant.value != own_f1:
            log.info(
                "%s has the %s layout, whose harness reports F1 as f1=%s; the reported F1 "
                "here is f1_%s (all variants are in the report)",
                data_path.name,
                loaded.format,
                own_f1,
                cfg.f1.variant.value,
            )
        lexical = (
            score_lexical(loaded.records, cfg.f1.variant.value, cfg.f1.bleu1)
            if cfg.scorer.uses_f1
            else []
        )
        if loaded.runs and lexical:  # data.runs: every run scored, mean ± std across runs
            loaded = replace(loaded, runs_summary=runs_section(
                [run.records for run in loaded.runs], [run.label for run in loaded.runs],
                cfg.f1.variant.value, cfg.f1.bleu1))
        answer_key = None
        if cfg.data.errata and lexical:  # both keys, per category, with the ceilings
            from locomo_exp.scoring.errata import score_errata

            answer_key = score_errata(
                loaded.records, resolve_path(cfg.data.errata, start_dir), with_bleu1=cfg.f1.bleu1
            )
        elif cfg.data.errata:  # J only: not applied (the judge sees the original gold), read
            from locomo_exp.data.errata import load_errata

            load_errata(resolve_path(cfg.data.errata, start_dir))  # a bad file: one line
        interrupts.raise_if_received()  # a swallowed Ctrl-C: no outputs saying "ok"
        status = {"f1": "ok"} if cfg.scorer.uses_f1 else {}
        if cfg.scorer.uses_judge:
            status["judge"] = JUDGE_RUNNING
        summary, files, rows = write_outputs(  # a record before the judge spends anything
            write_dir, cfg, loaded, lexical, status=status, answer_key=answer_key,
            plots=not cfg.scorer.uses_judge,
        )

        judge_result = None
        if cfg.scorer.uses_judge:
            from locomo_exp.judge import CallsStopped, JudgeBatchPending, run_judge
            from locomo_exp.judge.spend import note_paid
            from locomo_exp.trust.checks import warning_status
            from locomo_exp.trust.job import run_trust

            assert trust_plan is not None  # planned above whenever the judge runs
            if spend is not None:  # one stop for the cap and the MLflow run
                calls_stop = spend.share_stop(calls_stop)
            try:
                try:
                    judge_result = run_judge(
                        loaded.records,
                        cfg.judge,
                        start_dir=start_dir,
                        category_names=cfg.category_names,
                        on_calls_start=functools.partial(_calls_start, later, long_lived),
                        calls_stop=calls_stop,
                        spend=spend,
                    )
                except CallsStopped as stopped:  # the audit's and panel's calls are left too
                    later_calls = sum(trust_plan.part_calls(cfg.judge))
                    raise stopped.widened(later=later_calls) from stopped.__cause__
                trust = run_trust(
                    trust_plan, loaded.records, cfg.judge, judge_result,
                    start_dir=start_dir, category_names=cfg.category_names, calls_stop=calls_stop,
                    spend=spend,
                )
                # numbers and words: the report renders them, tracking names them
                judge_result.summary["trust"] = trust.to_json()
            except BaseException as error:  # the report says the judge did not finish
                status["judge"] = judge_status(error)
                note_paid(error, spend, judge_result.summary if judge_result else None)
                try:
                    summary, files, rows = write_outputs(
                        write_dir, cfg, loaded, lexical, status=status, answer_key=answer_key
                    )
                except Exception:  # never hide the judge's own error
                    log.exception("could not record the judge status in %s", output_dir)
                if not isinstance(error, JudgeBatchPending):
                    raise
                pending = error  # judge.batch.wait=false: collect later
                run = later.wait() if later is not None else run
                if run is not None:
                    tracking.set_tags(tracking.pending_batch_tags(error.batch_ids))
            else:
                status["judge"] = warning_status(  # "warning: J inflated (...)" when checked
                    judge_result.finished_status(cfg.judge.max_error_rate), trust.warnings
                )
                gate = trust.audit.gate if trust.audit is not None else None
                if gate is not None and gate.fails_run:
                    status["judge_audit"] = f"failed: {gate.message}"
                summary, files, rows = write_outputs(
                    write_dir, cfg, loaded, lexical, judge_result, status=status,
                    answer_key=answer_key,
                )
                run = later.wait() if later is not None else run
                if run is not None:
                    tracking.set_tags(
                        tracking.judge_tags(judge_result.summary, dry_run=cfg.judge.dry_run)
                    )

        questions = write_locomo_questions(  # every question, sortable: questions.html
            write_dir, f"{data_path.name} · {cfg.scorer.name.value}", rows, files,
            cfg.judge.model if judge_result is not None else None)
        metrics = tracking.run_metrics(summary, cfg.category_names)
        run = later.wait() if later is not None else run
        if run is not None:
            extra_params = tracking.input_params(
                sha256=loaded.sha256,
                format_detected=loaded.format,
                f1_version=F1_VERSIONS[cfg.f1.variant.value],
            )
            card = json.loads((write_dir / CARD_FILE).read_text(encoding="utf-8"))
            extra_params.update(tracking.card_params(card))
            if judge_result is not None:
                extra_params.update(tracking.judge_params(judge_result.summary))
            # each key once: MLflow refuses a second, different value (docs/field_notes.md §5)
            tracking.log_params({k: v for k, v in extra_params.items() if k not in logged_params})
            tracking.log_metrics(tracking.headline_metrics(metrics))  # the rest: metrics.json
            tracking.log_dict(tracking.finite_metrics(metrics), tracking.METRICS_ARTIFACT)
            tracking.log_dict(
                tracking.resolved_config(config_tree(cfg)), tracking.RESOLVED_CONFIG_ARTIFACT
            )
            tracking.set_tags(
                {
                    tracking.NOTE_TAG: tracking.run_description(
                        metrics,
                        card,
                        summary.to_json().get("status") or {},
                        (summary.to_json().get("analysis") or {}).get("intervals"),
                        warnings=summary.warnings,
                    ),
                    **tracking.warning_tags(summary.warnings),  # MLflow shows "Finished"
                }
            )
            traces = cfg.tracking.questions and tracking.QuestionLogging(questions, run.info.run_id)
            tracking.log_artifacts(files)
            tracking.log_table(rows, "scores_table.json")
            tracking.log_table(tracking.interval_rows(metrics), tracking.INTERVALS_TABLE)
            if traces:
                traces.wait()  # logged on a thread while the artifacts upload
        if judge_result is not None and status["judge"].startswith("failed"):  # no verdict
            counts = judge_result.summary.get("counts") or {}
            failure = status["judge"].removeprefix("failed: ")
            outcomes = ", ".join(  # words, not a dict: valid 0, parse failure 16, ...
                f"{key.replace('_', ' ')} {counts[key]}"
                for key in ("valid", "parse_failure", "no_verdict", "api_error")
                if key in counts
            )
            if "out of" not in failure:  # "no valid judge verdict" already counts them
                failure += f" ({outcomes} of {counts.get('runs_total', 0)} judge runs)"
            failed: Exception = JudgeErrorRateExceeded(
                f"{failure}; scores.jsonl keeps each raw reply and error; {_where(replacement)}"
            )
            note_paid(failed, spend, judge_result.summary)  # the sweep summary shows it
            raise failed
        if judge_result is not None and status.get("judge_audit", "ok") != "ok":
            from locomo_exp.trust.job import JudgeAuditFailed

            gate_message = (
                trust.audit.gate.message if trust.audit is not None else "judge audit failed"
            )
            failed = JudgeAuditFailed(f"{gate_message}; {_where(replacement)}")
            note_paid(failed, spend, judge_result.summary)
            raise failed
        if pending is None:  # finished, every output written: now it replaces the old run
            interrupts.raise_if_received()  # a swallowed Ctrl-C: the old run stays
            replacement.commit()
            files = [replacement.final_path(path) for path in files]

    if pending is not None:
        raise pending  # after the run ended: F1 outputs and metrics are logged, J comes later
    return ExperimentResult(
        output_dir=output_dir,
        run_summary=summary,
        metrics=tracking.finite_metrics(metrics),
        run_id=run.info.run_id if run is not None else None,
        tracking_uri=tracking_uri,
        experiment=cfg.tracking.experiment if run is not None else None,
        files=files,
        experiment_id=run.info.experiment_id if run is not None else None,
    )


def _source_words(loaded: LoadedResults) -> str:
    """The answers file(s) the records come from, as a refusal line names them."""
    others = len(loaded.sources) - 1
    return str(loaded.path) + (f" (and {others} pooled file(s))" if others > 0 else "")


def _where(replacement: RunReplacement) -> str:
    """Where a failed run's outputs are: its directory, or none kept (the old run stays)."""
    if replacement.active:
        return f"those outputs are not kept: the earlier run in {replacement.output_dir} stays"
    return f"outputs are in {replacement.output_dir}"


__all__ = ["ExperimentResult", "JudgeErrorRateExceeded", "resolve_path", "run_experiment"]
