"""Audit controls for LongMemEval: answers whose verdict is known, judged like the real ones.

Built from the run's own questions (kind codes as categories,
:mod:`locomo_exp.benchmark.longmemeval`); never part of the accuracies. Kinds (a subset of
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

import random
import re
import zlib
from dataclasses import dataclass, replace

from locomo_exp.benchmark import longmemeval as lme
from locomo_exp.results import QARecord

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


__all__ = ["LME_KINDS", "LmeControl", "build_lme_controls"]
