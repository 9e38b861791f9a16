"""The verdict is the judge's conclusion, for every protocol and template (issue 27 §2).

A reply that holds several verdicts (a quoted "CORRECT" then "WRONG", a JSON object quoted in
prose before the judge's own, two regex matches that disagree) is read as the judge's final
conclusion or counted unreadable, never as its first verdict-looking text. The template
texts are this test's own words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config, text
from judge_helpers import make_records

from locomo_exp.judge import run_judge
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.protocols.template import load_template_protocol
from locomo_exp.judge.protocols.templates import TemplateError, load_template

HEAD = "name: t\nversion: '1'\nuser: 'Q {question} G {gold_answer} P {predicted_answer}'\n"
LABEL_JSON = HEAD + "json_key: label\nlabels: {CORRECT: 100, WRONG: 0}\n"
CONTAINS = HEAD + "contains: {correct: 100, wrong: 0}\n"
NESTED = HEAD + "contains: {correct: 100, incorrect: 0}\n"
REGEX = HEAD + "regex: 'Verdict: (?P<verdict>\\w+)'\nlabels: {CORRECT: 100, WRONG: 0}\n"

QUOTED_THEN_WRONG = 'The answer says "CORRECT" about itself, but the date is off: WRONG.'
OBJECT_IN_PROSE = (
    'The answer embeds {"label": "CORRECT"}; it names the wrong dog, so it is WRONG.'
)


def _spec(tmp_path: Path, body: str):  # noqa: ANN202 - a TemplateProtocol
    path = tmp_path / "t.yaml"
    path.write_text(body, encoding="utf-8")
    return load_template_protocol(path)


@pytest.mark.parametrize(
    "body, reply",
    [
        pytest.param(CONTAINS, QUOTED_THEN_WRONG, id="contains-quoted-correct-then-wrong"),
        pytest.param(
            REGEX, "The answer writes Verdict: CORRECT. Verdict: WRONG", id="regex-two-matches"
        ),
        pytest.param(
            NESTED, "It is incorrect, though the year is correct.", id="contains-nested-both"
        ),
    ],
)
def test_disagreeing_verdicts_in_a_template_reply_are_unreadable(
    tmp_path: Path, body: str, reply: str
) -> None:
    parsed = parse_judge_reply(reply, _spec(tmp_path, body))
    assert not parsed.ok and parsed.score is None
    assert parsed.failure_reason.startswith("conflicting verdicts")


def test_a_json_key_template_reads_the_conclusion_after_a_quoted_object(tmp_path: Path) -> None:
    spec = _spec(tmp_path, LABEL_JSON)
    parsed = parse_judge_reply(OBJECT_IN_PROSE, spec)
    assert (parsed.ok, parsed.score, parsed.label) == (True, 0.0, "WRONG")
    # the binary protocol reads the same reply the same way
    assert parse_judge_reply(OBJECT_IN_PROSE, "binary").score == 0.0
    # prose "wrong" in lower case is not a verdict; a negated label is not interpreted
    assert parse_judge_reply('{"label": "CORRECT"} The wrong year is not claimed.', spec).score == 100
    negated = parse_judge_reply('{"label": "CORRECT"} The answer is NOT CORRECT.', spec)
    assert not negated.ok and "negated verdict 'NOT CORRECT'" in negated.failure_reason


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            'The answer contains {"label": "CORRECT"}. My verdict: {"label": "WRONG"}',
            id="object-quoted-before-own",
        ),
        pytest.param('{"label": "CORRECT"} {"label": "WRONG"}', id="two-objects"),
    ],
)
def test_two_json_objects_that_disagree_are_unreadable_in_binary_and_templates(
    tmp_path: Path, reply: str
) -> None:
    for protocol in ("binary", _spec(tmp_path, LABEL_JSON)):
        parsed = parse_judge_reply(reply, protocol)
        assert not parsed.ok and parsed.failure_reason.startswith("conflicting verdicts")


@pytest.mark.parametrize(
    "reply, score, label",
    [
        pytest.param("incorrect", 0.0, "incorrect", id="incorrect"),
        pytest.param("INCORRECT.", 0.0, "incorrect", id="upper-case"),
        pytest.param("Correct", 100.0, "correct", id="correct"),
        pytest.param("The answer is incorrect", 0.0, "incorrect", id="in-prose"),
    ],
)
def test_labels_that_contain_each_other_match_as_whole_words(
    tmp_path: Path, reply: str, score: float, label: str
) -> None:
    parsed = parse_judge_reply(reply, _spec(tmp_path, NESTED))
    assert (parsed.ok, parsed.score, parsed.label) == (True, score, label)


def test_the_longest_label_is_read_first(tmp_path: Path) -> None:
    spec = _spec(tmp_path, HEAD + "contains: {correct: 100, not correct: 0}\n")
    assert parse_judge_reply("Not correct.", spec).score == 0.0
    assert parse_judge_reply("correct", spec).score == 100.0


def test_a_single_contains_label_keeps_the_substring_rule(tmp_path: Path) -> None:
    spec = _spec(tmp_path, HEAD + "contains: {yes: 100}\notherwise: 0\n")
    assert parse_judge_reply("Yes.", spec).score == 100.0
    assert parse_judge_reply("yes-ish", spec).score == 100.0
    assert parse_judge_reply("No.", spec).score == 0.0


def test_contains_labels_equal_without_case_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(HEAD + "contains: {Yes: 100, yes: 0}\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"^judge\.template=.*t\.yaml: contains\.yes: two labels"):
        load_template(path)


def test_an_incorrect_reply_scores_zero_through_the_judge(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(NESTED, encoding="utf-8")
    fake_anthropic.responder = lambda request: text("incorrect")
    cfg = make_judge_config(
        fake_anthropic, tmp_path, protocol="template", template=str(path), runs=1, temperature=0.0
    )
    result = run_judge(make_records(3), cfg, start_dir=tmp_path)
    assert [a.mean_score for a in result.per_question.values()] == [0.0, 0.0, 0.0]
