"""One LoCoMo-Plus job: a stored run -> both readings' figures -> outputs -> MLflow.

Stored verdicts (the authors' ``judged.json`` or kumiho's ``all_results.json``) are scored
with no judge call. Outputs: ``report.md``, ``summary.json``, ``scores.jsonl``,
``card.json``, ``config.yaml`` (docs/locomo_plus.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from locomo_exp import tracking
from locomo_exp.benchmarks.file_plugin import plugin_mlflow_run, single_data_file
from locomo_exp.benchmarks.locomo_plus import tracking as plus_tracking
from locomo_exp.benchmarks.locomo_plus.facts import NAME
from locomo_exp.benchmarks.locomo_plus.judged import (
    judge_config,
    judge_records,
    judge_section,
    judged_score_rows,
    read_judged,
)
from locomo_exp.benchmarks.locomo_plus.parsing import PARSERS
from locomo_exp.benchmarks.locomo_plus.report import render_console, render_report
from locomo_exp.benchmarks.locomo_plus.runs import StoredRun, read_stored_run
from locomo_exp.benchmarks.locomo_plus.summary import (
    build_card,
    build_judged_summary,
    build_summary,
    score_rows,
)
from locomo_exp.config import ExperimentConfig, JudgeConfig, ScorerName
from locomo_exp.data.input_file import check_regular_file
from locomo_exp.report.run_dir import (
    atomic_write_jsonl,
    atomic_write_text,
    check_writable,
    prepare_output_dir,
)

LOCOMO_ONLY_DATA = ("limit", "runs", "errata", "categories_from", "setting", "reference")
"""``data.*`` settings a stored LoCoMo-Plus run does not read: refused, never ignored."""

NO_F1 = (
    "scorer=both: F1 is not computed for LoCoMo-Plus runs in this version; use scorer=judge "
    "(a judge call per item) or the default scorer (stored verdicts)"
)


@dataclass
class PlusRunResult:
    """What one LoCoMo-Plus job produced.

    Attributes:
        output_dir: where the outputs are.
        summary: the content of ``summary.json``.
        metrics: the MLflow metrics (percent).
        files: the output files written.
        console: the lines the command line prints.
        run_id: the MLflow run id, or ``None`` with ``tracking=none``.
    """

    output_dir: Path
    summary: dict[str, Any]
    metrics: dict[str, float]
    files: list[Path] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    run_id: str | None = None


def check_settings(cfg: ExperimentConfig) -> None:
    """Refuse settings a stored LoCoMo-Plus run cannot honour, in one line.

    Raises:
        ValueError: an unknown ``judge.parser``, a LoCoMo-only ``data.*`` setting, or
            ``scorer=both``.
    """
    parser = str(cfg.judge.parser)
    if parser not in PARSERS:
        raise ValueError(f"judge.parser={parser}: unknown parser. Available: "
                         f"{', '.join(PARSERS)}")
    given = [f"data.{name}={getattr(cfg.data, name)}" for name in LOCOMO_ONLY_DATA
             if getattr(cfg.data, name) is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not available for a stored LoCoMo-Plus run, "
                         "which is scored whole; drop the setting")
    if cfg.scorer.name is ScorerName.both:
        raise ValueError(NO_F1)


def _write(output_dir: Path, cfg: ExperimentConfig, summary: dict[str, Any],
           rows: list[dict[str, Any]]) -> list[Path]:
    card = build_card(summary)
    files = {
        "report.md": render_report(summary, card),
        "summary.json": json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
        "card.json": json.dumps(card, indent=2, ensure_ascii=False) + "\n",
        "config.yaml": OmegaConf.to_yaml(OmegaConf.structured(cfg)),
    }
    paths = [atomic_write_jsonl(output_dir / "scores.jsonl", rows)]
    for name, text in files.items():
        paths.append(atomic_write_text(output_dir / name, text))
    return paths


def _judge(cfg: ExperimentConfig, judge_cfg: JudgeConfig, run: StoredRun, start_dir: Path
           ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Judge every item (or count the calls: ``judge.dry_run``); the summary and rows."""
    from locomo_exp.judge import run_judge

    result = run_judge(judge_records(run.rows), judge_cfg, start_dir=start_dir)
    section = judge_section(result)
    readings = None
    if result.dry_run_estimate is not None:
        section["dry_run"] = dict(result.dry_run_estimate)
    else:
        readings = read_judged(run.rows, result)
    summary = build_judged_summary(
        run, parser=str(cfg.judge.parser), samples=cfg.report.bootstrap_samples,
        seed=cfg.report.seed, judge=section, readings=readings)
    if readings is None:
        return summary, score_rows(run)
    return summary, judged_score_rows(run.rows, result, readings)


