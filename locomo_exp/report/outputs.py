"""The files of one scoring run: scores, summary, report (Markdown and HTML), config, card.

:func:`write_outputs` builds the per-question rows and the run summary from the scored
records, draws the plots and writes every output file atomically. LoCoMo's job hooks
(:mod:`locomo_exp.benchmarks.locomo.steps`) call it before and after the judge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from locomo_exp.config import ExperimentConfig
from locomo_exp.data import LoadedResults
from locomo_exp.data.info import input_info, stored_judge_section
from locomo_exp.report.card import build_card
from locomo_exp.report.config_text import config_yaml, plain_config
from locomo_exp.report.document import render_report
from locomo_exp.report.html import render_report_html
from locomo_exp.report.plots import (
    CATEGORY_PLOT,
    J_DISTRIBUTION_PLOT,
    plot_category_scores,
    plot_j_distribution,
)
from locomo_exp.report.run_dir import atomic_write_jsonl, atomic_write_text
from locomo_exp.results import InputInfo, QARecord, RunSummary
from locomo_exp.results.locomo_log import locomo_run_log
from locomo_exp.results.money import round_money
from locomo_exp.scoring import LEXICAL_SPECS
from locomo_exp.scoring.specs import output_version
from locomo_exp.scoring.summary import analyse, build_summary

OUTPUT_FILES = ("report.md", "scores.jsonl", "summary.json", "config.yaml")
CARD_FILE = "card.json"
REPORT_HTML = "report.html"
"""The report as one HTML page with its plots inline (MLflow's artifact viewer renders it)."""
"""Files written to the output directory of every run."""


def config_tree(cfg: ExperimentConfig) -> dict[str, Any]:
    """The resolved config as a plain dict, with ``baselines`` reduced to their names.

    Args:
        cfg: the run's typed config.

    Returns:
        The tree hashed into the card and logged to MLflow (numbers of baselines live in ``conf/``).
    """
    tree = cast(dict[str, Any], plain_config(cfg))
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


def write_outputs(
    output_dir: Path,
    cfg: ExperimentConfig,
    loaded: LoadedResults,
    lexical: list[dict[str, float]],
    judge_result: Any = None,
    status: dict[str, str] | None = None,
    answer_key: dict[str, Any] | None = None,
    *,
    plots: bool = True,
) -> tuple[RunSummary, list[Path], list[dict[str, Any]]]:
    """Write every output file of a run into ``output_dir``, each atomically.

    Args:
        output_dir: the run's directory (already checked writable).
        cfg: the run's config.
        loaded: the validated input.
        lexical: per-record lexical scores (0-1), or empty when F1 was not computed.
        judge_result: the judge's result (``summary``, ``per_question``,
            ``question_json``), or ``None``.
        status: ``summary["status"]`` (``{"f1": "ok", "judge": ...}``).
        answer_key: the errata section
            (:func:`locomo_exp.scoring.errata.score_errata`), or ``None``.
        plots: draw the plots; ``False`` for the record written before the judge runs
            (every way out of the judge writes the outputs again, plots included), which
            also removes plots left by an earlier attempt in the directory.

    Returns:
        ``(summary, paths written, scores.jsonl rows)``.

    Raises:
        OSError: when a file cannot be written (no file is left truncated).
    """
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
    if plots:
        drawn = [
            plot.name
            for plot in (
                plot_category_scores(summary, cfg.baselines, output_dir / CATEGORY_PLOT),
                plot_j_distribution(rows, output_dir / J_DISTRIBUTION_PLOT),
            )
            if plot is not None
        ]
    else:  # no plot of an earlier attempt beside a report that does not show it
        drawn = []
        for name in (CATEGORY_PLOT, J_DISTRIBUTION_PLOT):
            (output_dir / name).unlink(missing_ok=True)
    paths = [output_dir / name for name in OUTPUT_FILES]
    report, scores, summary_path, config_path = paths
    # each file atomically (temp name + os.replace): a failure never leaves a truncated file
    summary_json = round_money(summary.to_json())  # USD to a millionth (money.py)
    summary_json["run_log"] = round_money(locomo_run_log(summary).to_json())  # docs/run_log.md
    if answer_key is not None:
        summary_json["answer_key"] = answer_key
    tree = config_tree(cfg)
    if answer_key is not None:
        tree["data"]["errata"] = answer_key["path"]  # resolved: the card hashes the file
    card = build_card(tree, summary_json)
    atomic_write_jsonl(scores, rows)
    atomic_write_text(summary_path, json.dumps(summary_json, indent=2, ensure_ascii=False) + "\n")
    report_text = render_report(summary, cfg.baselines, drawn, card, answer_key)
    atomic_write_text(report, report_text)
    html_path = output_dir / REPORT_HTML
    images = {name: (output_dir / name).read_bytes() for name in drawn}
    atomic_write_text(html_path, render_report_html(report_text, images, loaded.path.name))
    atomic_write_text(config_path, config_yaml(cfg))
    atomic_write_text(output_dir / CARD_FILE, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    paths += [output_dir / CARD_FILE, html_path]
    paths += [output_dir / name for name in drawn]
    return summary, paths, rows


__all__ = [
    "CARD_FILE",
    "OUTPUT_FILES",
    "REPORT_HTML",
    "config_tree",
    "metric_versions",
    "score_rows",
    "write_outputs",
]
