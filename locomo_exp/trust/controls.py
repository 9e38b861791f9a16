"""Audit controls: answers whose verdict is known without labels, to measure the judge.

Controls are built from the input's own records and judged exactly like the real answers
(same model, prompt, temperature, runs); they are never mixed into J. Each control is a
:class:`~locomo_exp.results.QARecord` copied from a real question with only the
``prediction`` (and the id) replaced; its id is ``audit:<kind>:<original question id>``.

Kinds and rules (all deterministic given ``seed``):

* ``gold_as_answer`` (expected: accept). The prediction is the gold answer (the first
  reference when the file gives several). Categories 1-4.
* ``other_gold`` (reject). The gold of another question of the same conversation and
  category whose gold differs: after lower-casing, dropping punctuation and collapsing
  spaces, neither gold contains the other. The donor is drawn with
  ``random.Random(f"{seed}:other_gold:{question_id}")`` from the eligible donors in file
  order. Categories 1-4.
* ``adversarial_trap`` (reject). The category-5 ``adversarial_answer`` given as the answer.
  When the file also uses that trap as the category-5 gold (LoCoMo's own files do), the
  judge is shown the trap as gold, exactly as for the real answers; such controls carry a
  note, and a high accept rate then says the category-5 gold misleads the judge.
* ``perturbed_date`` / ``perturbed_number`` / ``perturbed_name`` (reject). The gold with
  a date shifted, a number doubled, or a speaker name swapped for another speaker of the
  conversation; the exact rules are in :mod:`locomo_exp.trust.perturb`. Speakers come
  from ``speakers`` when given (conversation id -> names), else from the capitalised
  names in the conversation's questions (:func:`~locomo_exp.trust.perturb.speakers_from_questions`).
  Categories 1-4.
* ``non_answer`` (reject). The prediction is a non-answer, ``"I don't know."`` or
  ``"That is not mentioned in the conversation."`` (``crc32(question_id) % 2`` picks).
  Categories 1-4 (in category 5 a non-answer is the right answer).
* user controls (``user_<name>``, expected as given). Every record of a results file whose
  answers are known to be right or wrong (:func:`user_controls`).

Sampling: per kind, ``n`` controls stratified by category — allocated as evenly as the
eligible records allow (round-robin over categories in id order; a category with too few
eligible records gives its share to the others) and drawn within each category with
``random.Random(f"{seed}:{kind}:{category}")`` from the eligible records in file order.
Each kind is sampled independently, so adding a kind does not change the others.
Equal allocation favours per-category estimates; the pooled rates of a kind are therefore
not weighted like the benchmark.

A benchmark whose categories differ from LoCoMo's gives ``answer_categories`` (kind ->
the categories whose gold it may use); a category with a gold of another nature (a cue
instead of an answer) can then take the kinds that mean something for it and not the
others.

Judged controls are summarised (accept and error rates, the gate) in
:mod:`locomo_exp.trust.audit`.
"""

from __future__ import annotations

import logging
import random
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from locomo_exp.results import QARecord
from locomo_exp.trust.perturb import (
    change_number,
    shift_date,
    speakers_from_questions,
    stable_index,
    swap_name,
)

logger = logging.getLogger(__name__)

GOLD_AS_ANSWER = "gold_as_answer"
OTHER_GOLD = "other_gold"
ADVERSARIAL_TRAP = "adversarial_trap"
PERTURBED_DATE = "perturbed_date"
PERTURBED_NUMBER = "perturbed_number"
PERTURBED_NAME = "perturbed_name"
NON_ANSWER = "non_answer"

BUILTIN_KINDS: tuple[str, ...] = (
    GOLD_AS_ANSWER,
    OTHER_GOLD,
    ADVERSARIAL_TRAP,
    PERTURBED_DATE,
    PERTURBED_NUMBER,
    PERTURBED_NAME,
    NON_ANSWER,
)
"""The built-in control kinds, in report order."""

EXPECTED_ACCEPT: dict[str, bool] = {kind: kind == GOLD_AS_ANSWER for kind in BUILTIN_KINDS}
"""Whether a correct judge accepts each built-in kind."""

NON_ANSWERS: tuple[str, ...] = ("I don't know.", "That is not mentioned in the conversation.")
"""Non-answers used by the ``non_answer`` kind."""

ANSWER_CATEGORIES: tuple[int, ...] = (1, 2, 3, 4)
"""Categories with a real gold answer (all kinds but ``adversarial_trap``)."""