def run_locomo_plus(cfg: ExperimentConfig, output_dir: Path, start_dir: Path | None = None,
                    *, run_name: str | None = None, parent_run_id: str | None = None,
                    extra_tags: dict[str, str] | None = None) -> PlusRunResult:
    """Score a LoCoMo-Plus run: its stored verdicts (no judge call), or judge it.

    With ``scorer=judge`` each item of the answers file gets ``judge.runs`` judge calls
    (:mod:`.judged`), read by both parsers; ``judge.dry_run`` counts and prices them.

    Args:
        cfg: the typed config (``data.path``, ``judge.parser``, ``report``, ``tracking``).
        output_dir: where to write the outputs.
        start_dir: the directory relative paths are resolved against (default: cwd).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file stem> · locomo_plus``).
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).

    Returns:
        :class:`PlusRunResult`.

    Raises:
        DataValidationError: a bad run file (one line: file, record, field).
        ValueError: several files, unavailable settings, an unknown parser.
        locomo_exp.report.run_dir.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.
    """
    start_dir = (start_dir or Path.cwd()).resolve()
    output_dir = Path(output_dir).resolve()
    check_settings(cfg)
    if cfg.tracking.enabled:  # one line before any work
        tracking.check_tracking_uri(
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir),
            connect_timeout_s=cfg.tracking.connect_timeout_s,
        )
    judge_cfg = judge_config(cfg.judge) if cfg.scorer.uses_judge else None
    if judge_cfg is not None:
        from locomo_exp.judge import preflight_judge

        preflight_judge(judge_cfg, [], start_dir=start_dir)  # settings, key: before reading
    check_writable(output_dir)
    path = single_data_file(cfg, start_dir)
    if path is None:
        raise ValueError("a LoCoMo-Plus run scores one run file: give one data.path")
    check_regular_file(path)
    run = read_stored_run(path, judging=judge_cfg is not None)
    if judge_cfg is not None:
        from locomo_exp.judge import preflight_judge

        preflight_judge(judge_cfg, judge_records(run.rows), start_dir=start_dir)
    prepare_output_dir(output_dir, cfg.overwrite)  # an old run is removed only for valid input
    judged_rows: list[dict[str, Any]] | None = None
    if judge_cfg is None:
        summary = build_summary(run, parser=str(cfg.judge.parser),
                                samples=cfg.report.bootstrap_samples, seed=cfg.report.seed)
    else:
        summary, judged_rows = _judge(cfg, judge_cfg, run, start_dir)
    console = render_console(summary)
    run_context, tracking_uri = plugin_mlflow_run(
        cfg, start_dir, output_dir,
        run_name=run_name or cfg.tracking.run_name or f"{path.stem} · {NAME}",
        tags={**plus_tracking.run_tags(summary), **(extra_tags or {})},
        parent_run_id=parent_run_id,
    )
    with run_context as mlrun:
        files = _write(output_dir, cfg, summary,
                       score_rows(run) if judged_rows is None else judged_rows)
        metrics = plus_tracking.run_metrics(summary)
        if mlrun is not None:
            tracking.log_params(plus_tracking.run_params(summary))
            tracking.log_metrics(metrics)
            tracking.set_tags({tracking.NOTE_TAG: "\n".join(console),
                               **tracking.warning_tags(summary["warnings"])})
            tracking.log_artifacts(files)
    console = [*console, "", f"Report: {output_dir / 'report.md'}"]
    if mlrun is not None and tracking_uri is not None:
        console.append(
            f"MLflow: run {mlrun.info.run_id} in experiment '{cfg.tracking.experiment}'.\n"
            f"{tracking.open_ui_hint(tracking_uri, mlrun.info.experiment_id)}"
        )
    return PlusRunResult(output_dir=output_dir, summary=summary, metrics=metrics, files=files,
                         console=console, run_id=mlrun.info.run_id if mlrun else None)
