"""LoCoMo's run built once: rows, statistics, summary, run log, card and question rows.

:func:`build_locomo_run` computes everything a LoCoMo run's outputs show (issue 26 §3): the
per-question rows, the analysis (bootstrap intervals, reliability, error analysis:
:func:`locomo_exp.scoring.summary.analyse`), the typed summary
(:func:`locomo_exp.scoring.summary.build_summary`), the ``summary.json`` content with its run
log, the card, ``config.yaml``'s text and the question rows of ``questions.html`` (the
judged audit's controls included). The writers (:func:`locomo_exp.report.outputs.write_locomo_run`,
``questions.html``, MLflow: ``benchmarks/locomo/track.py``) are pure functions of the
:class:`LocomoRun` it returns: none computes a statistic, none reads back a file just written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from locomo_exp.config import BaselineSet, ExperimentConfig
from locomo_exp.data import LoadedResults
from locomo_exp.data.info import input_info, stored_judge_section
from locomo_exp.report.card import build_card
from locomo_exp.report.config_text import config_yaml, plain_config
from locomo_exp.report.question_rows import (
    audit_control_rows,
    locomo_question_rows,
    summary_audit,
)
from locomo_exp.results import InputInfo, QARecord, RunSummary
from locomo_exp.results.locomo_log import locomo_run_log
from locomo_exp.results.money import round_money
from locomo_exp.results.questions import QuestionRow
from locomo_exp.scoring import LEXICAL_SPECS
from locomo_exp.scoring.specs import output_version
from locomo_exp.scoring.summary import analyse, build_summary


@dataclass(frozen=True)
class LocomoRun:
    """One LoCoMo run as built, everything its writers render (no file read or written).

    Attributes:
        rows: one dict per question, as ``scores.jsonl`` holds them (:func:`score_rows`).
        summary: the typed summary (:class:`~locomo_exp.results.RunSummary`; scores 0-1,
            J 0-100), its analysis (intervals) included.
        summary_json: ``summary.json``'s content: the summary's JSON with money rounded to a
            millionth of a USD, its ``run_log`` (docs/run_log.md) and the ``answer_key``
            section when ``data.errata`` was scored.
        card: ``card.json``'s content (:func:`locomo_exp.report.card.build_card`).
        config_text: ``config.yaml``'s text.
        questions: ``questions.html``'s rows: every question, then the judged audit's
            controls (:func:`locomo_exp.report.question_rows.audit_control_rows`); the MLflow
            traces' rows.
        answer_key: the errata section (:func:`locomo_exp.scoring.errata.score_errata`), or
            ``None``.
        baselines: the published baselines the report and the category plot show.
        title: ``report.html``'s page title (the input file's name).
        plots: whether the plots are drawn (``False`` for the record written before the
            judge runs: a plot of an earlier attempt is then removed).
    """

    rows: list[dict[str, Any]]
    summary: RunSummary
    summary_json: dict[str, Any]
    card: dict[str, Any]
    config_text: str
    questions: list[QuestionRow]
    answer_key: dict[str, Any] | None
    baselines: Mapping[str, BaselineSet]
    title: str
    plots: bool


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


def build_locomo_run(
    cfg: ExperimentConfig,
    loaded: LoadedResults,
    lexical: list[dict[str, float]],
    judge_result: Any = None,
    status: Mapping[str, str] | None = None,
    answer_key: dict[str, Any] | None = None,
    *,
    plots: bool = True,
) -> LocomoRun:
    """Build a LoCoMo run's rows, statistics, summary, run log, card and question rows once.

    The analysis' bootstrap intervals use ``report.bootstrap_samples`` resamples with
    ``report.seed`` (formulas: :mod:`locomo_exp.stats`); nothing is read from or written to
    the output directory.

    Args:
        cfg: the run's config.
        loaded: the validated input.
        lexical: per-record lexical scores (0-1), or empty when F1 was not computed.
        judge_result: the judge's result (``summary``, ``per_question``,
            ``question_json``), or ``None`` (no verdicts: the question rows carry none).
        status: ``summary["status"]`` (``{"f1": "ok", "judge": ...}``); copied, so a later
            change of the caller's dict leaves this run as built.
        answer_key: the errata section (:func:`locomo_exp.scoring.errata.score_errata`),
            or ``None``.
        plots: whether the writer draws the plots (see :attr:`LocomoRun.plots`).

    Returns:
        :class:`LocomoRun`.
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
        input_info=InputInfo.from_json(input_info(loaded)),
        versions=versions,
        category_names=cfg.category_names,
        judge=judge_summary,
        status=dict(status) if status is not None else None,
        analysis=analysis,
        stored_judge_detail=stored_judge_section(loaded),
        stored_metrics=loaded.stored_metrics,
        runs=loaded.runs_summary,
    )
    summary_json = round_money(summary.to_json())  # USD to a millionth (money.py)
    summary_json["run_log"] = round_money(locomo_run_log(summary).to_json())  # docs/run_log.md
    if answer_key is not None:
        summary_json["answer_key"] = answer_key
    tree = config_tree(cfg)
    if answer_key is not None:
        tree["data"]["errata"] = answer_key["path"]  # resolved: the card hashes the file
    judge_model = cfg.judge.model if judge_result is not None else None
    questions = locomo_question_rows(rows, judge_model)
    if judge_model:  # the audit's controls, tagged rows of their own
        questions += audit_control_rows(summary_audit(summary_json), questions, judge_model)
    return LocomoRun(
        rows=rows, summary=summary, summary_json=summary_json,
        card=build_card(tree, summary_json), config_text=config_yaml(cfg),
        questions=questions, answer_key=answer_key, baselines=cfg.baselines,
        title=loaded.path.name, plots=plots,
    )


__all__ = ["LocomoRun", "build_locomo_run", "config_tree", "metric_versions", "score_rows"]