TRAP_NOTE = "the judge is shown the trap answer as the gold (the file's category-5 gold)"


@dataclass(frozen=True)
class AuditControl:
    """One control answer with a known verdict.

    Attributes:
        record: the record to judge (id ``audit:<kind>:<source id>``, prediction replaced).
        kind: the control kind (see module doc).
        expected_accept: ``True`` if a correct judge accepts it.
        source_question_id: id of the real question it was built from.
        note: a remark shown in the report (e.g. :data:`TRAP_NOTE`), or ``""``.
    """

    record: QARecord
    kind: str
    expected_accept: bool
    source_question_id: str
    note: str = ""

    @property
    def control_id(self) -> str:
        """The control's question id (key of its verdict)."""
        return self.record.question_id


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _answer_of(record: QARecord) -> str:
    return record.references[0] if record.references else record.gold_text


def _control(
    record: QARecord, kind: str, prediction: str, expected: bool, note: str = ""
) -> AuditControl:
    built = replace(
        record,
        question_id=f"audit:{kind}:{record.question_id}",
        prediction=prediction,
        prediction_missing=False,
        stored_judge_score=None,
    )
    return AuditControl(built, kind, expected, record.question_id, note)


def _allocate(capacity: Mapping[int, int], n: int) -> dict[int, int]:
    quota = {c: 0 for c in capacity}
    remaining = n
    while remaining > 0 and any(quota[c] < capacity[c] for c in capacity):
        for c in sorted(capacity):
            if remaining and quota[c] < capacity[c]:
                quota[c] += 1
                remaining -= 1
    return quota


def _stratified(
    candidates: Sequence[tuple[QARecord, AuditControl]], n: int, seed: int, kind: str
) -> list[AuditControl]:
    by_category: dict[int, list[AuditControl]] = defaultdict(list)
    for record, control in candidates:
        by_category[record.category].append(control)
    quota = _allocate({c: len(v) for c, v in by_category.items()}, n)
    chosen: list[AuditControl] = []
    for category in sorted(by_category):
        pool = by_category[category]
        rng = random.Random(f"{seed}:{kind}:{category}")
        picks = sorted(rng.sample(range(len(pool)), quota[category]))
        chosen.extend(pool[i] for i in picks)
    return chosen


def _other_gold(record: QARecord, donors: Sequence[QARecord], seed: int) -> str | None:
    own = _norm(record.gold_text)
    eligible = []
    for donor in donors:
        if donor.question_id == record.question_id:
            continue
        theirs = _norm(_answer_of(donor))
        if theirs and own and theirs not in own and own not in theirs:
            eligible.append(donor)
    if not eligible:
        return None
    return _answer_of(random.Random(f"{seed}:{OTHER_GOLD}:{record.question_id}").choice(eligible))


def _candidates(
    kind: str,
    records: Sequence[QARecord],
    seed: int,
    speakers: Mapping[str | None, Sequence[str]],
    answer_categories: Collection[int] = ANSWER_CATEGORIES,
) -> list[tuple[QARecord, AuditControl]]:
    out: list[tuple[QARecord, AuditControl]] = []
    groups: dict[tuple[str | None, int], list[QARecord]] = defaultdict(list)
    for record in records:
        groups[(record.conversation_id, record.category)].append(record)
    for record in records:
        gold = _answer_of(record).strip()
        has_gold = record.ground_truth is not None and bool(gold)
        answerable = record.category in answer_categories and has_gold
        prediction: str | None = None
        note = ""
        if kind == ADVERSARIAL_TRAP:
            trap = (record.adversarial_answer or "").strip()
            if record.category == 5 and trap:
                prediction = trap
                if _norm(record.gold_text) == _norm(trap):
                    note = TRAP_NOTE
        elif not answerable:
            continue
        elif kind == GOLD_AS_ANSWER:
            prediction = gold
        elif kind == OTHER_GOLD:
            prediction = _other_gold(
                record, groups[(record.conversation_id, record.category)], seed
            )
        elif kind == PERTURBED_DATE:
            prediction = shift_date(gold, record.question_id)
        elif kind == PERTURBED_NUMBER:
            prediction = change_number(gold)
        elif kind == PERTURBED_NAME:
            prediction = swap_name(gold, speakers.get(record.conversation_id, ()))
        elif kind == NON_ANSWER:
            prediction = NON_ANSWERS[stable_index(record.question_id, len(NON_ANSWERS))]
        else:
            raise ValueError(
                f"unknown audit control kind {kind!r} (known: {', '.join(BUILTIN_KINDS)})"
            )
        if prediction is not None:
            out.append((record, _control(record, kind, prediction, EXPECTED_ACCEPT[kind], note)))
    return out


