"""Audit controls, human labels and a panel for judged LoCoMo-Plus runs.

The trust checks are LoCoMo's (:mod:`locomo_exp.trust`), run through the pipeline's hooks
(:mod:`locomo_exp.benchmarks.plugin_trust`); what is LoCoMo-Plus's own is which controls
make sense for which category. A control is a copy of one of the run's own items with the
reply replaced, judged with the item's own prompt (its category's criterion) and judge;
it never enters the figures.

* The factual categories (multi-hop, temporal, common-sense, single-hop) have a reference
  answer: every built-in kind applies as for LoCoMo (the reference given as the reply must
  be accepted; another item's reference, a perturbed date, number or name, and a
  non-answer must be rejected).
* A Cognitive item has no reference answer, only the cue the later reply should use. Three
  kinds mean something there: ``gold_as_answer`` is a reply that restates the item's own
  cue (it uses the cue: must be accepted); ``other_gold`` is a reply made of the cue of
  another Cognitive item of the same conversation (it ignores the item's cue: must be
  rejected); ``non_answer`` (``"I don't know."``) ignores the cue too (rejected). The
  perturbed kinds are not built for Cognitive items: a cue with one number changed still
  mostly restates it, so its verdict is not known in advance.
* Adversarial items get only ``adversarial_trap`` where the file carries a trap answer
  (LoCoMo-Plus files do not), as for LoCoMo.

Sampling, sizing (``judge.audit.n`` per kind stratified by category, capped by
``judge.audit.max_share`` of the item calls), rates, Wilson intervals and the gate are the
generic audit's; an accept is a verdict at or above the protocol's threshold (50: the
authors' ``partial`` counts as accepted).
"""

from __future__ import annotations

from locomo_exp.benchmarks.locomo_plus.facts import COGNITIVE
from locomo_exp.benchmarks.locomo_plus.protocol import LOCOMO_PLUS
from locomo_exp.trust.controls import (
    ANSWER_CATEGORIES,
    GOLD_AS_ANSWER,
    NON_ANSWER,
    OTHER_GOLD,
)

CUE_KINDS: tuple[str, ...] = (GOLD_AS_ANSWER, OTHER_GOLD, NON_ANSWER)
"""The control kinds a Cognitive item (a cue, no reference answer) takes."""

CONTROL_CATEGORIES: dict[str, tuple[int, ...]] = {
    kind: (*ANSWER_CATEGORIES, LOCOMO_PLUS.kind_id(COGNITIVE)) for kind in CUE_KINDS
}
"""Kind -> the category codes whose reference (or cue) it may use; other kinds: LoCoMo's."""

__all__ = ["CONTROL_CATEGORIES", "CUE_KINDS"]
