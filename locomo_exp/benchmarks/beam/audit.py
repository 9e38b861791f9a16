"""Audit controls of a judged BEAM run: rubric items judged against a response of known verdict.

A BEAM verdict is per rubric item, so a control is one rubric item of the run's own questions
with the response replaced; it is judged with the run's item prompt and judge (one call per
control and audit run, cached like the items) and never enters the figures. Kinds (named as
the other benchmarks' audit kinds, ``judge.audit.kinds`` picks among them):

* ``gold_as_answer``: the rubric item's own content given as the response. It must score 1.
* ``other_gold``: a rubric item of a question of another ability, given as the response
  (one whose words neither contain nor are contained in the item's, after lower-casing and
  dropping punctuation). It satisfies nothing the item asks: it must score 0.
* ``non_answer``: ``"I don't know."``. It must score 0. Abstention questions are left out:
  their rubric asks the response to say the information is missing, which it does.

An item's verdict is read by the run's profile rule (beam-nugget: mem0's clamp to 0 / 0.5 /
1; beam-official: ``int()``, ``float()`` in event ordering; strict: the clamp), so a control
is accepted when the rule gives 1 for ``gold_as_answer`` and more than 0 for the others: a
false reject is a ``gold_as_answer`` item below 1, a false accept a reject-kind item above
0. Rates, Wilson intervals and the gate are the LoCoMo audit's
(:func:`locomo_exp.trust.audit.summarise_audit`). The audit's calls are capped at
``judge.audit.max_share`` of the rubric-item calls by judging fewer controls per kind
(:mod:`locomo_exp.trust.budget`).

Sampling: per kind, up to ``judge.audit.n`` eligible items drawn with
``random.Random(f"{seed}:{kind}")``, kept in file order.
"""

from __future__ import annotations

import logging
import random
import re
from dataclasses import replace
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import EVENT_ORDERING
from locomo_exp.benchmarks.beam.rows import BeamInput
from locomo_exp.config import JudgeAuditConfig, JudgeConfig
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.results import QARecord
from locomo_exp.stats.agreement import Proportion
from locomo_exp.trust.audit import summarise_audit
from locomo_exp.trust.budget import (
    audit_budget,
    audit_note,
    audit_runs,
    audit_size_line,
    cap_controls,
)
from locomo_exp.trust.controls import AuditControl

log = logging.getLogger(__name__)

GOLD_AS_ANSWER = "gold_as_answer"
OTHER_GOLD = "other_gold"
NON_ANSWER = "non_answer"
BEAM_KINDS: tuple[str, ...] = (GOLD_AS_ANSWER, OTHER_GOLD, NON_ANSWER)
"""The audit kinds that apply to BEAM (others of ``judge.audit.kinds`` are not built)."""

NON_ANSWER_TEXT = "I don't know."
ABSTENTION = "abstention"
EXPECTED = {GOLD_AS_ANSWER: True, OTHER_GOLD: False, NON_ANSWER: False}
"""Whether a sound judge gives the control's item a 1 (True) or a 0 (False)."""


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _differs(a: str, b: str) -> bool:
    """Neither text contains the other, after lower-casing and dropping punctuation."""
    x, y = _norm(a), _norm(b)
    return bool(x) and bool(y) and x not in y and y not in x


def _candidates(inp: BeamInput, kind: str, rng: random.Random
                ) -> list[tuple[int, int, str]]:
    """``(question index, item index, response)`` of every item eligible for ``kind``."""
    out = []
    questions = inp.questions
    for i, q in enumerate(questions):
        if kind == NON_ANSWER and q.ability == ABSTENTION:
            continue
        others = sorted({item for o in questions if o.ability != q.ability
                         for item in o.rubric}) if kind == OTHER_GOLD else []
        for k, item in enumerate(q.rubric):
            if kind == GOLD_AS_ANSWER:
                response = item
            elif kind == NON_ANSWER:
                response = NON_ANSWER_TEXT
            else:
                pool = [o for o in others if _differs(o, item)]
                if not pool:
                    continue
                response = pool[rng.randrange(len(pool))]
            out.append((i, k, response))
    return out


