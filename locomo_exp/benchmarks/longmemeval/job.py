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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from locomo_exp import __version__, tracking
from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval import tracking as lme_tracking
from locomo_exp.benchmarks.longmemeval.answers import (
    LmeMatched,
    match_reference,
    read_lme_answers,
)
from locomo_exp.benchmarks.longmemeval.baselines import LME_BASELINES
from locomo_exp.benchmarks.longmemeval.checks import with_lme_checks
from locomo_exp.benchmarks.longmemeval.controls import lme_audit_config, size_lme_audit
from locomo_exp.benchmarks.longmemeval.detect import is_longmemeval, lme_data_file
from locomo_exp.benchmarks.longmemeval.dry_run import (
    lme_member_config,
    lme_spend_parts,
    with_trust_calls,
)
from locomo_exp.benchmarks.longmemeval.protocol import LONGMEMEVAL
from locomo_exp.benchmarks.longmemeval.questions import lme_question_rows
from locomo_exp.benchmarks.longmemeval.reference import read_lme_reference
from locomo_exp.benchmarks.longmemeval.report import render_lme_report
from locomo_exp.benchmarks.longmemeval.run_log import with_run_log
from locomo_exp.benchmarks.longmemeval.summary import (
    audit_section,
    build_lme_card,
    build_lme_summary,
    labels_section,
    panel_member,
    score_rows,
)
from locomo_exp.config import ExperimentConfig, JudgeConfig
from locomo_exp.data.input_file import check_regular_file
from locomo_exp.data.load import expand_paths
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.judge.protocols import get_protocol
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL
from locomo_exp.judge.spend import JobSpend, plan_job_spend
from locomo_exp.llm.errors import JudgeBatchPending
from locomo_exp.report.config_text import config_yaml
from locomo_exp.report.questions_html import write_run_questions
from locomo_exp.report.run_dir import (
    atomic_write_jsonl,
    atomic_write_text,
    check_output_dir,
    check_writable,
)
from locomo_exp.report.run_swap import recover_cut_swap, replacing_run
from locomo_exp.results import JUDGE_DRY_RUN, QARecord, interrupts
from locomo_exp.results.money import round_money
from locomo_exp.results.status import judge_status

log = logging.getLogger(__name__)

NO_REFERENCE = (
    "LongMemEval answers need the dataset file for each question's type: add "
    "data.reference=<longmemeval_oracle.json, _s_cleaned or _m_cleaned>"
)

LOCOMO_ONLY_DATA = ("limit", "runs", "errata", "categories_from", "setting")
"""``data.*`` settings of LoCoMo runs that a LongMemEval run does not read: refused when set,
so a sample asked for (``data.limit``) is never silently the whole file."""