def build_controls(
    records: Iterable[QARecord],
    *,
    n: int = 50,
    seed: int = 0,
    kinds: Sequence[str] = BUILTIN_KINDS,
    categories: Iterable[int] | None = None,
    speakers: Mapping[str | None, Sequence[str]] | None = None,
    answer_categories: Mapping[str, Collection[int]] | None = None,
) -> list[AuditControl]:
    """Build the built-in audit controls from the input's records (rules in the module doc).

    Args:
        records: the input's records (as loaded; order matters only for determinism).
        n: controls per kind (fewer when fewer records are eligible: see
            :func:`locomo_exp.trust.plan.short_kinds_line`).
        seed: sampling seed.
        kinds: which built-in kinds to build, in output order.
        categories: only build from these categories (e.g. the categories the run
            judges); ``None`` for all.
        speakers: conversation id -> speaker names; conversations not in it get speakers
            guessed from their questions.
        answer_categories: kind -> the categories whose gold that kind may use; a kind not
            in it uses :data:`ANSWER_CATEGORIES`. ``None``: LoCoMo's (1-4 for every kind).

    Returns:
        The controls, grouped by kind (in ``kinds`` order), then by category, then in
        file order.

    Raises:
        ValueError: for an unknown kind or a negative ``n``.
    """
    if n < 0:
        raise ValueError(f"judge.audit.n must be >= 0, got {n}")
    unknown = [k for k in kinds if k not in EXPECTED_ACCEPT]
    if unknown:
        raise ValueError(
            f"unknown audit control kind {unknown[0]!r} (known: {', '.join(BUILTIN_KINDS)})"
        )
    allowed = None if categories is None else set(categories)
    all_records = sorted(records, key=lambda r: r.position)
    questions: dict[str | None, list[str]] = defaultdict(list)
    for record in all_records:
        questions[record.conversation_id].append(record.question)
    known = dict(speakers or {})
    names = {
        conv: tuple(known[conv]) if conv in known else speakers_from_questions(qs)
        for conv, qs in questions.items()
    }
    pool = [r for r in all_records if allowed is None or r.category in allowed]
    controls: list[AuditControl] = []
    for kind in kinds:
        cats = (answer_categories or {}).get(kind, ANSWER_CATEGORIES)
        chosen = _stratified(_candidates(kind, pool, seed, names, cats), n, seed, kind)
        if len(chosen) < n:  # the run's plan says it once (trust.plan.short_kinds_line)
            logger.debug("audit: %s has %d eligible records, fewer than n=%d", kind, len(chosen), n)
        controls.extend(chosen)
    return controls


def user_controls(
    records: Iterable[QARecord],
    expected: str | bool,
    *,
    name: str = "user",
    n: int | None = None,
    seed: int = 0,
) -> list[AuditControl]:
    """Controls from a results file whose answers are known to be right or wrong.

    Args:
        records: the file's records (already loaded, e.g. by ``data.load_results``).
        expected: ``"right"``/``"correct"``/``True`` or ``"wrong"``/``False``.
        name: a label for the kind (``user_<name>``; non-alphanumerics become ``_``).
        n: sample this many, stratified by category as for built-in kinds; ``None``: all.
        seed: sampling seed (used when ``n`` is given).

    Returns:
        The controls, id ``audit:user_<name>:<question id>``.

    Raises:
        ValueError: if ``expected`` is not one of the values above.
    """
    if isinstance(expected, bool):
        accept = expected
    elif str(expected).strip().lower() in ("right", "correct", "accept"):
        accept = True
    elif str(expected).strip().lower() in ("wrong", "incorrect", "reject"):
        accept = False
    else:
        raise ValueError(f"audit control expected must be right or wrong, got {expected!r}")
    kind = "user_" + (re.sub(r"[^0-9A-Za-z_]+", "_", name).strip("_") or "controls")
    candidates = [
        (r, _control(r, kind, r.prediction, accept))
        for r in sorted(records, key=lambda r: r.position)
    ]
    if n is None:
        return [c for _, c in candidates]
    return _stratified(candidates, n, seed, kind)
