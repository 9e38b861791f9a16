"""Audit controls: deterministic perturbation rules, stratified building, and the summary/gate."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from locomo_exp.judge.protocols import get_protocol
from locomo_exp.results import QARecord
from locomo_exp.trust.audit import audit_pairs, summarise_audit
from locomo_exp.trust.controls import (
    ADVERSARIAL_TRAP,
    BUILTIN_KINDS,
    GOLD_AS_ANSWER,
    NON_ANSWER,
    NON_ANSWERS,
    OTHER_GOLD,
    PERTURBED_DATE,
    PERTURBED_NAME,
    PERTURBED_NUMBER,
    TRAP_NOTE,
    build_controls,
    user_controls,
)
from locomo_exp.trust.perturb import (
    change_number,
    find_dates,
    shift_date,
    speakers_from_questions,
    stable_index,
    swap_name,
)

ACCEPT = get_protocol("rubric").accept_threshold
"""The accept threshold of the built-in protocols (50)."""

# ---------------------------------------------------------------- perturbation rules


def _key_for(component_index: int, k: int) -> str:
    """A question id whose crc32 picks the given component."""
    return next(f"q{i}" for i in range(1000) if stable_index(f"q{i}", k) == component_index)


@pytest.mark.parametrize(
    ("gold", "component", "expected"),
    [
        ("7 May 2023", 0, "17 May 2023"),
        ("7 May 2023", 1, "7 August 2023"),
        ("7 May 2023", 2, "7 May 2024"),
        ("The week before 25 December 2023", 0, "The week before 4 January 2024"),
        ("31 January, 2023", 1, "30 April, 2023"),
        ("The Friday before 24June, 2022.", 0, "The Friday before 4July, 2022."),
        ("May 1, 2023", 0, "May 11, 2023"),
        ("Sept 3rd, 2022", 0, "Sept 13th, 2022"),
        ("29 Feb 2024", 2, "28 Feb 2025"),
        ("June 2023", 0, "September 2023"),
        ("june, 2023", 1, "june, 2024"),
        ("in 2022", 0, "in 2023"),
    ],
)
def test_date_shift_moves_one_component_by_the_documented_amount(
    gold: str, component: int, expected: str
) -> None:
    form = find_dates(gold)[0][0]
    k = {"dmy": 3, "mdy": 3, "my": 2, "y": 1}[form]
    assert shift_date(gold, _key_for(component, k)) == expected


def test_date_shift_needs_a_date() -> None:
    assert shift_date("Sweden", "q1") is None
    assert shift_date("4 years", "q1") is None


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        ("4 years", "8 years"),
        ("two times", "four times"),
        ("Four dogs", "Eight dogs"),
        ("twelve", "twenty-four"),
        ("$10", "$20"),
        ("5K charity run", "10K charity run"),
        ("3.5 hours", "7.0 hours"),
        ("0", "1"),
        ("On 7 May 2023 she bought 3 cats", "On 7 May 2023 she bought 6 cats"),
    ],
)
def test_number_change_doubles_the_first_number_outside_dates(gold: str, expected: str) -> None:
    assert change_number(gold) == expected


def test_number_change_skips_golds_whose_only_numbers_are_dates() -> None:
    assert change_number("7 May 2023") is None
    assert change_number("Sweden") is None


def test_name_swap_replaces_the_one_speaker_named() -> None:
    speakers = ("Melanie", "Caroline")
    assert swap_name("In Melanie's slipper", speakers) == "In Caroline's slipper"
    assert swap_name("Caroline met Caroline's mentor", speakers) == "Melanie met Melanie's mentor"
    assert swap_name("Caroline and Melanie", speakers) is None  # both named: a swap means the same
    assert swap_name("Sweden", speakers) is None
    assert swap_name("In Melanie's slipper", ("Melanie",)) is None  # nobody to swap with


def test_speakers_guessed_from_questions_match_every_locomo_conversation(shared_data: Path) -> None:
    samples = json.loads((shared_data / "locomo10.json").read_text())
    for sample in samples:
        guessed = speakers_from_questions(qa["question"] for qa in sample["qa"])
        truth = {sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]}
        assert set(guessed) == truth, sample["sample_id"]


# ---------------------------------------------------------------- building controls


def _rec(
    qid: str, gold: str, category: int, conv: str = "c1", question: str = "", **kw
) -> QARecord:
    return QARecord(
        question_id=qid,
        question=question or f"What did Anna or Ben do? ({qid})",
        ground_truth=gold,
        prediction="system answer",
        category=category,
        conversation_id=conv,
        position=int(qid.split("-")[-1]) if qid.split("-")[-1].isdigit() else 0,
        **kw,
    )


def _records() -> list[QARecord]:
    golds = {
        1: ["Anna's bike", "Paris, Rome", "3 cats", "Ben"],
        2: ["7 May 2023", "June 2023", "two weeks", "2022"],
        3: ["Likely yes", "Probably no"],
        4: ["Sweden", "Ben's guitar", "a red car", "10 books"],
    }
    records, i = [], 0
    for category, items in golds.items():
        for gold in items:
            records.append(_rec(f"q-{i}", gold, category))
            i += 1
    records.append(_rec(f"q-{i}", "the beach house", 5, adversarial_answer="the beach house"))
    records.append(_rec(f"q-{i + 1}", "a blue kite", 5, adversarial_answer="a blue kite"))
    return records


def test_controls_have_distinct_audit_ids_kinds_and_expected_verdicts() -> None:
    controls = build_controls(_records(), n=50, seed=0)
    ids = [c.control_id for c in controls]
    assert len(ids) == len(set(ids))
    assert all(c.control_id == f"audit:{c.kind}:{c.source_question_id}" for c in controls)
    assert Counter(c.kind for c in controls) == {
        GOLD_AS_ANSWER: 14,
        OTHER_GOLD: 14,
        NON_ANSWER: 14,
        PERTURBED_DATE: 3,
        PERTURBED_NUMBER: 3,
        PERTURBED_NAME: 3,
        ADVERSARIAL_TRAP: 2,
    }
    assert {c.kind for c in controls if c.expected_accept} == {GOLD_AS_ANSWER}
    by_id = {c.control_id: c.record.prediction for c in controls}
    assert by_id["audit:gold_as_answer:q-4"] == "7 May 2023"
    assert by_id["audit:perturbed_number:q-2"] == "6 cats"
    assert by_id["audit:perturbed_number:q-6"] == "four weeks"
    assert by_id["audit:perturbed_name:q-0"] == "Ben's bike"
    assert by_id["audit:perturbed_name:q-3"] == "Anna"
    assert by_id["audit:perturbed_name:q-11"] == "Anna's guitar"
    assert by_id["audit:adversarial_trap:q-14"] == "the beach house"
    assert by_id["audit:non_answer:q-0"] in NON_ANSWERS
    # the copied record keeps question, gold and category; only id and prediction change
    control = next(c for c in controls if c.control_id == "audit:perturbed_date:q-4")
    assert control.record.question == "What did Anna or Ben do? (q-4)"
    assert control.record.ground_truth == "7 May 2023" and control.record.category == 2
    assert control.record.stored_judge_score is None


def test_trap_controls_note_when_the_gold_is_the_trap() -> None:
    traps = [
        c
        for c in build_controls(_records(), kinds=[ADVERSARIAL_TRAP])
        if c.kind == ADVERSARIAL_TRAP
    ]
    assert [c.note for c in traps] == [TRAP_NOTE, TRAP_NOTE]


def test_other_gold_comes_from_the_same_conversation_and_category_and_differs() -> None:
    records = _records() + [_rec("q-99", "Oslo", 4, conv="c2"), _rec("q-98", "Lima", 4, conv="c2")]
    golds = {r.question_id: r for r in records}
    for control in build_controls(records, kinds=[OTHER_GOLD], seed=3):
        source = golds[control.source_question_id]
        donors = [
            r
            for r in records
            if r.conversation_id == source.conversation_id
            and r.category == source.category
            and r.question_id != source.question_id
        ]
        assert control.record.prediction in {d.gold_text for d in donors}
        assert control.record.prediction != source.gold_text
    c2 = {
        c.source_question_id: c.record.prediction
        for c in build_controls(records, kinds=[OTHER_GOLD])
        if c.record.conversation_id == "c2"
    }
    assert c2 == {"q-99": "Lima", "q-98": "Oslo"}


def test_sampling_is_stratified_evenly_and_seeded() -> None:
    records = [_rec(f"q-{i}", f"gold {i}", 1 + i % 4) for i in range(40)]  # 10 per category
    controls = build_controls(records, n=10, kinds=[GOLD_AS_ANSWER], seed=7)
    assert Counter(c.record.category for c in controls) == {1: 3, 2: 3, 3: 2, 4: 2}
    again = build_controls(records, n=10, kinds=[GOLD_AS_ANSWER], seed=7)
    assert [c.control_id for c in again] == [c.control_id for c in controls]
    other = build_controls(records, n=10, kinds=[GOLD_AS_ANSWER], seed=8)
    assert [c.control_id for c in other] != [c.control_id for c in controls]
    # a category with too few eligible records gives its share to the others
    few = [r for r in records if r.category != 3] + [r for r in records if r.category == 3][:1]
    shares = Counter(c.record.category for c in build_controls(few, n=10, kinds=[GOLD_AS_ANSWER]))
    assert shares == {1: 3, 2: 3, 3: 1, 4: 3}


def test_categories_filter_and_unknown_kind() -> None:
    controls = build_controls(_records(), categories=[2])
    assert {c.record.category for c in controls} == {2}
    with pytest.raises(ValueError, match="unknown audit control kind 'made_up'"):
        build_controls(_records(), kinds=["made_up"])


def test_user_controls_take_every_record_with_the_expected_verdict() -> None:
    records = _records()[:3]
    wrong = user_controls(records, "wrong", name="plausible wrong.json")
    assert [c.control_id for c in wrong] == [
        "audit:user_plausible_wrong_json:q-0",
        "audit:user_plausible_wrong_json:q-1",
        "audit:user_plausible_wrong_json:q-2",
    ]
    assert {c.expected_accept for c in wrong} == {False}
    assert [c.record.prediction for c in wrong] == ["system answer"] * 3
    assert {c.expected_accept for c in user_controls(records, True)} == {True}
    with pytest.raises(ValueError, match="expected must be right or wrong, got 'maybe'"):
        user_controls(records, "maybe")


def test_real_honcho_file_gives_50_controls_per_kind_except_names(shared_data: Path) -> None:
    from locomo_exp.data import load_results

    records = load_results(shared_data / "predictions" / "honcho_locomo10_qa.json").records
    controls = build_controls(records, n=50, seed=0)
    counts = Counter(c.kind for c in controls)
    assert counts == {kind: 50 for kind in BUILTIN_KINDS} | {PERTURBED_NAME: 24}
    assert Counter(c.record.category for c in controls if c.kind == GOLD_AS_ANSWER) == {
        1: 13,
        2: 13,
        3: 12,
        4: 12,
    }
    assert all(c.note == TRAP_NOTE for c in controls if c.kind == ADVERSARIAL_TRAP)


# ---------------------------------------------------------------- summary and gate


def _accept_all(controls) -> dict[str, float]:
    return {c.control_id: 100.0 for c in controls}


def _truth(controls) -> dict[str, float]:
    return {c.control_id: 100.0 if c.expected_accept else 0.0 for c in controls}


def test_a_judge_that_accepts_everything_fails_the_gate_on_every_reject_kind() -> None:
    controls = build_controls(_records(), n=50)
    summary = summarise_audit(
        controls,
        _accept_all(controls),
        threshold=ACCEPT,
        max_false_accept=0.1,
        max_false_reject=0.1,
    )
    reject_kinds = [k for k in summary.kinds if k != GOLD_AS_ANSWER]
    for kind in reject_kinds:
        assert summary.kinds[kind].error.rate == 1.0
        assert summary.kinds[kind].accept.rate == 1.0
    assert summary.kinds[GOLD_AS_ANSWER].error.rate == 0.0
    assert summary.false_accept.rate == 1.0 and summary.false_accept.n == 39
    assert summary.false_reject.rate == 0.0 and summary.false_reject.n == 14
    assert not summary.gate.passed
    assert summary.gate.message == (
        "judge audit failed: "
        "false-accept rate 100.0% (14/14) on other_gold exceeds judge.audit.max_false_accept=10.0%; "
        "false-accept rate 100.0% (2/2) on adversarial_trap exceeds judge.audit.max_false_accept=10.0%; "
        "false-accept rate 100.0% (3/3) on perturbed_date exceeds judge.audit.max_false_accept=10.0%; "
        "false-accept rate 100.0% (3/3) on perturbed_number exceeds judge.audit.max_false_accept=10.0%; "
        "false-accept rate 100.0% (3/3) on perturbed_name exceeds judge.audit.max_false_accept=10.0%; "
        "false-accept rate 100.0% (14/14) on non_answer exceeds judge.audit.max_false_accept=10.0%"
    )


def test_a_judge_that_replays_the_truth_has_no_errors_and_passes() -> None:
    controls = build_controls(_records(), n=50)
    summary = summarise_audit(
        controls, _truth(controls), threshold=ACCEPT, max_false_accept=0.0, max_false_reject=0.0
    )
    assert all(k.error.rate == 0.0 for k in summary.kinds.values())
    assert summary.false_accept.rate == 0.0 and summary.false_reject.rate == 0.0
    assert summary.gate.passed and summary.gate.message == ""


def test_summary_counts_unscored_and_gives_wilson_intervals_per_kind_and_category() -> None:
    controls = build_controls(_records(), n=50, kinds=[GOLD_AS_ANSWER])
    verdicts = _truth(controls)
    ids = [c.control_id for c in controls]
    verdicts[ids[0]] = 0.0  # category 1: one false reject
    verdicts[ids[1]] = None  # unscored
    del verdicts[ids[2]]  # missing = unscored
    verdicts[ids[3]] = 49.9  # below the threshold: rejected
    costs = {cid: 0.01 for cid in ids}
    summary = summarise_audit(
        controls, verdicts, threshold=ACCEPT, max_false_reject=0.1, cost_usd=costs
    )
    kind = summary.kinds[GOLD_AS_ANSWER]
    assert (kind.n_controls, kind.n_unscored, kind.accept.successes, kind.accept.n) == (
        14,
        2,
        10,
        12,
    )
    low, high = proportion_confint(10, 12, alpha=0.05, method="wilson")
    assert kind.accept.ci_low == pytest.approx(low) and kind.accept.ci_high == pytest.approx(high)
    assert kind.error.successes == 2 and kind.error.rate == pytest.approx(2 / 12)
    assert (
        kind.per_category[1].successes == 0 and kind.per_category[1].n == 2
    )  # q-0, q-3 rejected; q-1, q-2 unscored
    assert kind.per_category[2].successes == 4 and kind.per_category[2].n == 4
    assert kind.cost_usd == pytest.approx(0.14) and summary.cost_usd == pytest.approx(0.14)
    assert summary.gate.message == (
        "judge audit failed: false-reject rate 16.7% (2/12) on gold_as_answer exceeds "
        "judge.audit.max_false_reject=10.0%"
    )
    expected, judged = audit_pairs(controls, verdicts, ACCEPT)
    assert len(expected) == 12 and sum(judged) == 10


def test_limits_must_be_rates() -> None:
    with pytest.raises(
        ValueError, match="judge.audit.max_false_accept must be a rate on 0-1, got 10"
    ):
        summarise_audit([], {}, threshold=ACCEPT, max_false_accept=10)


def test_answer_categories_let_a_category_take_only_the_kinds_given_for_it() -> None:
    # a benchmark's category 6 holds a cue, not an answer: restated or swapped, never perturbed
    records = [
        QARecord(question_id=f"c{i}", question=f"Invented trigger {i}?",
                 ground_truth=f"invented cue number {i} about the year 2020",
                 prediction="reply", category=6, conversation_id="conv-x", position=i)
        for i in range(3)
    ]
    kinds = ["gold_as_answer", "other_gold", "perturbed_number", "non_answer"]
    assert build_controls(records, n=5, kinds=kinds) == []  # LoCoMo's: categories 1-4 only
    cue = {"gold_as_answer": (6,), "other_gold": (6,), "non_answer": (6,)}
    controls = build_controls(records, n=5, kinds=kinds, answer_categories=cue)
    assert Counter(c.kind for c in controls) == {"gold_as_answer": 3, "other_gold": 3,
                                                 "non_answer": 3}
    restated = [c for c in controls if c.kind == "gold_as_answer"]
    assert [c.record.prediction for c in restated] == [r.ground_truth for r in records]
    swapped = [c for c in controls if c.kind == "other_gold"]
    assert all(c.record.prediction != r.ground_truth and c.record.prediction.startswith(
        "invented cue number") for c, r in zip(swapped, records, strict=True))
