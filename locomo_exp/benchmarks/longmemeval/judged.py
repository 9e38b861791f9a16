"""LongMemEval's judge: its records, settings, main call, and the trust checks (panel, audit).

The pipeline's judge and trust hooks (:class:`locomo_exp.benchmarks.longmemeval.job.LmeSteps`)
call :func:`judge_answers` and :func:`check_judge`. Each answered question is one judge unit;
a verdict is yes (1) or no (0) by the authors' rule (:mod:`.protocol`), averaged over
``judge.runs``. The panel judges the same answers with each ``judge.panel`` preset; the audit
judges controls built from the answers (:mod:`.controls`), capped by ``judge.audit.max_share``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.longmemeval.answers import LmeMatched
from locomo_exp.benchmarks.longmemeval.controls import lme_audit_config, size_lme_audit
from locomo_exp.benchmarks.longmemeval.dry_run import lme_member_config, with_trust_calls
from locomo_exp.benchmarks.longmemeval.protocol import LONGMEMEVAL
from locomo_exp.benchmarks.longmemeval.summary import audit_section, panel_member
from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.results import QARecord

if TYPE_CHECKING:
    from locomo_exp.benchmarks.steps import JobContext


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
    from locomo_exp.judge.protocols import get_protocol
    from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL

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
    when this mean is at least :data:`.facts.ACCEPT_AT` / 100
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


@dataclass
class LmeJudged:
    """What the judge (and its trust checks) gave a LongMemEval run.

    Attributes:
        result: the judge engine's result on the answers (a dry run's estimate, or every
            question's runs).
        section: :func:`judge_section` of it.
        estimate: a dry run's estimate with the audit's and panel's calls counted, else
            ``None``.
        status: ``summary["status"]["judge"]``: ``"ok"``, or the dry run's.
        verdicts: question id -> verdict on 0-1 (:func:`judge_verdicts`); empty for a dry run.
        panel: each ``judge.panel`` member's figures and agreement, once trust ran.
        audit: the audit's section (``kinds``, ``sizing``, ...), or ``None`` when not asked.
    """

    result: JudgeRunResult
    section: dict[str, Any]
    estimate: dict[str, Any] | None
    status: str
    verdicts: dict[str, float | None]
    panel: list[dict[str, Any]] | None = None
    audit: dict[str, Any] | None = None


def _run(records: list[QARecord], cfg: JudgeConfig, ctx: JobContext, *, client: bool = True
         ) -> JudgeRunResult:
    """One ``run_judge`` call under LongMemEval's kind names, the job's stop and spend plan."""
    from locomo_exp.judge import run_judge

    return run_judge(records, cfg, start_dir=ctx.start_dir, category_names=LONGMEMEVAL.kind_ids,
                     client=ctx.client if client else None, calls_stop=ctx.calls_stop,
                     spend=ctx.spend, prompts=ctx.prompts, cache=ctx.cache)


def judge_answers(matched: LmeMatched, judge: JudgeConfig, ctx: JobContext) -> LmeJudged:
    """Judge every answered question, or price the whole job (``judge.dry_run``).

    A dry run counts the audit's and the panel's calls too (:func:`.dry_run.with_trust_calls`).

    Raises:
        ValueError: the judge run failed (API errors over ``judge.max_error_rate``, or no
            valid verdict): one line; nothing is written, completed calls stay cached.
        JudgeError, JudgeInterrupted, CallsStopped, JudgeBatchPending: from the judge engine.
    """
    from locomo_exp.results import JUDGE_DRY_RUN

    records = judge_records(matched)
    result = _run(records, judge, ctx)
    section = judge_section(result)
    if result.dry_run_estimate is not None:  # the audit's and panel's calls counted too
        controls, sizing = size_lme_audit(records, judge)  # judge.audit.max_share
        estimate = with_trust_calls(
            result.dry_run_estimate, judge, records, [c.record for c in controls],
            lambda recs, cfg: _run(recs, cfg, ctx), audit_sizing=sizing)
        return LmeJudged(result, section, estimate, JUDGE_DRY_RUN, {})
    status = result.finished_status(judge.max_error_rate)
    if status.startswith("failed"):
        raise ValueError(f"judge {status}; nothing written (completed calls are cached; an "
                         f"earlier run in {ctx.output_dir} stays as it was)")
    return LmeJudged(result, section, None, status, judge_verdicts(result, matched))


def check_judge(matched: LmeMatched, judged: LmeJudged, judge: JudgeConfig, ctx: JobContext
                ) -> LmeJudged:
    """The trust checks of a judged run: the panel, then the audit (none for a dry run).

    The panel's members keep their model and provider and take the run's protocol settings
    (:func:`.dry_run.lme_member_config`), so only the model differs. The audit's controls
    are judged like the answers and never enter the accuracies; ``judge.audit.max_share``
    caps them (:func:`.controls.size_lme_audit`).

    Raises:
        JudgeError, JudgeInterrupted, CallsStopped, JudgeBatchPending: from the judge engine.
    """
    if judged.estimate is not None:
        return judged
    records = judge_records(matched)
    seed = ctx.cfg.report.seed
    panel = None
    if judge.panel:
        panel = []
        for preset in judge.panel:
            member_cfg = lme_member_config(judge, str(preset))
            result = _run(records, member_cfg, ctx, client=False)
            panel.append(panel_member(str(preset), member_cfg.model, matched,
                                      judge_verdicts(result, matched), judged.verdicts,
                                      seed=seed))
    controls, sizing = size_lme_audit(records, judge)  # judge.audit.max_share
    audit = None
    if controls:  # judged like the real answers, never part of the accuracies
        audited = _run([c.record for c in controls], lme_audit_config(judge), ctx)
        audit = audit_section(controls, audited, judged.verdicts, seed=seed)
        audit["sizing"] = sizing
    elif int(judge.audit.n) > 0:  # asked for, capped to none: the report says why
        audit = {"kinds": {}, "sizing": sizing}
    return replace(judged, panel=panel, audit=audit)



__all__ = [
    "LmeJudged",
    "check_judge",
    "judge_answers",
    "judge_records",
    "judge_section",
    "judge_verdicts",
    "lme_judge_config",
]
