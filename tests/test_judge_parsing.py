"""Judge reply parsing: every known malformed reply kind (FIELD_NOTES §7)."""

from __future__ import annotations

from typing import Optional

import pytest

from locomo_exp.judge.parsing import parse_judge_reply

RUBRIC_CASES = [
    pytest.param('{"score": 85, "explanation": "Close."}', None, 85.0, id="plain-json"),
    pytest.param(
        '```json\n{"score": 85, "explanation": "Close."}\n```', None, 85.0, id="json-fence"
    ),
    pytest.param('```\n{"score": 85, "explanation": "x"}\n```', None, 85.0, id="bare-fence"),
    pytest.param(
        'Here is my evaluation:\n{"score": 85, "explanation": "Close."}\nHope this helps!',
        None,
        85.0,
        id="prose-around-json",
    ),
    pytest.param('{"score": "85", "explanation": "x"}', None, 85.0, id="score-as-string"),
    pytest.param('{"score": "85/100", "explanation": "x"}', None, 85.0, id="score-as-85-over-100"),
    pytest.param('{"score": "8.5/10", "explanation": "x"}', None, 85.0, id="score-over-10"),
    pytest.param('{"Score": 85, "Explanation": "x"}', None, 85.0, id="capitalised-keys"),
    pytest.param('{"score": 72.5, "explanation": "x"}', None, 72.5, id="fractional"),
    pytest.param("85", None, 85.0, id="bare-85"),
    pytest.param("85/100", None, 85.0, id="bare-85-over-100"),
    pytest.param("Score: 85", None, 85.0, id="bare-score-colon"),
    pytest.param("```\n85\n```", None, 85.0, id="fenced-bare-number"),
    pytest.param(
        '{"score": 85, "explanation": "a"}\n{"score": 85, "explanation": "b"}',
        None,
        85.0,
        id="several-objects-agreeing",
    ),
    pytest.param(
        '{"score": 85, "explanation": "The prediction gives the same da',
        "max_tokens",
        85.0,
        id="truncated-after-complete-score",
    ),
    pytest.param('[{"score": 40, "explanation": "x"}]', None, 40.0, id="object-in-array"),
    pytest.param('{"score": 0, "explanation": "Wrong."}', None, 0.0, id="zero"),
    pytest.param('{"score": 100, "explanation": "Right."}', None, 100.0, id="hundred"),
]

RUBRIC_FAILURES = [
    pytest.param("{score: 85, explanation: 'x',}", None, "no complete JSON", id="malformed-json"),
    pytest.param('{"score": 8', "max_tokens", "truncated", id="truncated-mid-number"),
    pytest.param('{"explan', "max_tokens", "truncated", id="truncated-before-score"),
    pytest.param('{"score": 150, "explanation": "x"}', None, "out of range", id="above-100"),
    pytest.param('{"score": -5, "explanation": "x"}', None, "out of range", id="negative"),
    pytest.param("150/100", None, "out of range", id="bare-above-100"),
    pytest.param('{"score": "high", "explanation": "x"}', None, "not a number", id="word-score"),
    pytest.param('{"score": true, "explanation": "x"}', None, "not a number", id="bool-score"),
    pytest.param('{"score": null, "explanation": "x"}', None, "not a number", id="null-score"),
    pytest.param(
        '{"score": "7/20", "explanation": "x"}', None, "unsupported scale", id="odd-scale"
    ),
    pytest.param(
        '{"score": 85, "explanation": "a"} Actually: {"score": 40, "explanation": "b"}',
        None,
        "ambiguous",
        id="several-objects-disagreeing",
    ),
    pytest.param('{"explanation": "no score"}', None, "no complete JSON", id="missing-field"),
    pytest.param("I can't help with evaluating this.", None, "no JSON", id="refusal-text"),
    pytest.param("I'm sorry", "refusal", "refused", id="refusal-stop-reason"),
    pytest.param("", None, "empty", id="empty"),
    pytest.param(None, "refusal", "refused", id="refusal-no-text"),
    pytest.param("The answer is right, 85 points.", None, "no JSON", id="number-in-prose"),
]


@pytest.mark.parametrize("reply, stop_reason, expected", RUBRIC_CASES)
def test_rubric_reply_is_parsed_to_its_score(
    reply: str, stop_reason: Optional[str], expected: float
) -> None:
    parsed = parse_judge_reply(reply, "rubric", stop_reason=stop_reason)
    assert parsed.ok, parsed.failure_reason
    assert parsed.score == expected


@pytest.mark.parametrize("reply, stop_reason, reason", RUBRIC_FAILURES)
def test_rubric_reply_that_cannot_be_trusted_is_a_parse_failure(
    reply: Optional[str], stop_reason: Optional[str], reason: str
) -> None:
    parsed = parse_judge_reply(reply, "rubric", stop_reason=stop_reason)
    assert not parsed.ok
    assert parsed.score is None
    assert reason in parsed.failure_reason


def test_truncated_reply_keeps_partial_explanation_and_is_marked_salvaged() -> None:
    parsed = parse_judge_reply(
        '{"score": 60, "explanation": "Partly', "rubric", stop_reason="max_tokens"
    )
    assert parsed.ok and parsed.salvaged
    assert parsed.explanation == "Partly"


@pytest.mark.parametrize(
    "reply, expected",
    [
        pytest.param('{"label": "CORRECT", "explanation": "Same date."}', 100.0, id="correct"),
        pytest.param('{"label": "WRONG", "explanation": "Other city."}', 0.0, id="wrong"),
        pytest.param('{"label": "correct", "explanation": "x"}', 100.0, id="lowercase"),
        pytest.param('{"label": "INCORRECT", "explanation": "x"}', 0.0, id="incorrect-synonym"),
        pytest.param('```json\n{"label": "CORRECT"}\n```', 100.0, id="fenced"),
        pytest.param("CORRECT", 100.0, id="bare-label"),
        pytest.param("**WRONG**", 0.0, id="bare-label-markdown"),
        pytest.param('{"label": "CORRECT", "explanation": "The da', 100.0, id="truncated"),
    ],
)
def test_binary_reply_maps_correct_to_100_and_wrong_to_0(reply: str, expected: float) -> None:
    parsed = parse_judge_reply(reply, "binary")
    assert parsed.ok, parsed.failure_reason
    assert parsed.score == expected
    assert parsed.label in {"CORRECT", "WRONG"}


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param('{"label": "MAYBE", "explanation": "x"}', id="unknown-label"),
        pytest.param('{"score": 90, "explanation": "x"}', id="rubric-reply"),
        pytest.param('{"label": "CORRECT"} {"label": "WRONG"}', id="disagreeing"),
        pytest.param("85", id="bare-number"),
    ],
)
def test_binary_reply_without_a_clear_label_is_a_parse_failure(reply: str) -> None:
    assert not parse_judge_reply(reply, "binary").ok
