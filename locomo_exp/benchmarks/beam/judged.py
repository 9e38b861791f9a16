"""Judged BEAM runs: one judge call per rubric item, through the judge engine.

Each rubric item of each question is one judge record (``<question_id>#item<k>``), so the
cache keys, the requests, the batch entries, the resume after Ctrl-C and the dry run's count
and cost are all per item. ``beam.profile=official`` adds, for event ordering, one yes/no
alignment call per (answer line, rubric item) pair (``<question_id>#align<j>.<k>``); each line
then takes the first unused item it was judged equal to, in item order -- the authors' greedy
matching (``compute_metrics.py``), made with every pair's verdict known up front so the calls
can be batched, cached and resumed like the item calls (at most lines x items calls, where the
authors' loop stops at the first match).

The judge's verdicts replace any stored ones; the figures are then computed by the profile
rules exactly as for stored verdicts (:mod:`.figures`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import EVENT_ORDERING
from locomo_exp.benchmarks.beam.audit import audit_config, audit_section, size_beam_audit
from locomo_exp.benchmarks.beam.judge_prompts import (
    ALIGN,
    NUGGET_ITEM,
    OFFICIAL_ITEM,
    STRICT_ITEM,
    ability_id,
)
from locomo_exp.benchmarks.beam.rows import BeamInput, BeamQuestion
from locomo_exp.config import BeamConfig, BeamProfile, JudgeConfig
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.judge.prompt_book import PromptBook
from locomo_exp.judge.protocols import ProtocolSpec, protocol_spec
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL
from locomo_exp.judge.spend import JobSpend, Part
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.stop import CallsStop
from locomo_exp.results import QARecord, TrustSummary
from locomo_exp.trust.audit import audit_pairs

log = logging.getLogger(__name__)

TEMPLATE_CATEGORY = 1
"""The category code of every item record judged with the user's template (its ``{category}``
means nothing for BEAM; the ability is the record's ``question_type``)."""

SUMED_ESTIMATE_KEYS = (
    "calls_total", "calls_cached", "calls_to_make", "estimated_input_tokens",
    "estimated_output_tokens", "max_output_tokens", "estimated_cost_usd", "cost_upper_bound_usd",
)
"""The dry-run estimate's fields added up over the item and alignment calls."""


def profile_name(beam: BeamConfig) -> str:
    """The profile whose prompt a judged run follows: ``beam-nugget`` or ``beam-official``."""
    return p.OFFICIAL if BeamProfile(beam.profile) is BeamProfile.official else p.NUGGET


def item_protocol(judge: JudgeConfig, beam: BeamConfig) -> ProtocolSpec:
    """The protocol of the item calls: the user's template, else the profile's own words.

    Raises:
        ValueError: a ``judge.protocol`` other than the default ``rubric`` or ``template``
            (LoCoMo's protocols judge answers against a gold answer, not rubric items), or a
            bad template file (one line naming it).
    """
    if judge.protocol == TEMPLATE_PROTOCOL:
        return protocol_spec(judge)
    if judge.protocol != "rubric":
        raise ValueError(
            f"judge.protocol={judge.protocol}: BEAM answers are judged item by item with the "
            "BEAM prompt of beam.profile (drop judge.protocol), or with your own "
            "judge.protocol=template judge.template=FILE.yaml")
    if profile_name(beam) == p.NUGGET:
        return NUGGET_ITEM
    return STRICT_ITEM if beam.strict else OFFICIAL_ITEM


def _with_protocol(judge: JudgeConfig, spec: ProtocolSpec, categories: list[int]) -> JudgeConfig:
    """``judge`` with one call per record: the spec itself stands as ``judge.protocol``.

    The engine resolves a protocol through :func:`~locomo_exp.judge.protocols.get_protocol`,
    which returns a :class:`ProtocolSpec` as it is, so the plug-in's prompts need no entry in
    the registry of ``judge.protocol`` names.
    """
    return replace(judge, protocol=cast(str, spec), template=None, runs=1,
                   min_successful_runs=1, categories=categories)


def item_config(judge: JudgeConfig, beam: BeamConfig) -> JudgeConfig:
    """The judge settings of the item calls: one call per item, the profile's protocol.

    Raises:
        ValueError: as :func:`item_protocol`.
    """
    spec = item_protocol(judge, beam)
    if judge.protocol == TEMPLATE_PROTOCOL:
        return replace(judge, runs=1, min_successful_runs=1, categories=[TEMPLATE_CATEGORY])
    return _with_protocol(judge, spec, sorted(NUGGET_ITEM.kind_ids))