def build_beam_controls(inp: BeamInput, records: list[QARecord], *, n: int, seed: int,
                        kinds: tuple[str, ...]) -> list[AuditControl]:
    """The controls of a BEAM run: up to ``n`` rubric items per kind.

    Args:
        inp: the read answers.
        records: the run's item records (:func:`.judged.item_records`), in the same order as
            the questions' items: each control copies its item's record.
        n: controls per kind (``judge.audit.n``).
        seed: the sampling seed (``judge.audit.seed``).
        kinds: ``judge.audit.kinds``; those not in :data:`BEAM_KINDS` are skipped.

    Returns:
        The controls, kind by kind, each in file order; record id
        ``audit:<kind>:<question_id>#item<k>``.
    """
    offsets, start = [], 0
    for q in inp.questions:
        offsets.append(start)
        start += len(q.rubric)
    out: list[AuditControl] = []
    for kind in BEAM_KINDS:
        if kind not in kinds or n <= 0:
            continue
        rng = random.Random(f"{seed}:{kind}")
        eligible = _candidates(inp, kind, rng)
        picked = sorted(rng.sample(range(len(eligible)), min(n, len(eligible))))
        for index in picked:
            i, k, response = eligible[index]
            record = records[offsets[i] + k]
            out.append(AuditControl(
                record=replace(record, question_id=f"audit:{kind}:{record.question_id}",
                               prediction=response),
                kind=kind, expected_accept=EXPECTED[kind],
                source_question_id=inp.questions[i].question_id))
    return out


def size_beam_audit(inp: BeamInput, records: list[QARecord], item_cfg: JudgeConfig, *,
                    quiet: bool = False) -> tuple[list[AuditControl], str]:
    """The controls of a judged BEAM run, capped by ``judge.audit.max_share``.

    The audit's calls (controls x ``judge.audit.runs``) may be at most
    ``judge.audit.max_share`` of the rubric-item calls; when the controls would exceed it,
    fewer controls per kind are judged (:func:`~locomo_exp.trust.budget.cap_controls`).

    Args:
        inp: the read answers.
        records: the run's item records.
        item_cfg: the item calls' judge config (:func:`.judged.item_config`).
        quiet: log nothing (the spend cap's check before anything is written).

    Returns:
        ``(controls, sizing)``; ``([], "judge.audit.n=0")`` when the audit is off.

    Raises:
        ValueError: ``judge.audit.max_share`` outside 0-1 or ``judge.audit.runs`` below 1
            (the config check refuses both first).
    """
    audit = item_cfg.audit
    if int(audit.n) <= 0:
        return [], "judge.audit.n=0"
    kinds, seed = tuple(str(k) for k in audit.kinds), int(audit.seed)
    controls, n_used = cap_controls(
        lambda n: build_beam_controls(inp, records, n=n, seed=seed, kinds=kinds),
        int(audit.n), audit_budget(item_cfg, len(records)))
    sizing = audit_note(item_cfg, len(records), n_used).replace("answer calls",
                                                                 "rubric-item calls")
    if not quiet:
        if controls:
            log.info("%s", audit_size_line(len(controls), audit_runs(item_cfg), len(records),
                                           sizing))
        else:
            log.warning("judge audit: no control judged; %s", sizing)
    return controls, sizing


def audit_config(item_cfg: JudgeConfig) -> JudgeConfig:
    """The controls' judge config: the item calls' own with ``judge.audit.runs`` runs.

    No audit, labels or panel of its own.
    """
    return replace(item_cfg, runs=audit_runs(item_cfg), audit=JudgeAuditConfig(n=0),
                   labels=None, panel=[])


