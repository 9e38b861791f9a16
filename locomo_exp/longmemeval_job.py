"""One LongMemEval scoring job: answers + dataset -> figures, outputs, MLflow.

:func:`run_longmemeval` is what ``python -m locomo_exp data=file data.path=FILE
data.reference=REF`` runs when ``FILE`` is a LongMemEval answer file (detected from its
rows, :func:`is_longmemeval`) or when ``benchmark=longmemeval`` is given. The stored
verdicts of an ``.eval-results-<model>`` file are read as J with their judge named; no judge
is called for them. Outputs: ``report.md``, ``scores.jsonl``, ``summary.json``, ``card.json``,
``config.yaml``, as for LoCoMo (docs/longmemeval.md).
"""

from __future__ import annotations

import json
import logging
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from locomo_exp import __version__, tracking
from locomo_exp import longmemeval as lme
from locomo_exp.config import DataFormat, ExperimentConfig
from locomo_exp.data.input_file import DataValidationError, check_regular_file, read_results_file
from locomo_exp.data.lme_answers import (
    LmeItem,
    LmeMatched,
    looks_like_lme,
    match_reference,
    read_lme_answers,
)
from locomo_exp.data.lme_reference import LmeReference, read_lme_reference
from locomo_exp.data.several import expand_paths
from locomo_exp.outputs import (
    atomic_write_jsonl,
    atomic_write_text,
    check_writable,
    prepare_output_dir,
)
from locomo_exp.report.lme import render_lme_report
from locomo_exp.report.lme_baselines import LME_BASELINES
from locomo_exp.scoring.lme import METRIC_VERSION, lme_accuracies
from locomo_exp.tracking import lme as lme_tracking

log = logging.getLogger(__name__)

PEEK_BYTES = 1 << 16
"""Bytes of ``data.path`` looked at for a ``hypothesis`` field before parsing it."""

NO_REFERENCE = (
    "LongMemEval answers need the dataset file for each question's type: add "
    "data.reference=<longmemeval_oracle.json, _s_cleaned or _m_cleaned>"
)


@dataclass
class LmeRunResult:
    """What one LongMemEval job produced.

    Attributes:
        output_dir: where the outputs are.
        summary: the content of ``summary.json``.
        metrics: the MLflow metrics (percent).
        files: the output files written.
        run_id: the MLflow run id, or ``None`` with ``tracking=none``.
        tracking_uri: the MLflow store, or ``None``.
        experiment: the MLflow experiment name, or ``None``.
        experiment_id: the MLflow experiment id, or ``None``.
    """

    output_dir: Path
    summary: dict[str, Any]
    metrics: dict[str, float]
    files: list[Path] = field(default_factory=list)
    run_id: str | None = None
    tracking_uri: str | None = None
    experiment: str | None = None
    experiment_id: str | None = None

    @property
    def report_path(self) -> Path:
        """``report.md`` of the run."""
        return self.output_dir / "report.md"


def _data_file(cfg: ExperimentConfig, start_dir: Path) -> Path | None:
    if cfg.data.runs or not cfg.data.path or cfg.data.path == "???":
        return None
    paths = expand_paths(cfg.data.path, start_dir)
    return paths[0] if len(paths) == 1 else None


def is_longmemeval(cfg: ExperimentConfig, start_dir: Path) -> bool:
    """Whether the job is a LongMemEval one.

    ``benchmark=longmemeval`` (``data.format=longmemeval``) says so; with ``data.format=auto``
    a single ``data.path`` whose rows are ``{question_id, hypothesis, ...}`` is one (no
    LoCoMo layout has a ``hypothesis`` field).

    Args:
        cfg: the typed config.
        start_dir: the directory relative paths are resolved against.

    Returns:
        True for a LongMemEval job; False otherwise, and whenever the file cannot be read
        (the LoCoMo job then reports the problem in its own words).
    """
    fmt = DataFormat(cfg.data.format)
    if fmt == DataFormat.longmemeval:
        return True
    if fmt != DataFormat.auto:
        return False
    try:
        path = _data_file(cfg, start_dir)
        if path is None:
            return False
        check_regular_file(path)
        with path.open("rb") as handle:  # a cheap look first: LoCoMo runs parse nothing twice
            if b"hypothesis" not in handle.read(PEEK_BYTES):
                return False
        return looks_like_lme(read_results_file(path).obj)
    except (DataValidationError, ValueError, OSError):
        return False


