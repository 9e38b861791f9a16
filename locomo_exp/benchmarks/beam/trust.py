"""Human labels, corrected accept rate and a judge panel for judged BEAM runs.

BEAM's judged unit is the rubric item (:mod:`.judged`), so these checks are per item, with
LoCoMo's generic engine (:mod:`locomo_exp.benchmarks.plugin_trust`):

* ``judge.labels``: a file of human verdicts keyed by the item's record id
  (``<question_id>#item<k>``), ``correct``/``wrong``/``ambiguous`` as LoCoMo's labels.
  The judge accepts an item when its verdict is at least the protocol's threshold (50: an
  item scored 0.5 counts as accepted). Agreement, Cohen's kappa, sensitivity and
  specificity come from the 2x2 table; the share of rubric items the judge accepts is
  corrected for the judge's errors by Rogan-Gladen, with its two-sample bootstrap
  interval (:mod:`locomo_exp.stats.correction`).
* ``judge.panel``: every rubric item judged again by each preset, with the item prompt of
  the run's profile (the alignment calls of ``beam-official`` are not repeated); per-model
  accept rates, pairwise kappa and Krippendorff's alpha.

BEAM's audit controls stay its own (:mod:`.audit`: read by the profile's item rule, sized
by ``judge.audit.max_share``), so the generic audit is switched off here. Without labels,
the corrected accept rate comes from the audit's controls, as LoCoMo's does: each control's
expected verdict against the judge's accept read the way the items' accept rate is (verdict
>= the threshold), not the profile's audit rule.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks import plugin_trust
from locomo_exp.benchmarks.beam.judge_prompts import NUGGET_ITEM
from locomo_exp.benchmarks.beam.judged import (
    TEMPLATE_CATEGORY,
    BeamJudged,
    item_config,
    item_records,
)
from locomo_exp.benchmarks.beam.rows import BeamInput
from locomo_exp.benchmarks.steps import JobContext
from locomo_exp.config import ExperimentConfig, JudgeAuditConfig, JudgeConfig
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL
from locomo_exp.judge.spend import Part
from locomo_exp.results import QARecord, TrustSummary
from locomo_exp.trust.plan import TrustPlan, panel_preset_config

UNIT = "rubric item"


def trust_config(cfg: ExperimentConfig) -> JudgeConfig:
    """The item calls' judge config without the generic audit (BEAM audits its own way).

    Raises:
        ValueError: a LoCoMo ``judge.protocol`` (:func:`.judged.item_protocol`).
    """
    return replace(item_config(cfg.judge, cfg.beam), audit=JudgeAuditConfig(n=0))


def category_names(*, template: bool) -> dict[int, str]:
    """Display names of the item records' category codes (the abilities; one with a template)."""
    if template:
        return {TEMPLATE_CATEGORY: UNIT}
    return dict(NUGGET_ITEM.kind_ids)


def _records(inp: BeamInput, cfg: ExperimentConfig) -> list[QARecord]:
    return item_records(inp, template=cfg.judge.protocol == TEMPLATE_PROTOCOL)


def plan_beam_trust(inp: BeamInput, cfg: ExperimentConfig, start_dir: Path
                    ) -> TrustPlan | None:
    """Validate ``judge.labels`` and ``judge.panel`` of a judged BEAM run, before any call.

    Args:
        inp: the read answers.
        cfg: the typed config.
        start_dir: where a relative labels file is resolved.

    Returns:
        The plan, or ``None`` when neither labels nor a panel is asked for.

    Raises:
        JudgeError: a bad labels file or panel preset (one line naming it).
    """
    judge = trust_config(cfg)
    if not (judge.labels or judge.panel):
        return None
    return plugin_trust.plan_plugin_trust(
        _records(inp, cfg), judge, start_dir=start_dir, source=str(inp.path),
        panel_member=lambda preset: item_config(panel_preset_config(cfg.judge, preset),
                                                cfg.beam))