def item_id(question_id: str, k: int) -> str:
    """The judge record id of rubric item ``k`` of a question."""
    return f"{question_id}#item{k}"


def align_id(question_id: str, line: int, k: int) -> str:
    """The judge record id of the alignment of answer line ``line`` with rubric item ``k``."""
    return f"{question_id}#align{line}.{k}"


def item_records(inp: BeamInput, *, template: bool) -> list[QARecord]:
    """One judge record per rubric item: the item as ``ground_truth``, the answer as prediction.

    A job asks three times (the pipeline's preflight, the judging, the trust step): the
    records of the last two inputs are kept (frozen, so shared), built once per input.
    """
    return list(_item_records(inp.questions, template))


@functools.lru_cache(maxsize=2)
def _item_records(questions: tuple[BeamQuestion, ...], template: bool) -> tuple[QARecord, ...]:
    return tuple(
        QARecord(
            question_id=item_id(q.question_id, k),
            question=q.question,
            ground_truth=item,
            prediction=q.answer,
            category=TEMPLATE_CATEGORY if template else ability_id(q.ability),
            conversation_id=q.chat,
            question_type=q.ability,
        )
        for q in questions
        for k, item in enumerate(q.rubric)
    )


def align_records(inp: BeamInput) -> list[QARecord]:
    """One record per (answer line, rubric item) of each event-ordering question."""
    code = ability_id(EVENT_ORDERING)
    return [
        QARecord(
            question_id=align_id(q.question_id, j, k),
            question=q.question,
            ground_truth=item,
            prediction=line,
            category=code,
            conversation_id=q.chat,
            question_type=q.ability,
        )
        for q in inp.questions if q.ability == EVENT_ORDERING
        for j, line in enumerate(p.answer_lines(q.answer))
        for k, item in enumerate(q.rubric)
    ]


def greedy_alignment(n_lines: int, n_items: int, same: Callable[[int, int], bool | None]
                     ) -> list[int | None]:
    """Each line's item: the first unused item judged the same event, in item order, else ``None``.

    Args:
        n_lines: answer lines.
        n_items: rubric items.
        same: ``(line, item) -> True / False``, ``None`` when that call is unscored (no match).

    Returns:
        One entry per line, as :func:`.profiles.tau_norm` takes them.
    """
    used: set[int] = set()
    matches: list[int | None] = []
    for j in range(n_lines):
        found = next((k for k in range(n_items) if k not in used and same(j, k)), None)
        if found is not None:
            used.add(found)
        matches.append(found)
    return matches


@dataclass
class BeamJudged:
    """What the judge gave a BEAM run.

    Attributes:
        inp: the answers with the judge's item verdicts (and event-ordering tau for
            ``beam-official``) in place of any stored ones; ``None`` for a dry run.
        profile: the profile whose prompt was used.
        strict: ``beam.strict``.
        items: the item calls' result (its ``summary`` is the judge's settings and counts).
        align: the alignment calls' result, ``None`` for ``beam-nugget``.
        dry_run: the estimate of a dry run (items and alignment calls added up; the
            audit's apart, then the total), else ``None``.
        audit: the audit block (:func:`.audit.audit_section`), else ``None``.
        trust: the human labels' agreement, corrected accept rate and panel over the rubric
            items (:func:`locomo_exp.benchmarks.plugin_trust.run_plugin_trust`), else
            ``None``.
        audit_pairs: ``(expected accept, judge accepted)`` per scored control, the accept
            read as for the items' accept rate (verdict >= the protocol's threshold), for a
            correction from the audit; ``None`` without controls.
    """

    inp: BeamInput | None
    profile: str
    strict: bool
    items: JudgeRunResult
    align: JudgeRunResult | None = None
    dry_run: dict[str, Any] | None = None
    audit: dict[str, Any] | None = None
    trust: TrustSummary | None = None
    audit_pairs: tuple[list[bool], list[bool]] | None = None

    def section(self) -> dict[str, Any]:
        """The ``judge`` block of ``summary.json``: settings, counts, tokens and cost."""
        keep = ("protocol", "prompt_version", "template", "provider", "endpoint",
                "endpoint_kind", "model", "model_snapshot", "temperature", "max_tokens",
                "mode", "counts", "tokens", "estimated_cost_usd",
                "estimated_cost_usd_including_cached")
        out: dict[str, Any] = {
            "profile": self.profile,
            "strict": self.strict,
            "judged_unit": "rubric item",
            **{k: self.items.summary[k] for k in keep if k in self.items.summary},
        }
        if self.align is not None:
            out["alignment"] = {k: self.align.summary[k] for k in
                                ("protocol", "prompt_version", "counts", "tokens",
                                 "estimated_cost_usd") if k in self.align.summary}
        if self.dry_run is not None:
            out["dry_run_estimate"] = self.dry_run
        if self.audit is not None:
            out["audit"] = self.audit
        if self.trust is not None:
            out["trust"] = self.trust.to_json()
        return out


