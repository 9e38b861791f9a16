"""Golden tests of each beam-official rule, built by hand from the authors' rules (docs/beam.md),
and of beam-nugget's rules; invented verdicts only."""

from __future__ import annotations

import math

import pytest

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.figures import nugget_figures, official_figures, question_scores
from locomo_exp.benchmarks.beam.rows import BeamQuestion


def question(chat: str, ability: str, items: tuple[float, ...], position: int = 0) -> BeamQuestion:
    return BeamQuestion(
        question_id=f"{chat}_q{position}_{ability}", chat=chat, ability=ability,
        position=position, question="invented?", rubric=tuple("x" * len(items)), answer="a",
        item_scores=items,
    )


def test_a_half_item_verdict_counts_zero_in_the_official_profile() -> None:
    # compute_metrics.py passes each verdict through int(): 0.5 -> 0
    assert p.official_item(0.5) == 0
    assert p.official_item(1.0) == 1
    assert p.official_question_score([1.0, 0.5]) == 0.5
    assert p.nugget_question_score([1.0, 0.5]) == 0.75  # mem0 keeps the half


def test_a_question_of_half_verdicts_only_scores_zero_officially_and_passes_in_nugget() -> None:
    scores = question_scores(question("c1", "summarization", (0.5, 0.5)))
    assert scores[p.OFFICIAL]["score"] == 0.0
    assert scores[p.NUGGET] == {"score": 0.5, "pass": True}


def test_official_ability_is_the_mean_over_chats_not_over_questions() -> None:
    # chat a: one question scoring 1; chat b: three questions scoring 0.
    # Mean over chats of per-chat means = (1 + 0) / 2 = 0.5; pooled mean = 0.25.
    rows = [question("a", "abstention", (1.0,))] + [
        question("b", "abstention", (0.0,), position=k) for k in range(3)
    ]
    scored = [(q, question_scores(q)) for q in rows]
    official = official_figures(scored, samples=10, seed=0)
    assert official["abilities"]["abstention"]["score"] == 0.5
    assert nugget_figures(scored, samples=10, seed=0)["overall"]["avg_score"] == 0.25


def test_official_has_no_overall_and_its_mean_is_labelled_and_unmeasured_without_event_ordering() -> None:
    rows = [question("a", "abstention", (1.0,)), question("a", "event_ordering", (1.0,))]
    official = official_figures([(q, question_scores(q)) for q in rows], samples=10, seed=0)
    assert "overall" not in official
    assert official["mean_of_abilities"] is None
    assert official["measured"] == 1
    assert official["mean_of_measured"] == 1.0
    assert "not the authors'" in official["mean_label"]
    assert official["abilities"]["event_ordering"]["score"] is None
    assert "tau-b" in official["abilities"]["event_ordering"]["reason"]


@pytest.mark.parametrize(("score", "clamped"), [
    pytest.param(0.0, 0.0, id="zero"), pytest.param(0.24, 0.0, id="below-quarter"),
    pytest.param(0.25, 0.5, id="quarter"), pytest.param(0.74, 0.5, id="below-three-quarters"),
    pytest.param(0.75, 1.0, id="three-quarters"), pytest.param(1.0, 1.0, id="one"),
])
def test_nugget_item_verdicts_are_clamped_to_thirds(score: float, clamped: float) -> None:
    assert p.clamp_item(score) == clamped


def test_nugget_question_score_is_rounded_to_four_decimals_before_the_pass_test() -> None:
    assert p.nugget_question_score([1.0, 0.0, 0.0]) == 0.3333
    assert p.nugget_question_score([1.0, 0.5, 0.0]) == 0.5
    assert p.nugget_passes(0.5) and not p.nugget_passes(0.4999)
    assert p.nugget_question_score(None) == 0.0  # a failed judging scores 0 in mem0


def test_rank_vectors_tie_unmatched_items_and_lines_last() -> None:
    # items A B C; the answer's lines: B, A, an unaligned line x.
    # union = A B C x (4), missing rank 5.
    assert p.rank_vectors(3, [1, 0, None]) == ([1, 2, 3, 5], [2, 1, 5, 3])


def test_tau_norm_hand_worked_no_ties() -> None:
    # pairs of (A,B,C,x) with ranks ref 1 2 3 5, sys 2 1 5 3:
    # AB discordant, AC C, Ax C, BC C, Bx C, Cx D -> tau = (4 - 2) / 6 = 1/3
    assert p.tau_norm(3, [1, 0, None]) == pytest.approx((1 / 3 + 1) / 2)


def test_tau_norm_hand_worked_with_unmatched_items_tied_last() -> None:
    # items A B C D, one line aligned to A: sys ranks 1 5 5 5 (B C D tied last), ref 1 2 3 4.
    # concordant 3 (A with each), discordant 0, ties in sys 3 of 6 pairs:
    # tau_b = 3 / sqrt(6 * (6 - 3)) = 0.70711
    assert p.tau_norm(4, [0]) == pytest.approx((3 / math.sqrt(18) + 1) / 2)


def test_tau_norm_reversed_order_is_zero_and_same_order_is_one() -> None:
    assert p.tau_norm(3, [2, 1, 0]) == pytest.approx(0.0)
    assert p.tau_norm(3, [0, 1, 2]) == pytest.approx(1.0)


def test_alignment_that_uses_an_item_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="one-to-one"):
        p.rank_vectors(2, [0, 0])


def test_answer_lines_drop_empty_lines() -> None:
    assert p.answer_lines("first\n\n  second  \n") == ["first", "second"]