def _verdicts(items: list[LmeItem], source: str) -> list[tuple[str, str, bool | None]]:
    return [
        (
            item.question.question_id,
            item.question.question_type,
            item.answer.label if source == "stored" else None,
        )
        for item in items
    ]


def score_rows(matched: LmeMatched) -> list[dict[str, Any]]:
    """One row per scored question, as written to ``scores.jsonl``.

    Args:
        matched: answer rows matched to the dataset.

    Returns:
        Rows ``{question_id, question_type, abstention, judge_kind, question, answer,
        hypothesis, stored_label?, stored_label_model?}``.
    """
    rows = []
    for item in matched.items:
        q, a = item.question, item.answer
        row: dict[str, Any] = {
            "question_id": q.question_id,
            "question_type": q.question_type,
            "abstention": q.abstention,
            "judge_kind": q.kind,
            "question": q.question,
            "answer": q.answer,
            "hypothesis": a.hypothesis,
        }
        if a.label is not None:
            row["stored_label"] = a.label
            row["stored_label_model"] = a.label_model
        rows.append(row)
    return rows


def build_lme_summary(
    *,
    answers_path: Path,
    answers_sha256: str,
    reference: LmeReference,
    matched: LmeMatched,
    n_rows: int,
    null_hypotheses: int,
    stored_models: list[str],
    seed: int,
) -> dict[str, Any]:
    """The ``summary.json`` content of a LongMemEval run (numbers and words only).

    Args:
        answers_path: the answer file.
        answers_sha256: its hash.
        reference: the dataset's questions.
        matched: rows matched to it.
        n_rows: rows in the answer file.
        null_hypotheses: rows whose hypothesis was null.
        stored_models: judge models of the stored verdicts (empty: none stored).
        seed: seed of the task average's bootstrap interval.

    Returns:
        ``{"benchmark", "input", "versions", "status", "stored", "headline"}``: ``stored`` and
        ``headline`` hold the figures (0-1) of the stored verdicts, or are ``None``.
    """
    stored = None
    if stored_models:
        figures = lme_accuracies(_verdicts(matched.items, "stored"), seed=seed).to_json()
        stored = {
            "source": "stored",
            "judge_model": ", ".join(stored_models),
            "figures": figures,
        }
    return {
        "benchmark": lme.NAME,
        "input": {
            "path": str(answers_path),
            "sha256": answers_sha256,
            "format": "longmemeval (eval-results)" if stored_models else "longmemeval",
            "reference": reference.to_json(),
            "counts": {
                "rows": n_rows,
                "matched": len(matched.items),
                "skipped_ids": len(matched.skipped_ids),
                "unanswered": len(matched.unanswered_ids),
                "null_hypotheses": null_hypotheses,
            },
            "skipped_examples": matched.skipped_ids[:5],
        },
        "versions": {"metrics": METRIC_VERSION, "lexical": "off (not in LongMemEval's protocol)"},
        "status": {
            "j": "ok (stored verdicts)" if stored else "not measured: no stored verdicts",
        },
        "stored": stored,
        "headline": stored,
    }


def build_lme_card(summary: dict[str, Any]) -> dict[str, Any]:
    """The ``card.json`` of a LongMemEval run: benchmark, variant, hashes, verdict source."""
    headline = summary.get("headline")
    return {
        "benchmark": lme.NAME,
        "tool_version": __version__,
        "reference": summary["input"]["reference"],
        "input": {"path": summary["input"]["path"], "sha256": summary["input"]["sha256"]},
        "verdicts": (
            f"{headline['source']} ({headline['judge_model']})" if headline else "none"
        ),
        "metric_version": summary["versions"]["metrics"],
        "lexical": "off",
    }


