"""The two readings of a judge reply: ours (the conclusion, whole words, failed calls are not
verdicts) and the authors' three-step parser (``judge.parser=authors``), as pure functions."""

from __future__ import annotations

import json

import pytest
from conftest import SHARED_DATA

from locomo_exp.benchmarks.locomo_plus.parsing import parse_authors, parse_ours

KEY_ERROR = ("[API Error: Error code: 401 - {'error': {'message': 'Incorrect API key "
             "provided: sk-proj-****'}}]")


@pytest.mark.parametrize(
    ("reply", "ours", "authors"),
    [
        pytest.param("Incorrect.", (0.0, "wrong"), (1.0, "correct"), id="incorrect-word"),
        pytest.param('{"label": "partial", "reason": "the city only"}', (0.5, "partial"),
                     (0.5, "partial"), id="json-block-partial"),
        pytest.param('{"label": "WRONG"}', (0.0, "wrong"), (0.0, "wrong"), id="json-no-reason"),
        pytest.param('{"label": " Correct ", "reason": "same date"}', (1.0, "correct"),
                     (1.0, "correct"), id="label-stripped-lowered"),
        pytest.param("At first it looks correct, but the final verdict: wrong.",
                     (0.0, "wrong"), (1.0, "correct"), id="conclusion-is-last-word"),
        pytest.param("The reply is not correct.", (0.0, "wrong"), (1.0, "correct"),
                     id="not-correct"),
        pytest.param("Partially correct: the main entity only.", (0.5, "partial"),
                     (1.0, "correct"), id="partially-correct"),
        pytest.param("The reply uses the cue; label: correct", (1.0, "correct"),
                     (1.0, "correct"), id="plain-correct"),
        pytest.param("uncorrected draft wrongly filed", (None, None), (1.0, "correct"),
                     id="substrings-are-not-words"),
        pytest.param("I cannot tell.", (None, None), (0.0, ""), id="no-label"),
    ],
)
def test_each_parser_reads_the_reply(reply: str, ours: tuple, authors: tuple) -> None:
    mine, theirs = parse_ours(reply), parse_authors(reply)
    assert (mine.score, mine.label) == ours
    assert (theirs.score, theirs.label) == authors


def test_an_api_error_is_a_failed_call_for_us_and_correct_for_the_authors() -> None:
    mine, theirs = parse_ours(KEY_ERROR), parse_authors(KEY_ERROR)
    assert (mine.label, mine.score, mine.api_error) == (None, None, True)
    assert "failed call" in mine.reason
    assert (theirs.label, theirs.score, theirs.api_error, theirs.step) == (
        "correct", 1.0, True, "words")
    assert not theirs.from_no_label  # counted as derived from an API error, not a reply


def test_an_error_without_a_verdict_word_scores_0_for_the_authors() -> None:
    theirs = parse_authors("[API Error: Connection timed out]")
    assert (theirs.label, theirs.score, theirs.step, theirs.api_error) == ("", 0.0, "none", True)


def test_the_authors_steps_are_named() -> None:
    assert parse_authors('x {"label": "wrong", "reason": "no"} y').step == "block"
    assert parse_authors('{"label": "wrong"}').step == "json"
    words = parse_authors("Incorrect.")
    assert (words.step, words.from_no_label) == ("words", True)


def test_the_authors_run_reasons_are_all_api_errors_read_correct_by_their_parser() -> None:
    path = SHARED_DATA / "locomo_plus" / "authors_run" / "judged.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (read-only shared/ folder)")
    rows = json.loads(path.read_text(encoding="utf-8"))
    theirs = [parse_authors(r["judge_reason"]) for r in rows]
    mine = [parse_ours(r["judge_reason"]) for r in rows]
    assert len(rows) == 2240
    assert sum(t.label == "correct" and t.api_error for t in theirs) == 2240
    assert [r["judge_label"] for r in rows] == [t.label for t in theirs]  # their labels, re-derived
    assert sum(m.api_error and m.score is None for m in mine) == 2240