def beam_trust_parts(inp: BeamInput, cfg: ExperimentConfig) -> list[Part]:
    """The panel members' item calls, for ``judge.max_cost_usd`` (labels cost nothing)."""
    return plugin_trust.trust_parts(inp.trust_plan, _records(inp, cfg), trust_config(cfg))


def _with_panel_estimate(estimate: dict[str, Any], trust: TrustSummary | None
                         ) -> dict[str, Any]:
    """A dry run's estimate with the panel's calls and cost added to the job's total."""
    dry = trust.dry_run if trust is not None else None
    if dry is None or not dry.panel:
        return estimate
    out = dict(estimate)
    calls = sum(part.calls_to_make for part in dry.panel.values())
    out["panel_calls_to_make"] = calls
    out["total_calls_to_make"] = int(out.get("total_calls_to_make") or 0) + calls
    costs = [part.estimated_cost_usd for part in dry.panel.values()]
    total = out.get("total_estimated_cost_usd")
    out["total_estimated_cost_usd"] = (None if total is None or None in costs
                                       else round(total + sum(c or 0.0 for c in costs), 6))
    return out


def run_beam_trust(inp: BeamInput, judged: BeamJudged, ctx: JobContext) -> BeamJudged:
    """Compare the item verdicts with the labels and judge the panel (or price it).

    Args:
        inp: the read answers (its ``trust_plan`` from :func:`plan_beam_trust`).
        judged: the judge's result on the items.
        ctx: the job's context (cache, client, stop, spend cap).

    Returns:
        ``judged`` with ``trust`` set (and a dry run's totals counting the panel), or
        unchanged when there is nothing to check.

    Raises:
        Whatever :func:`locomo_exp.trust.job.run_trust` raises (completed calls cached).
    """
    trust = plugin_trust.run_plugin_trust(
        inp.trust_plan, _records(inp, ctx.cfg), trust_config(ctx.cfg), judged.items, ctx,
        category_names=category_names(template=ctx.cfg.judge.protocol == TEMPLATE_PROTOCOL))
    if judged.dry_run is not None:
        return replace(judged, trust=trust, dry_run=_with_panel_estimate(judged.dry_run, trust))
    if judged.audit_pairs and (trust is None or trust.labels is None):
        ids = [r.question_id for r in _records(inp, ctx.cfg)]
        trust = _corrected_from_audit(trust, judged, trust_config(ctx.cfg), ids)
    return replace(judged, trust=trust)


def _corrected_from_audit(trust: TrustSummary | None, judged: BeamJudged, item_cfg: JudgeConfig,
                          item_ids: list[str]) -> TrustSummary:
    """``trust`` (or a new summary) with the accept rate corrected from the audit's controls.

    Rogan-Gladen with the two-sample bootstrap
    (:func:`locomo_exp.stats.correction.corrected_j`): the items' accepts (verdict >= the
    protocol's threshold) and, as the labelled pairs, the controls' expected verdicts against
    the judge's accepts (:attr:`.judged.BeamJudged.audit_pairs`).
    """
    from locomo_exp.judge.protocols import protocol_spec
    from locomo_exp.stats.correction import corrected_j
    from locomo_exp.trust.summary import corrected_result

    base = trust if trust is not None else TrustSummary()
    threshold = protocol_spec(item_cfg).accept_threshold
    per_item = judged.items.per_question
    scores = [per_item[i].mean_score for i in item_ids if i in per_item]  # file order
    accepts = [s >= threshold for s in scores if s is not None]
    assert judged.audit_pairs is not None
    expected, got = judged.audit_pairs
    if not accepts:
        return replace(base, corrected_unavailable="no rubric item has a verdict")
    try:
        corrected = corrected_j(accepts, expected, got, source="audit")
    except ValueError as error:
        return replace(base, corrected_unavailable=f"audit: {error}")
    return replace(base, corrected=corrected_result(corrected))


__all__ = ["UNIT", "beam_trust_parts", "category_names", "plan_beam_trust", "run_beam_trust",
           "trust_config"]
