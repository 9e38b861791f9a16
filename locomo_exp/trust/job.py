"""Judge trust in the judge job: audit controls, human labels, stored verdicts, a panel.

:func:`~locomo_exp.trust.plan.plan_trust` validates everything before any call and counts
the extra calls; :func:`run_trust` judges the controls and the panel through
:func:`~locomo_exp.judge.job.run_judge` (same prompt, temperature, runs, cache and client as
the real answers; controls never enter J) and returns a
:class:`~locomo_exp.results.TrustSummary`: numbers and words, which the report renders
(:mod:`locomo_exp.report.trust`) and MLflow names (:mod:`locomo_exp.tracking.trust`). With
``judge.dry_run`` no call is made: the audit's and the panel's calls and cost are estimated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmark import LOCOMO
from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.judge.preflight import judged_records
from locomo_exp.judge.protocols import protocol_spec
from locomo_exp.judge.spend import JobSpend, Part
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.models import model_price
from locomo_exp.llm.stop import CallsStop, CallsStopped
from locomo_exp.results import CallEstimate, QARecord, TrustDryRun, TrustSummary
from locomo_exp.results.template_note import unparsed_scored_words
from locomo_exp.stats.correction import CorrectedJ, corrected_j
from locomo_exp.trust.audit import audit_pairs, summarise_audit, unmeasured_gate_audit
from locomo_exp.trust.budget import audit_judge_config
from locomo_exp.trust.checks import answering_model_checks, merged, unreadable_checks
from locomo_exp.trust.labels import AgreementReport, compare_with_labels, compare_with_stored
from locomo_exp.trust.panel import judge_panel
from locomo_exp.trust.plan import TOKEN_KEYS, TrustPlan, judge_name, panel_preset_config, plan_trust
from locomo_exp.trust.summary import (
    agreement_report_result,
    audit_result,
    check_agreement,
    check_audit,
    corrected_result,
    panel_summary,
)

logger = logging.getLogger(__name__)

Judge = Callable[[list[QARecord], JudgeConfig], JudgeRunResult]


class JudgeAuditFailed(JudgeError):
    """The judge audit exceeded ``judge.audit.max_false_accept`` / ``max_false_reject``.

    Raised after every output is written and the run is logged (tagged
    ``judge.audit_gate=failed``); the CLI prints the one-line message and exits 1.
    """


def _verdicts(result: JudgeRunResult) -> dict[str, float | None]:
    """Question id -> the mean of the verdicts the judge gave (0-100), or ``None``.

    A reply a template's ``on_unparsed`` scored is left out: it is not the judge's verdict
    (the unreadable-replies check counts it), so the audit, labels and stored verdicts
    measure the judge, not the reply format.
    """
    verdicts: dict[str, float | None] = {}
    for qid, agg in result.per_question.items():
        if not any(r.unparsed_scored for r in agg.runs):
            verdicts[qid] = agg.mean_score
            continue
        read = [r.score for r in agg.runs if r.outcome == "valid" and not r.unparsed_scored]
        scores = [float(s) for s in read if s is not None]
        verdicts[qid] = sum(scores) / len(scores) if scores else None
    return verdicts


def _control_costs(result: JudgeRunResult, cfg: JudgeConfig) -> dict[str, float] | None:
    """USD paid per control: calls made now (batch at its price factor); cached calls free."""
    price = model_price(cfg)
    if price is None:
        return None
    factor = float((result.summary.get("batch") or {}).get("price_factor", 1.0))
    return {
        qid: sum(
            (r.input_tokens * price["input"] + r.output_tokens * price["output"]) / 1e6 * factor
            for r in agg.runs
            if not r.cached
        )
        for qid, agg in result.per_question.items()
    }


def _add_costs(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _dry_run(
    plan: TrustPlan,
    records: list[QARecord],
    cfg: JudgeConfig,
    main: JudgeRunResult,
    judge: Judge,
) -> TrustSummary:
    estimate = main.summary["dry_run_estimate"]
    audit: CallEstimate | None = None
    tokens = {k: int(estimate.get(k) or 0) for k in TOKEN_KEYS}  # the same calls as the cost

    def add_tokens(part: Mapping[str, Any]) -> None:
        for key in tokens:
            tokens[key] += int(part.get(key) or 0)

    if plan.controls:
        controls = [c.record for c in plan.controls]
        audit_run = judge(controls, audit_judge_config(cfg, plan.controls))
        audit = CallEstimate.from_json(audit_run.summary["dry_run_estimate"])
        add_tokens(audit_run.summary["dry_run_estimate"])
    panel_parts: dict[str, CallEstimate] = {}
    members: list[str] = []
    for preset, member in plan.panel:
        member_run = judge(records, member)
        members.append(judge_name(member_run.summary))
        part = CallEstimate.from_json(member_run.summary["dry_run_estimate"])
        if cfg.cache and member.model == cfg.model and member.temperature == cfg.temperature:
            # the same calls as the answers': cache hits once the answers are judged
            part = replace(
                part,
                calls_cached=part.calls_total,
                calls_to_make=0,
                estimated_cost_usd=0.0,
                cost_upper_bound_usd=0.0,
            )
        else:
            add_tokens(member_run.summary["dry_run_estimate"])
        panel_parts[preset] = part
    parts = ([audit] if audit is not None else []) + list(panel_parts.values())
    total_calls = estimate["calls_to_make"] + sum(p.calls_to_make for p in parts)
    total_cost = estimate["estimated_cost_usd"]
    for p in parts:
        total_cost = _add_costs(total_cost, p.estimated_cost_usd)
    # flat keys, printed by the CLI's dry-run line
    if audit is not None:
        estimate["audit_calls_to_make"] = audit.calls_to_make
        estimate["audit_sizing"] = plan.audit_note
        estimate["audit_estimated_cost_usd"] = audit.estimated_cost_usd
    if panel_parts:
        estimate["panel_members"] = "; ".join(members)
        estimate["panel_calls_to_make"] = sum(p.calls_to_make for p in panel_parts.values())
        estimate["panel_cost_multiplier"] = round(plan.panel_cost_multiplier, 3)
    estimate["total_calls_to_make"] = total_calls
    # USD to a millionth of a dollar, as the parts are printed (no 0.10536000000000001)
    estimate["total_estimated_cost_usd"] = None if total_cost is None else round(total_cost, 6)
    estimate.update({f"total_{key}": value for key, value in tokens.items()})
    logger.info(
        "judge dry run with trust: %d calls to make in all (audit %s, panel %s), "
        "estimated cost %s USD",
        total_calls,
        0 if audit is None else audit.calls_to_make,
        estimate.get("panel_calls_to_make", 0),
        "n/a" if total_cost is None else f"{total_cost:.2f}",
    )
    dry_run = TrustDryRun(
        audit=audit,
        panel=panel_parts,
        panel_cost_multiplier=plan.panel_cost_multiplier if panel_parts else None,
    )
    # a dry run pays for nothing: its total is the answers' (0.0)
    return TrustSummary(total_cost_usd=main.summary.get("estimated_cost_usd"), dry_run=dry_run)


def _corrected(
    judged: list[QARecord],
    verdicts: Mapping[str, float | None],
    labels: AgreementReport | None,
    plan: TrustPlan,
    audit_verdicts: Mapping[str, float | None],
    threshold: float,
) -> tuple[CorrectedJ | None, str]:
    scores = [verdicts.get(r.question_id) for r in judged]
    accepts = [v >= threshold for v in scores if v is not None]
    if not accepts:
        return None, "no judged question has a verdict"
    if labels is not None and labels.reference:
        ref, got, source = list(labels.reference), list(labels.judge), "labels"
    elif plan.controls:
        ref, got = audit_pairs(plan.controls, audit_verdicts, threshold)
        source = "audit"
    else:
        return None, "no labels and no audit"
    try:
        return corrected_j(accepts, ref, got, source=source), ""
    except ValueError as error:
        return None, f"{source}: {error}"


def spend_parts(plan: TrustPlan, records: list[QARecord], cfg: JudgeConfig) -> list[Part]:
    """The parts of a LoCoMo judge job, in the order they run, for its spend cap.

    Returns:
        The answers, the audit's controls (when it has some), then each panel member:
        ``(kind, records, config)`` for :func:`~locomo_exp.judge.spend.plan_job_spend`.
    """
    parts: list[Part] = [("answer", records, cfg)]
    if plan.controls:
        controls = [c.record for c in plan.controls]
        parts.append(("audit", controls, audit_judge_config(cfg, plan.controls)))
    parts += [("panel", records, member) for _, member in plan.panel]
    return parts


def run_trust(
    plan: TrustPlan,
    records: list[QARecord],
    cfg: JudgeConfig,
    main: JudgeRunResult,
    *,
    start_dir: Path,
    category_names: Mapping[int, str] | None = None,
    client: JudgeClient | None = None,
    calls_stop: CallsStop | None = None,
    spend: JobSpend | None = None,
) -> TrustSummary:
    """Judge the controls and the panel, compare with labels/stored verdicts, summarise.

    Args:
        plan: from :func:`~locomo_exp.trust.plan.plan_trust`.
        records: the run's records.
        cfg: the judge config.
        main: the result of judging the real answers (its verdicts are compared; in a dry
            run its estimate gets the audit's and panel's calls and cost added).
        start_dir: directory the cache path is resolved against.
        category_names: display names by category id.
        client: the judge client (tests); ``None`` builds the SDK client per config.
        calls_stop: set by another thread (the MLflow run's) to stop paying: no control or
            panel call is sent after it.
        spend: the job's spend cap (:func:`spend_parts`), which the answers began; the
            audit's and the panel's calls count against it too.

    Returns:
        The :class:`~locomo_exp.results.TrustSummary`: audit, agreement with labels and
        stored verdicts, corrected J (or why not), panel, and the run's total judge cost
        (answers + audit + panel, calls actually paid; USD).

    Raises:
        ValueError: ``cfg.protocol`` is not a registered protocol, or its template file
            cannot be read (the judge's preflight refuses both before).
        Whatever :func:`~locomo_exp.judge.job.run_judge` raises for the extra calls.
        CallsStopped: ``calls_stop`` was set; counted over the whole judge job (the
            answers' calls, then the audit's and the panel's: made, left, in all).
    """
    from locomo_exp.judge.job import run_judge

    protocol = protocol_spec(cfg)
    threshold = protocol.accept_threshold

    names = dict(category_names) if category_names else None
    judged = judged_records(records, cfg)

    main_counts = main.summary.get("counts") or {}
    done = [main_counts.get("runs_total", 0), main_counts.get("calls_made", 0)]  # calls, made
    parts = plan.part_calls(cfg)
    planned, left_after = iter(parts), [sum(parts)]  # the calls of the parts still to come

    def judge(recs: list[QARecord], c: JudgeConfig) -> JudgeRunResult:
        if cfg.dry_run:
            return run_judge(recs, c, start_dir=start_dir, category_names=names, client=client)
        left_after[0] -= next(planned, 0)  # the calls of the parts after this one
        try:
            result = run_judge(recs, c, start_dir=start_dir, category_names=names,
                               client=client, calls_stop=calls_stop, spend=spend)
        except CallsStopped as stopped:  # one line for the whole job, not this part alone
            raise stopped.widened(made_before=done[1], done_before=done[0],
                                  later=left_after[0]) from stopped.__cause__
        counts = result.summary.get("counts") or {}
        done[0] += counts.get("runs_total", 0)
        done[1] += counts.get("calls_made", 0)
        return result

    if cfg.dry_run:
        return _dry_run(plan, records, cfg, main, judge)
    verdicts = _verdicts(main)
    audit = None
    judged_audit = None
    extra_runs: list[JudgeRunResult] = []  # the audit's and the panel's
    audit_verdicts: dict[str, float | None] = {}
    if plan.controls:
        audit_cfg = audit_judge_config(cfg, plan.controls)
        logger.info("judge audit: judging %d control answers", len(plan.controls))
        audit_run = judge([c.record for c in plan.controls], audit_cfg)
        extra_runs.append(audit_run)
        audit_verdicts = _verdicts(audit_run)
        judged_audit = summarise_audit(
            plan.controls,
            audit_verdicts,
            threshold=threshold,
            max_false_accept=cfg.audit.max_false_accept,
            max_false_reject=cfg.audit.max_false_reject,
            cost_usd=_control_costs(audit_run, audit_cfg),
        )
        audit = audit_result(
            judged_audit,
            controls=len(plan.controls),
            counts=audit_run.summary["counts"],
            estimated_cost_usd=audit_run.summary.get("estimated_cost_usd"),
            verdicts=audit_verdicts,
        )
    elif cfg.audit.max_false_accept is not None or cfg.audit.max_false_reject is not None:
        judged_audit = unmeasured_gate_audit(
            int(cfg.audit.n), cfg.audit.max_false_accept, cfg.audit.max_false_reject,
            threshold=threshold, why=plan.audit_note,
        )  # fmt: skip
        audit = audit_result(
            judged_audit, controls=0, counts={}, estimated_cost_usd=0.0, verdicts={}
        )
    labels = (
        compare_with_labels(judged, verdicts, plan.labels, threshold=threshold)
        if plan.labels
        else None
    )
    stored = compare_with_stored(judged, verdicts, threshold=threshold)
    corrected, why_not = _corrected(judged, verdicts, labels, plan, audit_verdicts, threshold)
    panel = None
    if plan.panel:
        per_model: dict[str, dict[str, float | None]] = {}
        panel_calls = 0
        panel_cost: float | None = 0.0
        for preset, member in plan.panel:
            logger.info("judge panel: judging with %s (%s)", preset, member.model)
            result = judge(records, member)
            extra_runs.append(result)
            per_model[member.model] = _verdicts(result)
            panel_calls += result.summary["counts"].get("calls_made", 0)
            panel_cost = _add_costs(panel_cost, result.summary.get("estimated_cost_usd"))
        panel_result = judge_panel(
            per_model,
            protocol=protocol,
            question_ids=[r.question_id for r in judged],
        )
        panel = panel_summary(
            replace(panel_result, cost_multiplier=plan.panel_cost_multiplier),
            calls_made=panel_calls,
            estimated_cost_usd=panel_cost,
        )
    # the same calls in all: cached ones at the usage the cache stored with their replies
    in_all = main.summary.get("estimated_cost_usd_including_cached")
    for run in extra_runs:
        in_all = _add_costs(in_all, run.summary.get("estimated_cost_usd_including_cached"))
    # one cost everywhere: calls actually paid (answers, audit, panel); cached calls free
    total = _add_costs(
        main.summary.get("estimated_cost_usd"), 0.0 if audit is None else audit.estimated_cost_usd
    )
    counts = main.summary.get("counts") or {}
    warnings = merged(
        answering_model_checks(main.summary.get("model"), main.summary.get("response_models")),
        unreadable_checks(
            int(counts.get("parse_failure", 0)),
            int(counts.get("runs_total", 0)),
            LOCOMO.judge_checks,
            unparsed_scored_words(main.summary),
        ),
        None if judged_audit is None else check_audit(judged_audit),
        check_agreement(labels, "the human labels"),
        check_agreement(stored, "the stored verdicts"),
    )
    if plan.audit_unmeasured is not None:  # J was not checked: said wherever J is
        warnings += (plan.audit_unmeasured,)
    return TrustSummary(
        total_cost_usd=_add_costs(total, 0.0 if panel is None else panel.estimated_cost_usd),
        audit=audit,
        labels=None if labels is None else agreement_report_result(labels),
        stored=None if stored is None else agreement_report_result(stored),
        corrected=None if corrected is None else corrected_result(corrected),
        corrected_unavailable=why_not
        if corrected is None and (labels is not None or audit is not None)
        else None,
        panel=panel,
        warnings=warnings,
        total_cost_including_cached_usd=None if in_all is None else round(in_all, 6),
    )


__all__ = [
    "JudgeAuditFailed",
    "TrustPlan",
    "panel_preset_config",
    "plan_trust",
    "run_trust",
    "spend_parts",
]
