"""One BEAM job: answers file -> both profiles' figures -> outputs -> MLflow.

Stored rubric-item verdicts (mem0's memory-benchmarks layout) are scored with no judge
call. Outputs: ``report.md``, ``summary.json``, ``scores.jsonl``, ``card.json``,
``config.yaml`` (docs/beam.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from locomo_exp import tracking
from locomo_exp.benchmarks.beam import tracking as beam_tracking
from locomo_exp.benchmarks.beam.judged import BeamJudged, item_config, judge_beam, spend_parts
from locomo_exp.benchmarks.beam.load import read_beam
from locomo_exp.benchmarks.beam.report import render_console, render_report
from locomo_exp.benchmarks.beam.summary import build_card, build_summary, score_rows
from locomo_exp.benchmarks.file_plugin import plugin_mlflow_run, single_data_file
from locomo_exp.config import BeamProfile, ExperimentConfig
from locomo_exp.data.input_file import check_regular_file
from locomo_exp.data.load import expand_paths
from locomo_exp.judge.spend import plan_job_spend
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.stop import CallsStop
from locomo_exp.report.run_dir import (
    atomic_write_jsonl,
    atomic_write_text,
    check_writable,
    prepare_output_dir,
)
from locomo_exp.results.money import round_money

LOCOMO_ONLY_DATA = ("limit", "runs", "errata", "categories_from")
"""``data.*`` settings a BEAM run does not read: refused when set, never silently ignored."""

JUDGE_ONLY = (
    "{setting}: read by judged BEAM runs only (scorer=judge); stored item verdicts are scored "
    "under both profiles with no option"
)


@dataclass
class BeamRunResult:
    """What one BEAM job produced.

    Attributes:
        output_dir: where the outputs are.
        summary: the content of ``summary.json``.
        metrics: the MLflow metrics.
        files: the output files written.
        console: the lines the command line prints.
        run_id: the MLflow run id, or ``None`` with ``tracking=none``.
        tracking_uri: the MLflow store, or ``None``.
        exit_status: 1 when the judge audit's gate (``judge.audit.max_false_accept`` /
            ``max_false_reject``) failed, after the outputs were written; else 0.
    """

    output_dir: Path
    summary: dict[str, Any]
    metrics: dict[str, float]
    files: list[Path] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    run_id: str | None = None
    tracking_uri: str | None = None
    exit_status: int = 0


def _check_settings(cfg: ExperimentConfig) -> None:
    given = [f"data.{name}={getattr(cfg.data, name)}" for name in LOCOMO_ONLY_DATA
             if getattr(cfg.data, name) is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not available for BEAM answers, which are scored "
                         "whole; drop the setting")
    official = BeamProfile(cfg.beam.profile) is BeamProfile.official
    if not cfg.scorer.uses_judge:
        if official or cfg.beam.strict:
            raise ValueError(JUDGE_ONLY.format(
                setting="beam.strict=true" if cfg.beam.strict else "beam.profile=official"))
        return
    if cfg.beam.strict and not official:
        raise ValueError("beam.strict=true fixes the quirks of beam.profile=official; add "
                         "beam.profile=official (beam-nugget has none to fix)")


def settings_problems(cfg: ExperimentConfig) -> list[str]:
    """The job's settings a BEAM run refuses (each one line), checked before any job starts.

    Args:
        cfg: the typed config.

    Returns:
        ``[]`` when the settings are a BEAM job's; else the line :func:`run_beam` would stop
        on (LoCoMo-only ``data.*`` keys, ``beam.*`` without a judge, a judge protocol the
        item calls cannot use).
    """
    try:
        _check_settings(cfg)
        if cfg.scorer.uses_judge:
            item_config(cfg.judge, cfg.beam)
    except ValueError as error:
        return [str(error)]
    return []


def _write(output_dir: Path, cfg: ExperimentConfig, summary: dict[str, Any],
           rows: list[dict[str, Any]]) -> list[Path]:
    """Write the run's files (the judge cost rounded as money)."""
    card = build_card(summary)
    files = {
        "report.md": render_report(summary, card),
        "summary.json": json.dumps(round_money(summary), indent=2, ensure_ascii=False) + "\n",
        "card.json": json.dumps(round_money(card), indent=2, ensure_ascii=False) + "\n",
        "config.yaml": OmegaConf.to_yaml(OmegaConf.structured(cfg)),
    }
    paths = [atomic_write_jsonl(output_dir / "scores.jsonl", rows)]
    for name, text in files.items():
        paths.append(atomic_write_text(output_dir / name, text))
    return paths