def item_value(score: float, ability: str, profile: str, strict: bool) -> float:
    """A rubric item's verdict (0-1) as the run's profile reads it.

    Args:
        score: the judge's verdict, 0-1.
        ability: the item's question's ability.
        profile: ``beam-nugget`` or ``beam-official``.
        strict: ``beam.strict`` (official: the clamp instead of ``int()``).
    """
    if profile == p.NUGGET or strict:
        return p.clamp_item(score)
    return float(score) if ability == EVENT_ORDERING else float(p.official_item(score))


def audit_section(controls: list[AuditControl], result: JudgeRunResult, *, profile: str,
                  strict: bool, sizing: str, item_cfg: JudgeConfig) -> dict[str, Any]:
    """The ``audit`` block of a judged BEAM run's ``summary.json``.

    Args:
        controls: the controls judged.
        result: their judge run.
        profile: the run's profile (its item rule).
        strict: ``beam.strict``.
        sizing: how the audit was sized (:func:`size_beam_audit`).
        item_cfg: the item calls' config (``judge.audit.max_false_accept`` /
            ``max_false_reject``, the gate's limits, 0-1).

    Returns:
        ``{"unit", "rule", "sizing", "kinds": {kind: {expected, n, unscored, count, rate,
        ci_low, ci_high}}, "false_accept", "false_reject", "gate", "calls", "cache_hits",
        "threshold", "verdicts"}``: ``verdicts`` maps each control's id to 100 (the item rule
        accepted it), 0 (rejected) or ``None`` (no verdict), read against ``threshold`` (50)
        by the question browser (:func:`locomo_exp.report.question_rows.audit_control_rows`);
        each kind's error (false-reject or false-accept) rate and the pooled ones as
        ``{count, n, rate, ci_low, ci_high}`` on 0-1 with 95% Wilson intervals (``rate``
        ``None`` when no control of that side got a verdict); the gate ``{state,
        fails_run, message}``; the controls' ``counts``, ``tokens`` and cost (USD) as the
        judge job records them.
    """
    abilities = {c.control_id: str(c.record.question_type) for c in controls}
    accepted: dict[str, float | None] = {}
    for control in controls:
        agg = result.per_question.get(control.control_id)
        if agg is None or agg.mean_score is None:
            accepted[control.control_id] = None
            continue
        value = item_value(agg.mean_score / 100.0, abilities[control.control_id], profile,
                           strict)
        hit = value >= 1.0 if control.expected_accept else value > 0.0
        accepted[control.control_id] = 100.0 if hit else 0.0
    summary = summarise_audit(controls, accepted, threshold=50.0,
                              max_false_accept=item_cfg.audit.max_false_accept,
                              max_false_reject=item_cfg.audit.max_false_reject)

    def rate(prop: Proportion) -> dict[str, Any]:
        return {"count": prop.successes, "n": prop.n, "rate": prop.rate,
                "ci_low": prop.ci_low, "ci_high": prop.ci_high}

    counts = result.summary.get("counts") or {}
    return {
        "unit": "rubric item",
        "rule": ("gold_as_answer must score 1, other_gold and non_answer must score 0, "
                 f"each item read by the {profile}{' strict' if strict else ''} item rule"),
        "sizing": sizing,
        "kinds": {
            kind: {"expected": 1 if s.expected_accept else 0, "n": s.n_controls,
                   "unscored": s.n_unscored, **rate(s.error)}
            for kind, s in summary.kinds.items()
        },
        "false_accept": rate(summary.false_accept),
        "false_reject": rate(summary.false_reject),
        "gate": {"state": summary.gate.state, "fails_run": summary.gate.fails_run,
                 "message": summary.gate.message},
        "calls": counts.get("calls_made", 0),
        "cache_hits": counts.get("cache_hits", 0),
        "threshold": 50.0,
        "verdicts": accepted,
        # the controls' own spend, counted in the run log's (the whole job's) judge spend
        **{key: result.summary[key] for key in ("counts", "tokens", "estimated_cost_usd",
                                                 "estimated_cost_usd_including_cached")
           if key in result.summary},
    }


__all__ = ["BEAM_KINDS", "audit_config", "audit_section", "build_beam_controls", "item_value",
           "size_beam_audit"]
