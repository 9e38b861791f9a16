"""Audit controls for LongMemEval: answers whose verdict is known, judged like the real ones.

Built from the run's own questions (kind codes as categories,
:mod:`locomo_exp.benchmarks.longmemeval.facts`); never part of the accuracies. Kinds (a subset of
the LoCoMo audit's, same names):

* ``gold_as_answer``: the gold answer given as the response. Expected: yes. For an abstention
  question the gold explains why it cannot be answered, so a response repeating it abstains:
  yes as well.
* ``other_gold``: the gold of another, non-abstention question of the same ``question_type``
  whose gold differs (after lower-casing and dropping punctuation neither contains the other).
  Expected: no -- for abstention questions too (a concrete answer is not an abstention).
* ``non_answer``: ``"I don't know."`` or ``"I don't have that information."``. Expected: no;
  for abstention questions the expectation inverts to yes (abstaining is their right answer).

Sampling: per kind, up to ``n`` questions, as evenly over the six types as the eligible
questions allow, each drawn with ``random.Random(f"{seed}:{kind}:{type}")`` in file order.
"""

from __future__ import annotations

import logging
import random
import re
import zlib
from dataclasses import dataclass, replace

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.config import JudgeAuditConfig, JudgeConfig
from locomo_exp.results import QARecord
from locomo_exp.trust.budget import (
    audit_budget,
    audit_note,
    audit_runs,
    audit_size_line,
    cap_controls,
)

logger = logging.getLogger(__name__)

GOLD_AS_ANSWER = "gold_as_answer"
OTHER_GOLD = "other_gold"
NON_ANSWER = "non_answer"
LME_KINDS: tuple[str, ...] = (GOLD_AS_ANSWER, OTHER_GOLD, NON_ANSWER)
"""The audit kinds that apply to LongMemEval."""

NON_ANSWERS = ("I don't know.", "I don't have that information.")


@dataclass(frozen=True)
class LmeControl:
    """One control answer.

    Attributes:
        record: the judge engine's record (id ``audit:<kind>:<question id>``).
        kind: the control's kind.
        expected: the verdict a sound judge gives (True = yes).
        question_type: the question's type.
        abstention: whether the question is an ``_abs`` one.
    """

    record: QARecord
    kind: str
    expected: bool
    question_type: str
    abstention: bool


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _differs(a: str, b: str) -> bool:
    x, y = _norm(a), _norm(b)
    return bool(x) and bool(y) and x not in y and y not in x


def _sample(records: list[QARecord], kind: str, n: int, seed: int) -> list[QARecord]:
    by_type: dict[str, list[QARecord]] = {name: [] for name in lme.QUESTION_TYPES}
    for record in records:
        by_type[str(record.question_type)].append(record)
    quota = {name: 0 for name in by_type}
    left = n
    while left > 0 and any(quota[t] < len(by_type[t]) for t in by_type):
        for name in by_type:
            if left > 0 and quota[name] < len(by_type[name]):
                quota[name] += 1
                left -= 1
    chosen: list[QARecord] = []
    for name, pool in by_type.items():
        chosen += random.Random(f"{seed}:{kind}:{name}").sample(pool, quota[name])
    return chosen


