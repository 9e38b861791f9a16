"""LongMemEval's panel members and what a judge dry run counts for its audit and panel.

A LongMemEval run judges its audit controls and each ``judge.panel`` member after the
answers (:mod:`.job`). A dry run makes none of those calls but counts
them, with the same flat keys as a LoCoMo run's dry run (:mod:`locomo_exp.trust.job`), so the
dry-run block names the panel members and gives the whole run's calls and cost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from locomo_exp.benchmarks.longmemeval.controls import lme_audit_config
from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.judge.spend import Part
from locomo_exp.results import QARecord
from locomo_exp.trust.plan import TOKEN_KEYS, judge_name, panel_preset_config

Judge = Callable[[list[QARecord], JudgeConfig], JudgeRunResult]
"""``judge(records, cfg)``: a judge job over ``records`` (a dry run: no call is made)."""


def lme_member_config(judge_cfg: JudgeConfig, preset: str) -> JudgeConfig:
    """A panel member's judge config under LongMemEval's protocol.

    The member keeps its preset's model and provider and takes the run's protocol settings
    (protocol, template, temperature, max_tokens, runs, plain text, categories), so only the
    model differs.

    Args:
        judge_cfg: the run's judge config.
        preset: the member's judge preset (``judge.panel`` entry).

    Raises:
        JudgeError: an unknown or unusable preset.
    """
    return replace(
        panel_preset_config(judge_cfg, preset),
        protocol=judge_cfg.protocol, template=judge_cfg.template,
        temperature=judge_cfg.temperature, max_tokens=judge_cfg.max_tokens,
        runs=judge_cfg.runs, min_successful_runs=judge_cfg.min_successful_runs,
        structured_output=judge_cfg.structured_output, categories=judge_cfg.categories,
    )




def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def with_trust_calls(
    estimate: Mapping[str, Any],
    judge_cfg: JudgeConfig,
    records: list[QARecord],
    controls: list[QARecord],
    judge: Judge,
    audit_sizing: str | None = None,
) -> dict[str, Any]:
    """The answers' dry-run estimate with the audit's and the panel's calls added.

    Args:
        estimate: the answers' estimate (``calls_to_make``, ``estimated_cost_usd`` in USD).
        judge_cfg: the run's judge config (``dry_run`` true).
        records: the answers' records.
        controls: the audit controls' records (empty: no audit), judged with
            :func:`~.controls.lme_audit_config` (``judge.audit.runs``).
        judge: runs a judge dry run over records with a config.
        audit_sizing: how the audit was sized (``judge.audit.max_share``), kept as
            ``audit_sizing`` as a LoCoMo run's dry run keeps it.

    Returns:
        A copy of ``estimate``; with controls, ``audit_calls_to_make``, ``audit_sizing`` and
        ``audit_estimated_cost_usd``; with a panel, ``panel_members`` (``<provider> <model>``
        each, ``at <endpoint>`` when not the default) and ``panel_calls_to_make`` (a member
        with the run's own model costs nothing: its calls are the answers', cache hits once
        they are judged); with either, ``total_calls_to_make``,
        ``total_estimated_cost_usd`` (``None`` when a price is unknown) and
        ``total_estimated_input_tokens`` / ``total_estimated_output_tokens`` (the same calls'
        tokens, so tokens and cost always cover the same calls).
    """
    out = dict(estimate)
    calls = int(estimate["calls_to_make"])
    cost: float | None = estimate.get("estimated_cost_usd")
    tokens = {k: int(estimate.get(k) or 0) for k in TOKEN_KEYS}
    if controls:
        audit = judge(controls, lme_audit_config(judge_cfg)).dry_run_estimate or {}
        tokens = {k: v + int(audit.get(k) or 0) for k, v in tokens.items()}
        out["audit_calls_to_make"] = audit.get("calls_to_make", 0)
        if audit_sizing is not None:
            out["audit_sizing"] = audit_sizing
        out["audit_estimated_cost_usd"] = audit.get("estimated_cost_usd")
        calls += int(out["audit_calls_to_make"])
        cost = _add(cost, out["audit_estimated_cost_usd"])
    if judge_cfg.panel:
        members: list[str] = []
        panel_calls = 0
        for preset in judge_cfg.panel:
            member = lme_member_config(judge_cfg, str(preset))
            run = judge(records, member)
            members.append(judge_name(run.summary))
            if judge_cfg.cache and member.model == judge_cfg.model:
                continue  # the answers' own calls: cache hits
            part = run.dry_run_estimate or {}
            panel_calls += int(part.get("calls_to_make", 0))
            cost = _add(cost, part.get("estimated_cost_usd"))
            tokens = {k: v + int(part.get(k) or 0) for k, v in tokens.items()}
        out["panel_members"] = "; ".join(members)
        out["panel_calls_to_make"] = panel_calls
        calls += panel_calls
    if controls or judge_cfg.panel:
        out["total_calls_to_make"] = calls
        out["total_estimated_cost_usd"] = None if cost is None else round(cost, 6)
        out.update({f"total_{k}": v for k, v in tokens.items()})
    return out


def lme_spend_parts(
    judge_cfg: JudgeConfig, records: list[QARecord], controls: list[QARecord]
) -> list[Part]:
    """The parts of a LongMemEval judge job, in the order they run, for its spend cap.

    Args:
        judge_cfg: the run's judge config (LongMemEval's protocol).
        records: the answered questions.
        controls: the audit controls' records (empty: no audit).

    Returns:
        The answers, each panel member, then the audit: ``(kind, records, config)`` for
        :func:`~locomo_exp.judge.spend.plan_job_spend`.
    """
    parts: list[Part] = [("answer", records, judge_cfg)]
    parts += [("panel", records, lme_member_config(judge_cfg, str(p))) for p in judge_cfg.panel]
    return parts + ([("audit", controls, lme_audit_config(judge_cfg))] if controls else [])


__all__ = ["lme_member_config", "lme_spend_parts", "with_trust_calls"]
