"""LoCoMo's MLflow logging once its outputs are written, and the judge results that fail it.

Called by :class:`~.steps.LocomoSteps` (``track``, ``failure``) inside the recorded job
(:mod:`locomo_exp.benchmarks.pipeline_recorded`), with the run active.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from locomo_exp import tracking
from locomo_exp.report.locomo_run import config_tree
from locomo_exp.scoring import F1_VERSIONS

if TYPE_CHECKING:
    from locomo_exp.benchmarks.locomo.types import LocomoJudged
    from locomo_exp.benchmarks.steps import JobContext, Written


def track_run(written: Written, metrics: dict[str, float], ctx: JobContext,
              logged: dict[str, str], judge_summary: dict[str, Any] | None, run_id: str
              ) -> None:
    """Log the run's params, headline metrics, tags, artifacts and tables to MLflow.

    Everything logged comes from the run as built (its card, summary, rows and question
    rows): no output file is read back.

    Args:
        written: the outputs written (a :class:`~.types.LocomoWritten`: ``run`` is the
            run as built, ``typed_summary`` LoCoMo's ``RunSummary``).
        metrics: :func:`locomo_exp.tracking.run_metrics` of it (0-100 scores, counts).
        ctx: the job's context.
        logged: the params logged when the run started (each key is logged once: MLflow
            refuses a second, different value; docs/field_notes.md §5).
        judge_summary: the judge's ``summary.json`` section when it finished, else ``None``.
        run_id: the active MLflow run's id (question traces).
    """
    from locomo_exp.benchmarks.locomo.types import LocomoWritten

    assert isinstance(written, LocomoWritten) and written.run is not None
    cfg, summary, card = ctx.cfg, written.typed_summary, written.run.card
    if judge_summary is not None:
        tracking.set_tags(tracking.judge_tags(judge_summary, dry_run=cfg.judge.dry_run))
    extra = tracking.input_params(sha256=summary.input.sha256,
                                  format_detected=summary.input.format,
                                  f1_version=F1_VERSIONS[cfg.f1.variant.value])
    extra.update(tracking.card_params(card))
    if judge_summary is not None:
        extra.update(tracking.judge_params(judge_summary))
    tracking.log_params({k: v for k, v in extra.items() if k not in logged})
    tracking.log_metrics(tracking.headline_metrics(metrics))  # the rest: metrics.json
    tracking.log_dict(tracking.finite_metrics(metrics), tracking.METRICS_ARTIFACT)
    tracking.log_dict(tracking.resolved_config(config_tree(cfg)),
                      tracking.RESOLVED_CONFIG_ARTIFACT)
    tracking.set_tags({
        tracking.NOTE_TAG: tracking.run_description(
            metrics, card, written.summary.get("status") or {},
            (written.summary.get("analysis") or {}).get("intervals"),
            warnings=summary.warnings),
        **tracking.warning_tags(summary.warnings),  # MLflow shows "Finished"
    })
    traces = (tracking.QuestionLogging(written.questions, run_id)
              if cfg.tracking.questions else None)
    tracking.log_artifacts(written.files)
    tracking.log_table(written.rows, "scores_table.json")
    tracking.log_table(tracking.interval_rows(metrics), tracking.INTERVALS_TABLE)
    if traces:
        traces.wait()  # logged on a thread while the artifacts upload


def judge_failure(judged: LocomoJudged | None, written: Written, ctx: JobContext,
                  where: str) -> Exception | None:
    """The error a finished judge ends the job with, its paid calls attached, or ``None``.

    ``JudgeErrorRateExceeded`` when the judge gave no usable J (``status.judge`` starts
    ``failed``), with the outcome counts in words; ``JudgeAuditFailed`` when the audit's
    gate failed the run (``status.judge_audit``).
    """
    if judged is None:  # an F1-only job imports no judge module
        return None
    from locomo_exp.benchmarks.locomo.types import JudgeErrorRateExceeded
    from locomo_exp.judge.spend import note_paid

    status = written.summary.get("status") or {}
    failed: Exception
    if status["judge"].startswith("failed"):  # no verdict
        counts = judged.result.summary.get("counts") or {}
        failure = status["judge"].removeprefix("failed: ")
        outcomes = ", ".join(  # words, not a dict: valid 0, parse failure 16, ...
            f"{key.replace('_', ' ')} {counts[key]}"
            for key in ("valid", "parse_failure", "no_verdict", "api_error") if key in counts)
        if "out of" not in failure:  # "no valid judge verdict" already counts them
            failure += f" ({outcomes} of {counts.get('runs_total', 0)} judge runs)"
        failed = JudgeErrorRateExceeded(
            f"{failure}; scores.jsonl keeps each raw reply and error; {where}")
    elif status.get("judge_audit", "ok") != "ok":
        from locomo_exp.trust.job import JudgeAuditFailed

        audit = judged.trust.audit
        failed = JudgeAuditFailed(
            f"{audit.gate.message if audit is not None else 'judge audit failed'}; {where}")
    else:
        return None
    note_paid(failed, ctx.spend, judged.result.summary)  # the sweep summary shows it
    return failed