def build_lme_controls(
    records: list[QARecord], *, n: int, seed: int, kinds: tuple[str, ...] = LME_KINDS
) -> list[LmeControl]:
    """The audit controls of a LongMemEval run.

    Args:
        records: the judge engine's records of the run (``question_type`` set).
        n: controls per kind (0: none).
        seed: sampling seed.
        kinds: the kinds to build (those of :data:`LME_KINDS`; others are ignored).

    Returns:
        Controls, kind by kind, each kind's in type order.
    """
    if n <= 0:
        return []
    out: list[LmeControl] = []
    for kind in (k for k in LME_KINDS if k in kinds):
        eligible = records
        donors: dict[str, list[QARecord]] = {}
        if kind == OTHER_GOLD:
            for record in records:
                if not lme.is_abstention(record.question_id):
                    donors.setdefault(str(record.question_type), []).append(record)
            eligible = [
                r
                for r in records
                if any(
                    _differs(d.gold_text, r.gold_text)
                    for d in donors.get(str(r.question_type), [])
                )
            ]
        for record in _sample(eligible, kind, n, seed):
            abstention = lme.is_abstention(record.question_id)
            if kind == GOLD_AS_ANSWER:
                prediction, expected = record.gold_text, True
            elif kind == OTHER_GOLD:
                pool = [d for d in donors[str(record.question_type)]
                        if _differs(d.gold_text, record.gold_text)]
                donor = random.Random(f"{seed}:{kind}:{record.question_id}").choice(pool)
                prediction, expected = donor.gold_text, False
            else:
                prediction = NON_ANSWERS[zlib.crc32(record.question_id.encode()) % 2]
                expected = abstention
            control = replace(
                record, question_id=f"audit:{kind}:{record.question_id}", prediction=prediction
            )
            out.append(
                LmeControl(control, kind, expected, str(record.question_type), abstention)
            )
    return out


def size_lme_audit(
    records: list[QARecord], cfg: JudgeConfig, *, quiet: bool = False
) -> tuple[list[LmeControl], str]:
    """The controls of a LongMemEval run, capped by ``judge.audit.max_share`` as LoCoMo's are.

    The audit's calls (controls x :func:`~locomo_exp.trust.budget.audit_runs`) may be at most
    ``judge.audit.max_share`` of the answers' calls (questions x ``judge.runs``); when the
    controls would exceed it, fewer controls per kind are judged (the largest ``n`` that fits,
    :func:`~locomo_exp.trust.budget.cap_controls`). The same lines as a LoCoMo run's are logged:
    the calls the audit adds and how it was sized, or a warning when no control fits.

    Args:
        records: the judge engine's records of the run (every one is judged).
        cfg: the run's judge config (``judge.audit.n``, ``seed``, ``kinds``, ``max_share``).
        quiet: log nothing (the spend cap's check before the run directory is touched:
            Hydra's log file there may still be a finished run's).

    Returns:
        ``(controls, sizing)``: the controls to judge and how the audit was sized
        (:func:`~locomo_exp.trust.budget.audit_note`); ``([], "judge.audit.n=0")`` when the
        audit is off.

    Raises:
        ValueError: ``judge.audit.max_share`` outside 0-1 or ``judge.audit.runs`` below 1 (the
            config check refuses both first).
    """
    audit = cfg.audit
    if int(audit.n) <= 0:
        return [], "judge.audit.n=0"
    kinds, seed = tuple(str(k) for k in audit.kinds), int(audit.seed)
    controls, n_used = cap_controls(
        lambda n: build_lme_controls(records, n=n, seed=seed, kinds=kinds),
        int(audit.n),
        audit_budget(cfg, len(records)),
    )
    sizing = audit_note(cfg, len(records), n_used)
    if quiet:
        return controls, sizing
    if controls:
        logger.info(
            "%s", audit_size_line(len(controls), audit_runs(cfg), len(records) * cfg.runs, sizing)
        )
    else:
        logger.warning("judge audit: no control judged; %s", sizing)
    return controls, sizing


def lme_audit_config(cfg: JudgeConfig) -> JudgeConfig:
    """The judge config for a LongMemEval run's controls.

    The run's model, protocol and settings, ``judge.audit.runs`` runs
    (:func:`~locomo_exp.trust.budget.audit_runs`: 1 by default, ``null`` = ``judge.runs``),
    and no audit, labels or panel of its own.
    """
    return replace(
        cfg, runs=audit_runs(cfg), audit=JudgeAuditConfig(n=0), labels=None, panel=[]
    )


__all__ = ["LME_KINDS", "LmeControl", "build_lme_controls", "lme_audit_config", "size_lme_audit"]