def _sum_estimates(*estimates: dict[str, Any]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for key in SUMED_ESTIMATE_KEYS:
        values = [e.get(key) for e in estimates]
        total[key] = None if any(v is None for v in values) else sum(values)
    return total


def _score(result: JudgeRunResult, record_id: str) -> float | None:
    agg = result.per_question.get(record_id)
    return None if agg is None or agg.mean_score is None else agg.mean_score / 100.0


def _judged_question(q: BeamQuestion, items: JudgeRunResult, align: JudgeRunResult | None
                     ) -> BeamQuestion:
    scores = [_score(items, item_id(q.question_id, k)) for k in range(len(q.rubric))]
    failed = any(s is None for s in scores)
    order: float | None = None
    aligned = False
    if align is not None and q.ability == EVENT_ORDERING:
        lines = p.answer_lines(q.answer)

        def same(j: int, k: int) -> bool | None:
            score = _score(align, align_id(q.question_id, j, k))
            return None if score is None else score >= 0.5

        order = p.tau_norm(len(q.rubric), greedy_alignment(len(lines), len(q.rubric), same))
        aligned = True
    return replace(
        q,
        item_scores=None if failed else tuple(cast(list[float], scores)),
        judge_failed=failed,
        stored_score=None,
        order_score=order,
        order_aligned=aligned,
    )


def align_config(judge: JudgeConfig) -> JudgeConfig:
    """The judge settings of beam-official's yes/no alignment calls (short, unstructured)."""
    return _with_protocol(replace(judge, structured_output=False, max_tokens=16), ALIGN,
                          sorted(ALIGN.kind_ids))


def spend_parts(inp: BeamInput, judge: JudgeConfig, beam: BeamConfig) -> list[Part]:
    """The parts of a judged BEAM job, in the order they run, for ``judge.max_cost_usd``.

    Returns:
        ``("rubric item", ...)``, then ``("alignment", ...)`` (beam-official), then
        ``("audit", ...)`` (the controls, capped by ``judge.audit.max_share``), for
        :func:`~locomo_exp.judge.spend.plan_job_spend`.

    Raises:
        ValueError: as :func:`item_protocol`.
    """
    item_cfg = item_config(judge, beam)
    records = item_records(inp, template=judge.protocol == TEMPLATE_PROTOCOL)
    parts: list[Part] = [("rubric item", records, item_cfg)]
    if profile_name(beam) == p.OFFICIAL and (aligns := align_records(inp)):
        parts.append(("alignment", aligns, align_config(judge)))
    controls, _ = size_beam_audit(inp, records, item_cfg, quiet=True)
    if controls:
        parts.append(("audit", [c.record for c in controls], audit_config(item_cfg)))
    return parts


def _with_audit(estimate: dict[str, Any], audit: JudgeRunResult | None, sizing: str
                ) -> dict[str, Any]:
    """The dry run's estimate with the audit's calls apart and the job's total."""
    out = dict(estimate)
    part = (audit.dry_run_estimate if audit is not None else None) or {}
    out["audit_calls_to_make"] = int(part.get("calls_to_make") or 0)
    out["audit_estimated_cost_usd"] = part.get("estimated_cost_usd") if part else 0.0
    out["audit_sizing"] = sizing
    out["total_calls_to_make"] = int(out["calls_to_make"] or 0) + out["audit_calls_to_make"]
    costs = (out.get("estimated_cost_usd"), out["audit_estimated_cost_usd"])
    out["total_estimated_cost_usd"] = None if None in costs else sum(
        float(c) for c in costs if c is not None)
    return out


def judge_beam(inp: BeamInput, judge: JudgeConfig, beam: BeamConfig, *, start_dir: Path,
               client: JudgeClient | None = None, calls_stop: CallsStop | None = None,
               spend: JobSpend | None = None, prompts: PromptBook | None = None,
               cache: JudgeCache | None = None) -> BeamJudged:
    """Judge every rubric item (and, for ``beam-official``, align event-ordering lines).

    Then the audit controls (:mod:`.audit`), judged with the item calls' prompt and judge,
    capped by ``judge.audit.max_share``; a dry run counts and prices their calls too.

    Args:
        inp: the read answers (stored verdicts, if any, are replaced).
        judge: ``judge.*`` (``judge.runs`` is not read: one call per item).
        beam: ``beam.*`` (profile, strict).
        start_dir: where relative cache and template paths are resolved.
        client: a judge client to use instead of the provider's SDK (tests).
        calls_stop: set by another thread to stop paying (completed calls stay cached).
        spend: the job's ``judge.max_cost_usd`` over items, alignment and audit
            (:func:`spend_parts`), or ``None``.
        prompts: the prompts the job's preflight built (each reused, byte for byte, by
            :func:`~locomo_exp.judge.run_judge`), or ``None``.
        cache: the judge cache the job's preflight opened and probed (handed to each
            :func:`~locomo_exp.judge.run_judge`), or ``None``.

    Returns:
        :class:`BeamJudged`.

    Raises:
        ValueError: a LoCoMo ``judge.protocol`` (see :func:`item_protocol`).
        JudgeError, JudgeInterrupted, CallsStopped, JudgeBatchPending, JudgeJobStopped: as
            :func:`locomo_exp.judge.run_judge` (everything completed is cached).
    """
    from locomo_exp.judge import run_judge

    if judge.runs != 1:
        log.info("BEAM: one judge call per rubric item (judge.runs=%d not read)", judge.runs)
    template = judge.protocol == TEMPLATE_PROTOCOL
    item_cfg = item_config(judge, beam)
    profile = profile_name(beam)
    strict = bool(beam.strict) and profile == p.OFFICIAL
    unit_records = item_records(inp, template=template)
    controls, sizing = size_beam_audit(inp, unit_records, item_cfg)
    items = run_judge(unit_records, item_cfg, start_dir=start_dir, client=client,
                      calls_stop=calls_stop, spend=spend, prompts=prompts, cache=cache)
    align: JudgeRunResult | None = None
    records = align_records(inp) if profile == p.OFFICIAL else []
    if records:
        align = run_judge(records, align_config(judge), start_dir=start_dir, client=client,
                          calls_stop=calls_stop, spend=spend, prompts=prompts, cache=cache)
    audited = None
    if controls:  # judged like the items, never part of the figures
        audited = run_judge([c.record for c in controls], audit_config(item_cfg),
                            start_dir=start_dir, client=client, calls_stop=calls_stop,
                            spend=spend, prompts=prompts, cache=cache)
    if items.dry_run_estimate is not None:
        parts = [items.dry_run_estimate]
        if align is not None and align.dry_run_estimate is not None:
            parts.append(align.dry_run_estimate)
        estimate = _sum_estimates(*parts)
        estimate["rubric_items"] = len(unit_records)
        estimate["alignment_calls"] = len(records)
        return BeamJudged(None, profile, strict, items, align,
                          dry_run=_with_audit(estimate, audited, sizing))
    audit = pairs = None
    if audited is not None:
        audit = audit_section(controls, audited, profile=profile, strict=strict,
                              sizing=sizing, item_cfg=item_cfg)
        verdicts = {qid: agg.mean_score for qid, agg in audited.per_question.items()}
        pairs = audit_pairs(controls, verdicts, protocol_spec(item_cfg).accept_threshold)
    elif int(item_cfg.audit.n) > 0:  # asked for, capped to none: the report says why
        audit = {"unit": "rubric item", "sizing": sizing, "kinds": {}}
    judged = tuple(_judged_question(q, items, align) for q in inp.questions)
    return BeamJudged(replace(inp, questions=judged, verdicts_source="judge"), profile, strict,
                      items, align, audit=audit, audit_pairs=pairs)


__all__ = [
    "BeamJudged",
    "align_config",
    "align_id",
    "align_records",
    "greedy_alignment",
    "item_config",
    "item_id",
    "item_protocol",
    "item_records",
    "judge_beam",
    "profile_name",
    "spend_parts",
]
