"""One scoring job: read a results file, score it, write outputs, log to MLflow.

:func:`run_experiment` is the plain function behind ``python -m locomo_exp``; tests call
it directly. It never changes the working directory: relative paths are resolved
against ``start_dir`` (the directory the user started in).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from omegaconf import OmegaConf

from locomo_exp import __version__, tracking
from locomo_exp.config import ExperimentConfig
from locomo_exp.data import LoadedResults, LoadedRuns, expand_paths, load_data
from locomo_exp.data.info import input_info, stored_judge_section
from locomo_exp.data.input_file import absolute_path, check_regular_file
from locomo_exp.report import render_report
from locomo_exp.report.card import build_card
from locomo_exp.report.html import render_report_html
from locomo_exp.report.plots import (
    CATEGORY_PLOT,
    J_DISTRIBUTION_PLOT,
    plot_category_scores,
    plot_j_distribution,
)
from locomo_exp.report.run_dir import (
    atomic_write_jsonl,
    atomic_write_text,
    check_output_dir,
    check_writable,
    clear_output_dir,
)
from locomo_exp.results import InputInfo, QARecord, RunSummary
from locomo_exp.scoring import F1_VERSIONS, LEXICAL_SPECS, score_lexical
from locomo_exp.scoring.repeated_runs import runs_section
from locomo_exp.scoring.specs import output_version
from locomo_exp.scoring.summary import analyse, build_summary

log = logging.getLogger(__name__)

OUTPUT_FILES = ("report.md", "scores.jsonl", "summary.json", "config.yaml")
CARD_FILE = "card.json"
REPORT_HTML = "report.html"
"""The report as one HTML page with its plots inline (MLflow's artifact viewer renders it)."""
"""Files written to the output directory of every run."""

LOG_FILE = "locomo_exp.log"
"""The job's log, written by Hydra into the output dir (``hydra.job.name``); uploaded to MLflow."""


JUDGE_RUNNING = "running: not finished (the job stopped before the judge ended)"
"""``summary["status"]["judge"]`` while the judge runs; stays if the process is killed."""


def judge_status(error: BaseException) -> str:
    """The ``summary["status"]["judge"]`` text for a judge that did not finish.

    Args:
        error: what stopped the judge. An exception with a ``run_status`` attribute
            (e.g. ``"interrupted"``) gives that text; ``KeyboardInterrupt`` gives
            ``"interrupted"``; a pending batch gives ``"pending: <message>"``.

    Returns:
        ``"interrupted"``, ``"pending: ..."`` or ``"failed: <message>"``.
    """
    given = getattr(error, "run_status", None)
    if isinstance(given, str) and given:
        return given
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    message = str(error).strip() or type(error).__name__
    if type(error).__name__ == "JudgeBatchPending":
        return f"pending: {message}"
    return f"failed: {message}"


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


def _plain(value: Any) -> Any:
    """Dataclasses as dicts, enums as their values, lists and dicts walked.

    What ``OmegaConf.to_container(OmegaConf.structured(cfg), enum_to_str=True)`` gives
    for the typed config, without building an OmegaConf node tree (0.1 s per call with
    the baselines loaded).
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _config_yaml(cfg: ExperimentConfig) -> str:
    """The resolved config as YAML (``config.yaml``), every value as the job used it."""
    return OmegaConf.to_yaml(OmegaConf.create(_plain(cfg)))


def _config_tree(cfg: ExperimentConfig) -> dict[str, Any]:
    tree = cast(dict[str, Any], _plain(cfg))
    tree["baselines"] = sorted(tree.get("baselines") or {})  # names only; numbers live in conf/
    return tree


def score_rows(
    records: list[QARecord],
    lexical: list[dict[str, float]],
    category_names: dict[int, str],
    judge_rows: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One dict per question, as written to ``scores.jsonl``.

    Args:
        records: the scored records.
        lexical: per-record lexical scores (0-1), or empty.
        category_names: display names by id.
        judge_rows: question id -> judge fields (``j_mean`` 0-100, ``j_runs`` ...), or ``None``.

    Returns:
        Rows with ids, category id and name, question, ground truth, prediction, latency
        fields and ``stored_judge_score`` (another judge's verdict, 0-100) when present in
        the input, and every per-question metric.
    """
    rows: list[dict[str, Any]] = []
    for index, record in enumerate(records):
        row: dict[str, Any] = {
            "question_id": record.question_id,
            "conversation_id": record.conversation_id,
            "category": record.category,
            "category_name": category_names.get(record.category),
            "question": record.question,
            "ground_truth": record.ground_truth,
            "prediction": record.prediction,
            "n_references": len(record.gold_references),
            "prediction_missing": record.prediction_missing,
        }
        for name in ("search_latency_s", "total_latency_s", "context_tokens", "stored_judge_score"):
            if getattr(record, name) is not None:
                row[name] = getattr(record, name)
        if lexical:
            row.update(lexical[index])
        if judge_rows is not None and record.question_id in judge_rows:
            row.update(judge_rows[record.question_id])
        rows.append(row)
    return rows


def _input_info(loaded: LoadedResults) -> InputInfo:
    return InputInfo.from_json(input_info(loaded))


def metric_versions(cfg: ExperimentConfig, with_lexical: bool) -> dict[str, str]:
    """Version text of every lexical metric of the run, as written into ``summary.json``.

    Args:
        cfg: the run's config (``f1.variant``, ``f1.bleu1``).
        with_lexical: whether F1 was computed (``{}`` otherwise).

    Returns:
        ``{"f1": "f1_<variant> (f1.variant=<variant>)", "f1_locomo": ..., ..., "bleu1"?: ...}``
        in :data:`~locomo_exp.scoring.specs.LEXICAL_SPECS` order.
    """
    if not with_lexical:
        return {}
    variant = cfg.f1.variant.value
    versions = {"f1": f"f1_{variant} (f1.variant={variant})"}
    versions.update(
        {
            spec.metric: output_version(spec)
            for spec in LEXICAL_SPECS
            if spec.kind == "f1" or cfg.f1.bleu1
        }
    )
    return versions


def _write_outputs(
    output_dir: Path,
    cfg: ExperimentConfig,
    loaded: LoadedResults,
    lexical: list[dict[str, float]],
    judge_result: Any = None,
    status: dict[str, str] | None = None,
    answer_key: dict[str, Any] | None = None,
) -> tuple[RunSummary, list[Path], list[dict[str, Any]]]:
    versions = metric_versions(cfg, bool(lexical))
    judge_rows = None
    judge_summary = None
    if judge_result is not None:
        judge_summary = judge_result.summary
        versions["judge"] = str(judge_summary.get("prompt_version"))
        judge_rows = {qid: judge_result.question_json(qid) for qid in judge_result.per_question}
    rows = score_rows(loaded.records, lexical, cfg.category_names, judge_rows)
    analysis = analyse(
        rows,
        protocol=(judge_summary.get("krippendorff_level") or judge_summary.get("protocol"))
        if judge_summary else None,
        bootstrap_samples=cfg.report.bootstrap_samples,
        seed=cfg.report.seed,
    )
    summary = build_summary(
        loaded.records,
        lexical,
        input_info=_input_info(loaded),
        versions=versions,
        category_names=cfg.category_names,
        judge=judge_summary,
        status=status,
        analysis=analysis,
        stored_judge_detail=stored_judge_section(loaded),
        stored_metrics=loaded.stored_metrics,
        runs=loaded.runs_summary,
    )
    plots = [
        plot.name
        for plot in (
            plot_category_scores(summary, cfg.baselines, output_dir / CATEGORY_PLOT),
            plot_j_distribution(rows, output_dir / J_DISTRIBUTION_PLOT),
        )
        if plot is not None
    ]
    paths = [output_dir / name for name in OUTPUT_FILES]
    report, scores, summary_path, config_path = paths
    # each file atomically (temp name + os.replace): a failure never leaves a truncated file
    summary_json = summary.to_json()
    if answer_key is not None:
        summary_json["answer_key"] = answer_key
    tree = _config_tree(cfg)
    if answer_key is not None:
        tree["data"]["errata"] = answer_key["path"]  # resolved: the card hashes the file
    card = build_card(tree, summary_json)
    atomic_write_jsonl(scores, rows)
    atomic_write_text(summary_path, json.dumps(summary_json, indent=2, ensure_ascii=False) + "\n")
    report_text = render_report(summary, cfg.baselines, plots, card, answer_key)
    atomic_write_text(report, report_text)
    html_path = output_dir / REPORT_HTML
    images = {name: (output_dir / name).read_bytes() for name in plots}
    atomic_write_text(html_path, render_report_html(report_text, images, loaded.path.name))
    atomic_write_text(config_path, _config_yaml(cfg))
    atomic_write_text(output_dir / CARD_FILE, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    paths += [output_dir / CARD_FILE, html_path]
    paths += [output_dir / name for name in plots]
    return summary, paths, rows


def _load(cfg: ExperimentConfig, start_dir: Path) -> LoadedResults:
    """Read and validate ``data``; for ``data.runs`` run 1 with the stored J of every run."""
    loaded = load_data(cfg.data, start_dir, cfg.category_names)
    if isinstance(loaded, LoadedRuns):
        return replace(
            loaded.runs[0], across_runs=loaded.stored_j_across_runs(), runs=loaded.runs
        )
    return loaded


def _run_name(cfg: ExperimentConfig, data_path: Path, run_name: str | None = None) -> str:
    if run_name:
        return run_name
    if cfg.tracking.run_name:
        return cfg.tracking.run_name
    variant = "" if cfg.f1.variant.value == "locomo" else f" · f1={cfg.f1.variant.value}"
    sample = f" · sample {cfg.data.limit}" if cfg.data.limit else ""  # not the full benchmark
    return f"{data_path.stem} · {cfg.scorer.name.value}{variant}{sample}"


def run_experiment(
    cfg: ExperimentConfig,
    output_dir: Path,
    start_dir: Path | None = None,
    *,
    parent_run_id: str | None = None,
    extra_tags: dict[str, str] | None = None,
    run_name: str | None = None,
    swept_keys: Sequence[str] = (),
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

    Returns:
        :class:`ExperimentResult`.

    Raises:
        locomo_exp.report.run_dir.OutputDirInUse: ``output_dir`` already holds a run's
            ``report.md``/``summary.json``/``scores.jsonl`` and ``cfg.overwrite`` is false
            (with ``overwrite`` those files and the run's plots are removed first).
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
    check_writable(output_dir)  # one clear line for a read-only directory, before any work
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
        check_regular_file(resolve_path(cfg.data.errata, start_dir))  # before any work
    if cfg.scorer.uses_judge:
        from locomo_exp.judge import preflight_judge

        preflight_judge(cfg.judge, [], start_dir=start_dir)
    loaded = _load(cfg, start_dir)  # validated before any MLflow run or removal
    if cfg.overwrite and dir_state != "empty":
        clear_output_dir(output_dir)  # the old run goes only once the new input is good

    tracking_uri = None
    run_context: Any
    if cfg.tracking.enabled:
        tracking_uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        tags = {
            **tracking.run_tags(
                version=__version__,
                scorer=cfg.scorer.name.value,
                f1_variant=cfg.f1.variant.value,
                data_file=data_path.name,
            ),
            **(extra_tags or {}),
        }
        run_context = tracking.mlflow_run(
            tracking_uri=tracking_uri,
            experiment=cfg.tracking.experiment,
            run_name=_run_name(cfg, data_path, run_name),
            tags=tags,
            parent_run_id=parent_run_id,
            log_file=output_dir / LOG_FILE,
        )
    else:
        from contextlib import nullcontext

        run_context = nullcontext()

    logged_params: dict[str, str] = {}
    pending: Exception | None = None
    with run_context as run:
        if run is not None:
            logged_params = tracking.config_measurement_params(
                _config_tree(cfg), judge_ran=cfg.scorer.uses_judge, swept_keys=swept_keys
            )
            tracking.log_params(logged_params)
        log.info(
            "read %d records from %s (format %s)", len(loaded.records), data_path, loaded.format
        )
        if loaded.format == "mem0" and cfg.f1.variant.value != "mem0":
            log.info(
                "%s is Mem0-harness output: its own f1_score and the Mem0 paper use the Mem0 "
                "F1 (f1=mem0); the reported F1 here is f1_%s (all variants are in the report)",
                data_path.name,
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
        status = {"f1": "ok"} if cfg.scorer.uses_f1 else {}
        if cfg.scorer.uses_judge:
            status["judge"] = JUDGE_RUNNING
        summary, files, rows = _write_outputs(
            output_dir, cfg, loaded, lexical, status=status, answer_key=answer_key
        )

        judge_result = None
        if cfg.scorer.uses_judge:
            from locomo_exp.judge import JudgeBatchPending, preflight_judge, run_judge
            from locomo_exp.report.trust import render_trust_sections
            from locomo_exp.tracking.trust import trust_metrics
            from locomo_exp.trust.job import plan_trust, run_trust

            try:
                preflight_judge(cfg.judge, loaded.records)
                trust_plan = plan_trust(loaded.records, cfg.judge, start_dir=start_dir)
                judge_result = run_judge(
                    loaded.records,
                    cfg.judge,
                    start_dir=start_dir,
                    category_names=cfg.category_names,
                )
                trust = run_trust(
                    trust_plan, loaded.records, cfg.judge, judge_result,
                    start_dir=start_dir, category_names=cfg.category_names,
                )
                if not cfg.judge.dry_run:  # a dry run's are empty
                    trust.summary["sections"] = render_trust_sections(trust, cfg.category_names)
                    trust.summary["metrics"] = trust_metrics(
                        audit=trust.audit,
                        labels=trust.labels,
                        stored=trust.stored,
                        corrected=trust.corrected,
                        panel=trust.panel,
                        category_names=dict(cfg.category_names) if cfg.category_names else None,
                    )
                judge_result.summary["trust"] = trust.summary
            except BaseException as error:  # the report says the judge did not finish
                status["judge"] = judge_status(error)
                try:
                    summary, files, rows = _write_outputs(
                        output_dir, cfg, loaded, lexical, status=status, answer_key=answer_key
                    )
                except Exception:  # never hide the judge's own error
                    log.exception("could not record the judge status in %s", output_dir)
                if not isinstance(error, JudgeBatchPending):
                    raise
                pending = error  # judge.batch.wait=false: collect later
                if run is not None:
                    tracking.set_tags(tracking.pending_batch_tags(error.batch_ids))
            else:
                status["judge"] = judge_result.finished_status(cfg.judge.max_error_rate)
                if trust.gate is not None and trust.gate.fails_run:
                    status["judge_audit"] = f"failed: {trust.gate.message}"
                summary, files, rows = _write_outputs(
                    output_dir, cfg, loaded, lexical, judge_result, status=status,
                    answer_key=answer_key,
                )
                if run is not None:
                    tracking.set_tags(
                        tracking.judge_tags(judge_result.summary, dry_run=cfg.judge.dry_run)
                    )

        metrics = tracking.run_metrics(summary, cfg.category_names)
        if run is not None:
            extra_params = tracking.input_params(
                sha256=loaded.sha256,
                format_detected=loaded.format,
                f1_version=F1_VERSIONS[cfg.f1.variant.value],
            )
            card = json.loads((output_dir / CARD_FILE).read_text(encoding="utf-8"))
            extra_params.update(tracking.card_params(card))
            if judge_result is not None:
                extra_params.update(tracking.judge_params(judge_result.summary))
            # each key once: MLflow refuses a second, different value (docs/field_notes.md §5)
            tracking.log_params({k: v for k, v in extra_params.items() if k not in logged_params})
            tracking.log_metrics(tracking.headline_metrics(metrics))  # the rest: metrics.json
            tracking.log_dict(tracking.finite_metrics(metrics), tracking.METRICS_ARTIFACT)
            tracking.log_dict(
                tracking.resolved_config(_config_tree(cfg)), tracking.RESOLVED_CONFIG_ARTIFACT
            )
            tracking.set_tags(
                {
                    tracking.NOTE_TAG: tracking.run_description(
                        metrics, card, summary.to_json().get("status") or {}
                    )
                }
            )
            tracking.log_artifacts(files)
            tracking.log_table(rows, "scores_table.json")
        if judge_result is not None and status["judge"] != "ok":  # rate exceeded, no verdict
            raise JudgeErrorRateExceeded(
                f"{status['judge'].removeprefix('failed: ')}: "
                f"{judge_result.summary.get('counts')}; outputs are in {output_dir}"
            )
        if judge_result is not None and status.get("judge_audit", "ok") != "ok":
            from locomo_exp.trust.job import JudgeAuditFailed

            gate_message = trust.gate.message if trust.gate is not None else "judge audit failed"
            raise JudgeAuditFailed(f"{gate_message}; outputs are in {output_dir}")

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


__all__ = ["ExperimentResult", "JudgeErrorRateExceeded", "resolve_path", "run_experiment"]