def _write(
    output_dir: Path, cfg: ExperimentConfig, summary: dict[str, Any], rows: list[dict[str, Any]]
) -> list[Path]:
    card = build_lme_card(summary)
    files = {
        "report.md": render_lme_report(summary, card, LME_BASELINES),
        "summary.json": json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
        "card.json": json.dumps(card, indent=2, ensure_ascii=False) + "\n",
        "config.yaml": OmegaConf.to_yaml(OmegaConf.structured(cfg)),
    }
    paths = [output_dir / "scores.jsonl"]
    atomic_write_jsonl(paths[0], rows)
    for name, text in files.items():
        atomic_write_text(output_dir / name, text)
        paths.append(output_dir / name)
    return paths


def run_longmemeval(
    cfg: ExperimentConfig,
    output_dir: Path,
    start_dir: Path | None = None,
    *,
    run_name: str | None = None,
) -> LmeRunResult:
    """Score a LongMemEval answer file against its dataset file.

    Args:
        cfg: the typed config (``data.path``, ``data.reference``, ``tracking``, ``report``).
        output_dir: where to write the outputs.
        start_dir: directory relative paths are resolved against (default: cwd).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file> · longmemeval``).

    Returns:
        :class:`LmeRunResult`.

    Raises:
        DataValidationError: bad answers or dataset file (one line naming file, record, field).
        ValueError: no ``data.reference``, several files, or a hypothesis file without stored
            verdicts and no judge.
        locomo_exp.outputs.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
    """
    start_dir = (start_dir or Path.cwd()).resolve()
    output_dir = Path(output_dir).resolve()
    check_writable(output_dir)
    prepare_output_dir(output_dir, cfg.overwrite)
    path = _data_file(cfg, start_dir)
    if path is None:
        raise ValueError("benchmark=longmemeval scores one answer file: give one data.path")
    if not cfg.data.reference:
        raise ValueError(NO_REFERENCE)
    check_regular_file(path)
    answers = read_lme_answers(path)
    if not answers.labelled and not cfg.scorer.uses_judge:
        raise ValueError(
            f"{path}: its rows have no autoeval_label (stored verdicts), so nothing can be "
            "scored without a judge: add scorer=judge benchmark=longmemeval (e.g. judge=gpt-4o, "
            "LongMemEval's judge)"
        )
    reference_path = expand_paths(cfg.data.reference, start_dir)[0]
    reference = read_lme_reference(reference_path)
    matched = match_reference(answers, reference)
    summary = build_lme_summary(
        answers_path=answers.path,
        answers_sha256=answers.sha256,
        reference=reference,
        matched=matched,
        n_rows=len(answers.rows),
        null_hypotheses=len(answers.missing_hypotheses),
        stored_models=answers.label_models or (["unnamed"] if answers.labelled else []),
        seed=cfg.report.seed,
    )
    rows = score_rows(matched)
    tracking_uri = None
    run_context: Any = nullcontext()
    if cfg.tracking.enabled:
        tracking_uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        run_context = tracking.mlflow_run(
            tracking_uri=tracking_uri,
            experiment=cfg.tracking.experiment,
            run_name=run_name or cfg.tracking.run_name or f"{path.stem} · longmemeval",
            tags={"locomo_exp.version": __version__, "benchmark": lme.NAME,
                  "data.file": path.name, "scorer": cfg.scorer.name.value},
            log_file=output_dir / "locomo_exp.log",
        )
    with run_context as run:
        files = _write(output_dir, cfg, summary, rows)
        metrics = lme_tracking.run_metrics(summary)
        if run is not None:
            tracking.log_params(lme_tracking.run_params(summary))
            tracking.log_metrics(metrics)
            tracking.log_artifacts(files)
    return LmeRunResult(
        output_dir=output_dir,
        summary=summary,
        metrics=metrics,
        files=files,
        run_id=run.info.run_id if run is not None else None,
        tracking_uri=tracking_uri,
        experiment=cfg.tracking.experiment if run is not None else None,
        experiment_id=run.info.experiment_id if run is not None else None,
    )


__all__ = ["LmeRunResult", "is_longmemeval", "run_longmemeval", "score_rows"]