def run_beam(cfg: ExperimentConfig, output_dir: Path, start_dir: Path | None = None, *,
             client: JudgeClient | None = None, calls_stop: CallsStop | None = None,
             run_name: str | None = None, parent_run_id: str | None = None,
             extra_tags: dict[str, str] | None = None) -> BeamRunResult:
    """Score a BEAM answers file with both profiles; ``scorer=judge`` judges every item first.

    Args:
        cfg: the typed config (``data.path``, ``data.setting``, ``report``, ``tracking``;
            ``judge`` and ``beam`` for a judged run).
        output_dir: where to write the outputs.
        start_dir: the directory relative paths are resolved against (default: cwd).
        client: a judge client to use instead of the provider's SDK (tests).
        calls_stop: set by another thread to stop paying (judged runs; calls stay cached).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file stem> · beam``); a sweep job's name.
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).

    Returns:
        :class:`BeamRunResult`.

    Raises:
        DataValidationError: a bad answers file (one line: file, record, field).
        ValueError: several files, LoCoMo-only settings, ``beam.*`` without a judge, or a
            LoCoMo ``judge.protocol``.
        JudgeError: also the whole job's estimate above ``judge.max_cost_usd`` (nothing
            written, no call made).
        JudgeError, JudgeInterrupted, CallsStopped, JudgeBatchPending: from the judge
            (:func:`locomo_exp.benchmarks.beam.judged.judge_beam`); completed calls are cached.
        locomo_exp.report.run_dir.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.
    """
    start_dir = (start_dir or Path.cwd()).resolve()
    output_dir = Path(output_dir).resolve()
    _check_settings(cfg)
    if cfg.scorer.uses_judge:  # settings, key, template: one line before anything is written
        from locomo_exp.judge import preflight_judge

        preflight_judge(item_config(cfg.judge, cfg.beam), [], start_dir=start_dir)
    if cfg.tracking.enabled:  # one line before any work
        tracking.check_tracking_uri(
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir),
            connect_timeout_s=cfg.tracking.connect_timeout_s,
        )
    check_writable(output_dir)
    path = single_data_file(cfg, start_dir)
    if path is None:
        raise ValueError("a BEAM run scores one answers file: give one data.path")
    check_regular_file(path)
    reference = expand_paths(cfg.data.reference, start_dir)[0] if cfg.data.reference else None
    if reference is not None and not reference.exists():
        raise ValueError(f"data.reference={cfg.data.reference}: no such file or folder")
    inp = read_beam(path, setting=cfg.data.setting, reference=reference)
    judged: BeamJudged | None = None
    spend = None  # judge.max_cost_usd over items, alignment and audit: refused before writing
    if cfg.scorer.uses_judge and cfg.judge.max_cost_usd is not None and not cfg.judge.dry_run:
        spend = plan_job_spend(spend_parts(inp, cfg.judge, cfg.beam), cfg.judge.max_cost_usd,
                               start_dir)
    if cfg.scorer.uses_judge:  # every call cached: a re-run or a resumed run pays nothing twice
        judged = judge_beam(inp, cfg.judge, cfg.beam, start_dir=start_dir, client=client,
                            calls_stop=calls_stop, spend=spend)
        inp = judged.inp or inp
    prepare_output_dir(output_dir, cfg.overwrite)  # an old run is removed only for valid input
    section = judged.section() if judged is not None else None
    summary = build_summary(inp, samples=cfg.report.bootstrap_samples, seed=cfg.report.seed,
                            judged=section)
    run_context, tracking_uri = plugin_mlflow_run(
        cfg, start_dir, output_dir,
        run_name=run_name or cfg.tracking.run_name or f"{path.stem} · beam",
        tags={**beam_tracking.run_tags(summary), **(extra_tags or {})},
        parent_run_id=parent_run_id,
    )
    with run_context as run:
        strict = bool(judged and judged.strict)
        rows = score_rows(inp, strict=strict) if judged is None or judged.inp else []
        files = _write(output_dir, cfg, summary, rows)
        metrics = beam_tracking.run_metrics(summary)
        if run is not None:
            tracking.log_params(beam_tracking.run_params(summary))
            tracking.log_metrics(metrics)
            tracking.set_tags(tracking.warning_tags(summary["warnings"]))
            tracking.log_artifacts(files)
    console = render_console(summary)
    console += ["", f"Report: {output_dir / 'report.md'}"]
    if run is not None and tracking_uri is not None:
        console.append(
            f"MLflow: run {run.info.run_id} in experiment '{cfg.tracking.experiment}'.\n"
            f"{tracking.open_ui_hint(tracking_uri, run.info.experiment_id)}"
        )
    gate = ((summary.get("judge") or {}).get("audit") or {}).get("gate") or {}
    if gate.get("fails_run"):
        console.append(f"error: {gate['message']}")
    return BeamRunResult(
        output_dir=output_dir, summary=summary, metrics=metrics, files=files, console=console,
        run_id=run.info.run_id if run is not None else None, tracking_uri=tracking_uri,
        exit_status=1 if gate.get("fails_run") else 0,
    )


__all__ = ["BeamRunResult", "run_beam", "settings_problems"]