def locomo_only_settings(cfg: ExperimentConfig) -> str | None:
    """The refusal of LoCoMo-only ``data.*`` settings given for a LongMemEval run, or ``None``.

    Args:
        cfg: the typed config.

    Returns:
        One line naming each setting that is set (``data.limit=50``).
    """
    given = [
        f"data.{name}={getattr(cfg.data, name)}"
        for name in LOCOMO_ONLY_DATA
        if getattr(cfg.data, name) is not None
    ]
    if not given:
        return None
    return (
        f"{', '.join(given)}: not available for LongMemEval answers, which are scored whole "
        "against data.reference; drop the setting"
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


def _write(
    output_dir: Path, cfg: ExperimentConfig, summary: dict[str, Any], rows: list[dict[str, Any]]
) -> list[Path]:
    with_run_log(summary)  # the typed log, built last (docs/run_log.md)
    card = build_lme_card(summary)
    files = {
        "report.md": render_lme_report(summary, card, LME_BASELINES),
        "summary.json": json.dumps(round_money(summary), indent=2, ensure_ascii=False) + "\n",
        "card.json": json.dumps(round_money(card), indent=2, ensure_ascii=False) + "\n",
        "config.yaml": config_yaml(cfg),
    }
    paths = [output_dir / "scores.jsonl"]
    atomic_write_jsonl(paths[0], rows)
    for name, text in files.items():
        atomic_write_text(output_dir / name, text)
        paths.append(output_dir / name)
    return paths


def judge_records(matched: LmeMatched) -> list[QARecord]:
    """The judge engine's records: each question's kind travels as its own string.

    Args:
        matched: answer rows matched to the dataset.

    Returns:
        One :class:`~locomo_exp.results.QARecord` per answered question: ``kind`` is its judge
        kind (``abstention`` for ``_abs``, else its type), ``question_type`` its type; the
        prompt is chosen by ``kind``. ``category`` is the engine id the ``longmemeval``
        protocol gives that kind (:meth:`~locomo_exp.judge.protocols.kinds.KindProtocol.kind_id`,
        what the judge cache keys hold), not a LoCoMo category.
    """
    return [
        QARecord(
            question_id=item.question.question_id,
            question=item.question.question,
            ground_truth=item.question.gold_text,
            prediction=item.answer.hypothesis,
            category=LONGMEMEVAL.kind_id(item.question.kind),
            position=index,
            question_type=item.question.question_type,
            kind=item.question.kind,
        )
        for index, item in enumerate(matched.items)
    ]


def lme_judge_config(judge: JudgeConfig) -> JudgeConfig:
    """The judge settings of a LongMemEval run: every kind judged.

    Raises:
        ValueError: when ``judge.protocol`` is not a protocol that judges LongMemEval's kinds
            (one line, naming the fix).
    """
    if judge.protocol == TEMPLATE_PROTOCOL:  # the user's copy, one text per kind (by_kind)
        return replace(judge, categories=sorted(LONGMEMEVAL.kind_ids))
    spec = get_protocol(judge.protocol)
    if spec.kind_ids != LONGMEMEVAL.kind_ids:
        raise ValueError(
            f"judge.protocol={judge.protocol} judges LoCoMo's categories; LongMemEval answers "
            "are judged with judge.protocol=longmemeval (benchmark=longmemeval sets it, with "
            "temperature 0 and max_tokens 10), or judge.protocol=template with by_kind texts"
        )
    return replace(judge, categories=sorted(LONGMEMEVAL.kind_ids))


def judge_verdicts(result: JudgeRunResult, matched: LmeMatched) -> dict[str, float | None]:
    """Question id -> the mean of its judge runs' verdicts on 0-1, ``None`` when unscored.

    Each run's verdict is yes (1) or no (0) by the authors' rule; with ``judge.runs > 1`` a
    question's verdict is the mean over its valid runs, so one yes and one no give 0.5, and
    the accuracies are means of these (:func:`.scoring.lme_accuracies`).
    Yes/no comparisons (agreement, kappa, corrected accuracy) take a question as accepted
    when this mean is at least :data:`lme.ACCEPT_AT` / 100
    (:func:`locomo_exp.benchmarks.longmemeval.summary.accepted`).
    """
    out: dict[str, float | None] = {}
    for item in matched.items:
        agg = result.per_question.get(item.question.question_id)
        mean = agg.mean_score if agg is not None else None
        out[item.question.question_id] = None if mean is None else mean / 100.0
    return out


def judge_section(result: JudgeRunResult) -> dict[str, Any]:
    """What ``summary.json`` keeps of the judge run (settings, counts, tokens, cost).

    The cost is this run's calls (``estimated_cost_usd``) and the same work counting the
    calls answered from the judge cache (``estimated_cost_usd_including_cached``), as for
    LoCoMo runs; the report says both (:mod:`locomo_exp.benchmarks.longmemeval.report`).

    Where the calls went is kept as for LoCoMo runs: ``provider``, ``endpoint`` (without
    user info, query or fragment: never a credential) and ``endpoint_kind`` (``default`` or
    ``custom``), and ``model_snapshot`` when the API named one; ``template`` (name, sha256)
    for ``judge.protocol=template``, so a comparison can tell two judges' prompts apart.
    """
    keep = (
        "protocol", "prompt_version", "template", "parser_version", "provider", "endpoint",
        "endpoint_kind", "model", "model_snapshot", "response_models",
        "temperature", "max_tokens", "runs", "api_version", "counts",
        "tokens", "estimated_cost_usd", "estimated_cost_usd_including_cached", "mode",
    )
    return {k: result.summary[k] for k in keep if k in result.summary}


def _run_panel(
    judge_cfg: JudgeConfig,
    records: list[QARecord],
    matched: LmeMatched,
    main: dict[str, float | None],
    start_dir: Path,
    *,
    seed: int,
    spend: JobSpend | None = None,
) -> list[dict[str, Any]]:
    """Judge the same answers with each ``judge.panel`` preset, under LongMemEval's protocol.

    Each member keeps its model and provider, and takes the run's protocol settings
    (protocol, temperature, max_tokens, runs, plain text), so only the model differs.
    """
    from locomo_exp.judge import run_judge

    members = []
    for preset in judge_cfg.panel:
        member_cfg = lme_member_config(judge_cfg, str(preset))
        result = run_judge(records, member_cfg, start_dir=start_dir,
                           category_names=LONGMEMEVAL.kind_ids, spend=spend)
        members.append(panel_member(str(preset), member_cfg.model, matched,
                                    judge_verdicts(result, matched), main, seed=seed))
    return members


RUNNING = "running: not finished (the job stopped before the judge ended)"


def _run_judge(
    cfg: ExperimentConfig,
    judge_cfg: JudgeConfig,
    matched: LmeMatched,
    common: dict[str, Any],
    start_dir: Path,
    output_dir: Path,
    spend: JobSpend | None = None,
) -> tuple[JudgeRunResult, dict[str, Any]]:
    """Judge every answered question; on failure record the status in the outputs and raise.

    ``spend``: the job's ``judge.max_cost_usd`` over the answers, the panel and the audit.
    """
    from locomo_exp.judge import run_judge

    records = judge_records(matched)
    try:
        result = run_judge(records, judge_cfg, start_dir=start_dir,
                           category_names=LONGMEMEVAL.kind_ids, spend=spend)
        section = judge_section(result)
        controls, sizing = size_lme_audit(records, judge_cfg)  # judge.audit.max_share

        def judge(recs: list[QARecord], c: JudgeConfig) -> JudgeRunResult:
            return run_judge(recs, c, start_dir=start_dir, category_names=LONGMEMEVAL.kind_ids,
                             spend=None if cfg.judge.dry_run else spend)

        if result.dry_run_estimate is not None:  # the audit's and panel's calls counted too
            estimate = with_trust_calls(result.dry_run_estimate, judge_cfg, records,
                                        [c.record for c in controls], judge, audit_sizing=sizing)
            summary = build_lme_summary(
                **common, dry_run=(section, estimate), judge_status=JUDGE_DRY_RUN
            )
            return result, summary
        status = result.finished_status(judge_cfg.max_error_rate)
        verdicts = judge_verdicts(result, matched)
        summary = build_lme_summary(**common, judged=(verdicts, section), judge_status=status)
        if judge_cfg.panel:
            summary["panel"] = _run_panel(judge_cfg, records, matched, verdicts, start_dir,
                                          seed=cfg.report.seed, spend=spend)
        if controls:  # judged like the real answers, never part of the accuracies
            audited = judge([c.record for c in controls], lme_audit_config(judge_cfg))
            summary["audit"] = audit_section(controls, audited, verdicts, seed=cfg.report.seed)
            summary["audit"]["sizing"] = sizing
        elif int(judge_cfg.audit.n) > 0:  # asked for, capped to none: the report says why
            summary["audit"] = {"kinds": {}, "sizing": sizing}
        return result, summary
    except BaseException as error:  # the outputs say the judge (answers, panel, audit) did not end
        status = judge_status(error)  # "failed: ...", "interrupted" or "pending: ..."
        try:
            _write(output_dir, cfg, build_lme_summary(**common, judge_status=status),
                   score_rows(matched))
        except Exception:  # never hide the judge's own error
            log.exception("could not record the judge status in %s", output_dir)
        raise


def run_longmemeval(
    cfg: ExperimentConfig,
    output_dir: Path,
    start_dir: Path | None = None,
    *,
    run_name: str | None = None,
    parent_run_id: str | None = None,
    extra_tags: dict[str, str] | None = None,
) -> LmeRunResult:
    """Score a LongMemEval answer file against its dataset file.

    Args:
        cfg: the typed config (``data.path``, ``data.reference``, ``tracking``, ``report``).
        output_dir: where to write the outputs.
        start_dir: directory relative paths are resolved against (default: cwd).
        run_name: the MLflow run name (default ``tracking.run_name``, else
            ``<file> · longmemeval``).
        parent_run_id: nest the MLflow run under this one (a sweep's parent run).
        extra_tags: more MLflow tags (a sweep job's number and swept values).

    Returns:
        :class:`LmeRunResult`.

    Raises:
        DataValidationError: bad answers or dataset file (one line naming file, record, field).
        ValueError: no ``data.reference``, several files, or a hypothesis file without stored
            verdicts and no judge.
        locomo_exp.report.run_dir.OutputDirInUse / OutputDirNotWritable: as for LoCoMo runs.
        locomo_exp.tracking.TrackingStoreError: a ``tracking.uri`` MLflow cannot use.

    With ``overwrite=true`` over an earlier run, the new run is built beside it and swapped
    in only once finished (:func:`locomo_exp.report.run_swap.replacing_run`): a run that
    stops (an error, Ctrl-C, a pending batch) leaves the earlier one as it was.
    """
    start_dir = (start_dir or Path.cwd()).resolve()
    output_dir = Path(output_dir).resolve()
    if cfg.tracking.enabled:  # one line before any work (an http(s) server that is down ...)
        tracking.check_tracking_uri(
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir),
            connect_timeout_s=cfg.tracking.connect_timeout_s,
        )
    check_writable(output_dir)
    path = lme_data_file(cfg, start_dir)
    if path is None:
        raise ValueError("benchmark=longmemeval scores one answer file: give one data.path")
    refused = locomo_only_settings(cfg)
    if refused:
        raise ValueError(refused)
    check_regular_file(path)
    answers = read_lme_answers(path)  # a LoCoMo file is named as one before data.reference
    if not cfg.data.reference:
        raise ValueError(NO_REFERENCE)
    if not answers.labelled and not cfg.scorer.uses_judge:
        raise ValueError(
            f"{path}: its rows have no autoeval_label (stored verdicts), so nothing can be "
            "scored without a judge: add scorer=judge benchmark=longmemeval (e.g. judge=gpt-4o, "
            "LongMemEval's judge)"
        )
    labels = None
    if cfg.judge.labels:  # read and checked before any call
        from locomo_exp.trust.labels import load_labels

        labels = load_labels(expand_paths(cfg.judge.labels, start_dir)[0])
    judge_cfg = lme_judge_config(cfg.judge) if cfg.scorer.uses_judge else None
    if judge_cfg is not None:
        from locomo_exp.judge import preflight_judge

        preflight_judge(judge_cfg, [], start_dir=start_dir)  # settings, key: before any reading
    reference_path = expand_paths(cfg.data.reference, start_dir)[0]
    reference = read_lme_reference(reference_path)
    matched = match_reference(answers, reference)
    spend = None  # judge.max_cost_usd over the whole job, refused before anything is written
    if judge_cfg is not None and judge_cfg.max_cost_usd is not None and not judge_cfg.dry_run:
        records = judge_records(matched)
        controls, _ = size_lme_audit(records, judge_cfg, quiet=True)  # max_share applied
        spend = plan_job_spend(lme_spend_parts(judge_cfg, records, [c.record for c in controls]),
                               judge_cfg.max_cost_usd, start_dir)
    recover_cut_swap(output_dir)  # a swap of runs cut by a killed job: finished or undone
    # overwrite=true: the new run is built beside the old one, swapped in once finished
    state = check_output_dir(output_dir, cfg.overwrite)  # a finished run needs overwrite=true
    replacing = cfg.overwrite and state != "empty"
    common: dict[str, Any] = {
        "answers_path": answers.path,
        "answers_sha256": answers.sha256,
        "reference": reference,
        "matched": matched,
        "n_rows": len(answers.rows),
        "null_hypotheses": len(answers.missing_hypotheses),
        "stored_models": answers.label_models or (["unnamed"] if answers.labelled else []),
        "seed": cfg.report.seed,
    }
    tracking_uri = None
    run_context: Any = nullcontext()
    if cfg.tracking.enabled:
        tracking_uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        spec = tracking.RunSpec(
            tracking_uri=tracking_uri,
            experiment=cfg.tracking.experiment,
            run_name=run_name or cfg.tracking.run_name or f"{path.stem} · longmemeval",
            tags={"locomo_exp.version": __version__, "benchmark": lme.NAME,
                  "data.file": path.name, "scorer": cfg.scorer.name.value, **(extra_tags or {})},
            parent_run_id=parent_run_id,
        )
        run_context = tracking.mlflow_run(spec, log_file=output_dir / "locomo_exp.log")
    with replacing_run(output_dir, replacing) as replacement, run_context as run:
        write_dir = replacement.write_dir  # output_dir, or the stage of a replacing run
        summary = build_lme_summary(**common, judge_status=RUNNING if judge_cfg else None)
        files = _write(write_dir, cfg, summary, score_rows(matched))  # stored J first
        judge_result = None
        pending: JudgeBatchPending | None = None
        if judge_cfg is not None:
            try:
                judge_result, summary = _run_judge(cfg, judge_cfg, matched, common, start_dir,
                                                   write_dir, spend)
            except JudgeBatchPending as waiting:  # judge.batch.wait=false: collected later
                pending = waiting
                summary = build_lme_summary(**common, judge_status=judge_status(waiting))
                if run is not None:
                    tracking.set_tags(tracking.pending_batch_tags(waiting.batch_ids))
        if labels is not None:
            summary["labels"] = labels_section(
                matched, summary, labels, seed=cfg.report.seed,
                judge_verdicts=judge_verdicts(judge_result, matched) if judge_result else None,
            )
        if labels is not None or judge_result is not None:  # J inflated / deflated checked
            summary = with_lme_checks(summary)
            files = _write(write_dir, cfg, summary, score_rows(matched, judge_result))
        questions = lme_question_rows(  # every question: questions.html, MLflow traces
            score_rows(matched, judge_result),
            judge_cfg.model if judge_cfg and judge_result else None)
        files.append(write_run_questions(write_dir, f"{path.name} · longmemeval", questions)[0])
        metrics = lme_tracking.run_metrics(summary)
        if run is not None:
            traces = cfg.tracking.questions and tracking.QuestionLogging(questions, run.info.run_id)
            card = json.loads((write_dir / "card.json").read_text(encoding="utf-8"))
            tracking.log_params(lme_tracking.run_params(summary, card))
            tracking.log_metrics(metrics)
            tracking.set_tags(
                {
                    tracking.NOTE_TAG: lme_tracking.run_description(metrics, summary, card),
                    **tracking.warning_tags(summary.get("warnings") or ()),
                }
            )
            tracking.log_artifacts(files)
            if traces:
                traces.wait()
        status = str(summary["status"].get("judge", "ok"))
        if status.startswith("failed"):
            where = (f"those outputs are not kept: the earlier run in {output_dir} stays"
                     if replacement.active else f"outputs are in {output_dir}")
            raise ValueError(f"judge {status}; {where}")
        if pending is None:  # finished, every output written: now it replaces the old run
            interrupts.raise_if_received()  # a swallowed Ctrl-C: the old run stays
            replacement.commit()
            files = [replacement.final_path(path) for path in files]
    if pending is not None:  # after the run ended: the same command collects the batches
        raise pending
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
