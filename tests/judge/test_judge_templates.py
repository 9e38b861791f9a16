"""Judge prompts from the user's own files (``judge.protocol=template``, issue 16 §2).

The prompt texts here are this test's own words (the project ships no published prompt).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, Reply, make_judge_config, text
from judge_helpers import make_records

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import run_judge
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.protocols import protocol_spec
from locomo_exp.judge.protocols.base import escape_untrusted
from locomo_exp.judge.protocols.template import load_template_protocol
from locomo_exp.judge.protocols.templates import TemplateError, load_template
from locomo_exp.llm.errors import JudgeError
from locomo_exp.results import QARecord

YES_NO = """\
name: test-yes-no
version: "1"
user: |
  Q: {}
  Expected: {}
  Given: {}
  Does the given reply agree with the expected one? Say yes or no.
fields: {positional: [question, gold_answer, predicted_answer]}
contains: {yes: 100}
otherwise: 0
escape_untrusted: false
temperature: 0
max_tokens: 10
"""

LABEL_JSON = """\
name: test-label-json
version: 2
system: You grade short answers.
user: |
  Question: {question}
  Reference: {gold_answer}
  Candidate: {generated_answer}
  Answer with JSON {{"label": "CORRECT"}} or {{"label": "WRONG"}}.
fields: {generated_answer: predicted_answer}
response_format: json_object
json_key: label
labels: {CORRECT: 100, WRONG: 0}
"""


def _write(tmp_path: Path, body: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def _cfg(server: FakeAnthropicServer, tmp_path: Path, template: Path, **kw: object) -> JudgeConfig:
    values: dict[str, object] = {
        "protocol": "template", "template": str(template), "runs": 1, "temperature": 0.0,
    }  # fmt: skip
    values.update(kw)
    return make_judge_config(server, tmp_path, **values)


def test_a_contains_yes_template_gives_exactly_the_fakes_verdicts_and_sends_the_filled_text(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(12)
    records[3] = QARecord("conv-1:3", "Is <b> & c?", "a <tag> & more", "x > y", 4)  # raw bytes
    verdict = {r.question: ("Yes, it matches." if i % 3 else "No.") for i, r in enumerate(records)}
    expected = {r.question_id: (100.0 if i % 3 else 0.0) for i, r in enumerate(records)}

    def respond(request) -> Reply:
        question = request.prompt.split("\n", 1)[0].removeprefix("Q: ")
        return text(verdict[question])

    fake_anthropic.responder = respond
    cfg = _cfg(fake_anthropic, tmp_path, _write(tmp_path, YES_NO), max_tokens=10)
    result = run_judge(records, cfg, start_dir=tmp_path)

    assert {qid: agg.mean_score for qid, agg in result.per_question.items()} == expected
    sent = {r.prompt: r for r in fake_anthropic.messages_requests()}
    for record in records:  # the user message is the template filled here, byte for byte
        filled = (
            f"Q: {record.question}\nExpected: {record.ground_truth}\nGiven: {record.prediction}\n"
            "Does the given reply agree with the expected one? Say yes or no.\n"
        )
        assert filled.encode() in {p.encode() for p in sent}
        body = sent[filled].body
        assert "system" not in body and body["max_tokens"] == 10 and body["temperature"] == 0.0
        assert "output_config" not in body
    assert result.summary["protocol"] == "template"
    assert result.summary["template"]["sha256"] == load_template(cfg.template).sha256
    assert result.summary["krippendorff_level"] == "nominal"


def test_a_json_label_template_reads_labels_and_an_unmapped_label_is_unscored_and_counted(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(4)
    replies = ['{"label": "CORRECT"}', '{"label": "WRONG"}', '{"label": "PARTIAL"}', "```json\n{\"label\": \"correct\"}\n```"]
    fake_anthropic.responder = lambda request: text(replies[int(request.prompt.split("week ")[1][0])])
    template = _write(tmp_path, LABEL_JSON)
    result = run_judge(records, _cfg(fake_anthropic, tmp_path, template), start_dir=tmp_path)

    scores = [result.per_question[r.question_id].mean_score for r in records]
    assert scores == [100.0, 0.0, None, 100.0]
    [failed] = result.per_question[records[2].question_id].runs
    assert failed.outcome == "parse_failure"
    assert "'PARTIAL' is not one the template maps (CORRECT, WRONG)" in failed.error
    assert result.summary["counts"]["parse_failure"] == 1
    [request] = [r for r in fake_anthropic.messages_requests() if "week 0" in r.prompt]
    assert request.body["system"] == "You grade short answers."
    assert request.prompt == (
        "Question: What did Ann do in week 0?\nReference: She painted picture 0\n"
        'Candidate: Ann painted picture number 0\nAnswer with JSON {"label": "CORRECT"} or '
        '{"label": "WRONG"}.\n'
    )


def test_on_unparsed_score_counts_unreadable_replies_as_the_harness_did(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    body = LABEL_JSON + "on_unparsed: {score: 0}\n"
    fake_anthropic.responder = lambda request: text("I cannot decide.")
    result = run_judge(
        make_records(3), _cfg(fake_anthropic, tmp_path, _write(tmp_path, body)), start_dir=tmp_path
    )
    assert [a.mean_score for a in result.per_question.values()] == [0.0, 0.0, 0.0]
    # a scored unreadable reply is still a parse failure (trial 5 finding 3), never "valid"
    assert result.summary["counts"]["unparsed_scored"] == 3
    assert result.summary["counts"]["parse_failure"] == 3
    assert result.summary["counts"]["valid"] == 0
    assert result.summary["template"]["on_unparsed"] == "score 0"
    assert result.finished_status(0.1) == "ok"  # scored as asked; the checks warn
    from locomo_exp.tracking.metrics import judge_metrics

    metrics = judge_metrics(result.summary, {})
    assert metrics["judge/unparsed_scored"] == 3
    assert metrics["judge/parse_failures"] == 3
    assert metrics["judge/valid_runs"] == 0


def test_the_template_sha256_is_in_the_cache_key_so_two_templates_never_share_replies(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda request: text("yes")
    a = _write(tmp_path, YES_NO, "a.yaml")
    b = _write(tmp_path, YES_NO.replace("Say yes or no.", "Reply yes or no."), "b.yaml")
    records = make_records(3)
    run_judge(records, _cfg(fake_anthropic, tmp_path, a), start_dir=tmp_path)
    run_judge(records, _cfg(fake_anthropic, tmp_path, a), start_dir=tmp_path)  # all cached
    assert len(fake_anthropic.messages_requests()) == 3
    run_judge(records, _cfg(fake_anthropic, tmp_path, b), start_dir=tmp_path)
    assert len(fake_anthropic.messages_requests()) == 6
    # the same text under another file name is the same template: cached
    c = _write(tmp_path, YES_NO, "c.yaml")
    run_judge(records, _cfg(fake_anthropic, tmp_path, c), start_dir=tmp_path)
    assert len(fake_anthropic.messages_requests()) == 6


def test_by_kind_chooses_the_text_per_category_and_a_missing_kind_fails_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    body = """\
name: kinds
version: "1"
by_kind:
  temporal: "Dates must match. {question} | {gold_answer} | {predicted_answer}"
  "4": "One fact. {question} | {gold_answer} | {predicted_answer}"
contains: {yes: 100}
otherwise: 0
"""
    fake_anthropic.responder = lambda request: text("yes")
    path = _write(tmp_path, body)
    records = make_records(4, categories=(2, 4))
    run_judge(records, _cfg(fake_anthropic, tmp_path, path), start_dir=tmp_path)
    starts = sorted(r.prompt.split(".")[0] for r in fake_anthropic.messages_requests())
    assert starts == ["Dates must match", "Dates must match", "One fact", "One fact"]
    fake_anthropic.clear()
    with pytest.raises(JudgeError, match=r"no user text for kind '1' \(2 question"):
        run_judge(make_records(4, categories=(1, 2)), _cfg(fake_anthropic, tmp_path, path), start_dir=tmp_path)
    assert fake_anthropic.messages_requests() == []


def test_longmemeval_kinds_abstention_first_then_question_type() -> None:
    from locomo_exp.judge.protocols.template import record_kinds

    assert record_kinds(1, "temporal-reasoning", "abstention") == ["abstention", "temporal-reasoning", "1", "multi-hop"]
    assert record_kinds(1, "temporal-reasoning", "temporal-reasoning") == ["temporal-reasoning", "1", "multi-hop"]
    assert record_kinds(4) == ["4", "single-hop"]


def test_escape_untrusted_true_escapes_each_placed_answer(tmp_path: Path) -> None:
    spec = load_template_protocol(_write(tmp_path, YES_NO.replace("escape_untrusted: false", "")))
    prompt = spec.build_prompt("a<b", "c & d", "</x>", 1)
    assert prompt.startswith(f"Q: {escape_untrusted('a<b')}\nExpected: c &amp; d\nGiven: &lt;/x&gt;\n")


@pytest.mark.parametrize(
    "reply, expected",
    [
        pytest.param("Yes.", 100.0, id="yes"),
        pytest.param("NO, and yes is wrong", 100.0, id="first-listed-substring-wins"),
        pytest.param("no", 0.0, id="otherwise"),
    ],
)
def test_contains_reads_the_lower_cased_reply(tmp_path: Path, reply: str, expected: float) -> None:
    spec = load_template_protocol(_write(tmp_path, YES_NO))
    assert parse_judge_reply(reply, spec).score == expected


def test_regex_and_score_range_rules(tmp_path: Path) -> None:
    body = LABEL_JSON.replace("json_key: label\nlabels: {CORRECT: 100, WRONG: 0}\n", "")
    spec = load_template_protocol(_write(tmp_path, body + 'regex: "Grade: (\\\\d+)"\nscore_range: [0, 5]\n'))
    assert parse_judge_reply("Reasoning... Grade: 4", spec).score == 80.0
    failed = parse_judge_reply("Grade: 7", spec)
    assert not failed.ok and "outside the template's range [0, 5]" in failed.failure_reason
    assert not parse_judge_reply("no grade here", spec).ok
    scored = load_template_protocol(_write(tmp_path, LABEL_JSON.replace("labels: {CORRECT: 100, WRONG: 0}", "score_range: [1, 10]"), "s.yaml"))
    assert parse_judge_reply('{"label": 10}', scored).score == 100.0
    assert scored.krippendorff_level == "interval"


NAMED = "name: x\nversion: 1\n"
"""The start of a template that has a name and a version."""
FULL_USER = "user: '{question} {gold_answer} {predicted_answer}'\n"
"""A user text that places all three fields."""
YES_RULE = "contains: {yes: 100}\n"


BAD = [
    pytest.param(FULL_USER + YES_RULE, "missing 'name'", id="no-name"),
    pytest.param(NAMED + YES_RULE, "missing 'user'", id="no-user"),
    pytest.param(
        NAMED + "user: '{question} {gold_answer} {generated_answer}'\n" + YES_RULE,
        "user: unmapped placeholder {generated_answer}",
        id="unknown-placeholder",
    ),
    pytest.param(NAMED + FULL_USER, "no verdict rule", id="no-verdict-rule"),
    pytest.param(
        NAMED + FULL_USER + YES_RULE + "json_key: label\nlabels: {A: 1}\n",
        "give one verdict rule, not json_key and contains",
        id="two-rules",
    ),
    pytest.param(
        NAMED + "user: '{question}'\n" + YES_RULE,
        "user does not place gold_answer or predicted_answer",
        id="no-answer-fields",
    ),
    pytest.param(
        NAMED + "user: '{} {} {}'\n" + YES_RULE,
        "positional placeholder {} (slot 0) has no field",
        id="unmapped-positional",
    ),
    pytest.param(NAMED + FULL_USER + "json_key: label\n", "give labels", id="json-key-without-labels"),
    pytest.param(
        NAMED + FULL_USER + YES_RULE + "lables: {}\n",
        "unknown key 'lables' (did you mean 'labels'?)",
        id="unknown-key",
    ),
    pytest.param(
        NAMED + "user: 'Reply {\"label\": x} {question} {gold_answer} {predicted_answer}'\n"
        "contains: {yes: 1}\n",
        'unmapped placeholder {"label"}',
        id="single-braces-in-json-example",
    ),
    pytest.param("- a\n- b\n", "must be a YAML map", id="not-a-map"),
    pytest.param("name: [\n", "is not valid YAML at line 2", id="not-yaml"),
]


@pytest.mark.parametrize("body, message", BAD)
def test_a_bad_template_is_one_line_naming_the_file(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(TemplateError) as raised:
        load_template(path)
    line = str(raised.value)
    assert line.startswith(f"judge.template={path}: ") and message in line and "\n" not in line


def test_a_bad_template_stops_the_judge_before_any_call(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    path = _write(tmp_path, "name: x\nversion: 1\nuser: '{question} {gold_answer} {answer}'\ncontains: {yes: 1}\n")
    with pytest.raises(JudgeError, match=r"unmapped placeholder \{answer\}"):
        run_judge(make_records(2), _cfg(fake_anthropic, tmp_path, path), start_dir=tmp_path)
    assert fake_anthropic.messages_requests() == []
    assert not (tmp_path / "judge_cache.sqlite").exists()


def test_protocol_and_template_must_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs judge.template=FILE.yaml"):
        protocol_spec(JudgeConfig(protocol="template"))
    with pytest.raises(ValueError, match="add judge.protocol=template"):
        protocol_spec(JudgeConfig(template=str(_write(tmp_path, YES_NO))))


def test_yes_and_no_are_words_not_booleans(tmp_path: Path) -> None:
    template = load_template(_write(tmp_path, YES_NO.replace("{yes: 100}", "{yes: 100, no: 0, on: 50}")))
    assert template.rule.contains == (("yes", 100.0), ("no", 0.0), ("on", 50.0))
    assert json.dumps(template.fixed) == '{"temperature": 0.0, "max_tokens": 10}'


def test_templates_named_on_the_command_line_are_checked_before_hydra(tmp_path: Path, capsys) -> None:
    from locomo_exp.cli import check_command_line

    good = _write(tmp_path, YES_NO, "good.yaml")
    bad = _write(tmp_path, "name: x\nversion: 1\nuser: '{q} {gold_answer} {predicted_answer}'\ncontains: {yes: 1}\n", "bad.yaml")
    check_command_line([f"judge.template={good}", "judge.protocol=template"])
    with pytest.raises(SystemExit) as raised:
        check_command_line(["-m", f"judge.template={good},{bad}"])
    assert raised.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err == f"error: judge.template={bad}: user: unmapped placeholder {{q}}; use one of " + (
        "{question}, {gold_answer}, {predicted_answer}, {category}, {category_name}, map it in "
        "fields: (q: question), or write literal braces as {{ }}"
    )


def test_the_templates_settings_apply_unless_the_command_line_sets_them(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from locomo_exp.judge.protocols.templates.settings import apply_template_settings

    path = _write(tmp_path, YES_NO)
    cfg = OmegaConf.create({"judge": {"protocol": "template", "template": str(path),
                                      "model": "claude-sonnet-4-6", "temperature": 0.5, "max_tokens": 256}})  # fmt: skip
    assert apply_template_settings(cfg, ["judge.temperature=0.3"]) == {"max_tokens": 10}
    assert (cfg.judge.temperature, cfg.judge.max_tokens) == (0.5, 10)  # temperature left as composed
    fixed_model = _write(tmp_path, YES_NO + "model: gpt-4o-2024-08-06\n", "m.yaml")
    cfg.judge.template = str(fixed_model)
    with pytest.raises(TemplateError, match="fixes model gpt-4o-2024-08-06, the judge is claude-sonnet-4-6; add judge"):
        apply_template_settings(cfg, [])
    assert apply_template_settings(cfg, ["judge=sonnet-4-6"]) == {"temperature": 0.0, "max_tokens": 10}


def test_the_shipped_examples_load_by_name_with_the_harnesses_settings() -> None:
    from locomo_exp.benchmarks.longmemeval.facts import ABSTENTION_KIND, QUESTION_TYPES
    from locomo_exp.judge.protocols.templates.schema import shipped_templates

    assert shipped_templates() == ["binary-label-own-words", "yes-no-by-kind-own-words"]
    binary = load_template("binary-label-own-words")
    assert binary.fixed == {"temperature": 0.0, "model": "gpt-4o-mini-2024-07-18"}
    assert (binary.response_format, binary.rule.json_key, dict(binary.rule.labels)) == (
        "json_object", "label", {"CORRECT": 100.0, "WRONG": 0.0})  # fmt: skip
    yes_no = load_template("yes-no-by-kind-own-words")
    assert yes_no.fixed == {"temperature": 0.0, "max_tokens": 10, "model": "gpt-4o-2024-08-06"}
    assert set(yes_no.by_kind) == {*QUESTION_TYPES, ABSTENTION_KIND} and yes_no.user is None
    assert yes_no.rule.contains == (("yes", 100.0),) and yes_no.rule.otherwise == 0.0
    with pytest.raises(TemplateError, match="shipped examples: binary-label-own-words, yes-no"):
        load_template("no-such-template")


def test_the_reply_format_is_provider_neutral_and_openai_maps_it(fake_openai, tmp_path: Path) -> None:
    from fake_openai import openai_judge_config

    fake_openai.responder = lambda request: text('{"label": "CORRECT"}')
    records = make_records(2)
    cfg = openai_judge_config(
        fake_openai, tmp_path, protocol="template", template="binary-label-own-words",
        temperature=0.0, runs=1,
    )  # fmt: skip
    result = run_judge(records, cfg, start_dir=tmp_path)
    assert [a.mean_score for a in result.per_question.values()] == [100.0, 100.0]
    bodies = [r.body for r in fake_openai.messages_requests()]
    assert {json.dumps(b["response_format"]) for b in bodies} == {'{"type": "json_object"}'}
    assert {b["model"] for b in bodies} == {"gpt-4o-mini-2024-07-18"}
    assert all([m["role"] for m in b["messages"]] == ["user"] for b in bodies)  # no system text

    schema_file = _write(tmp_path, LABEL_JSON.replace("json_object", "json_schema"), "schema.yaml")
    fake_openai.clear()
    run_judge(records, openai_judge_config(fake_openai, tmp_path, protocol="template",
              template=str(schema_file), runs=1), start_dir=tmp_path)  # fmt: skip
    formats = [r.body["response_format"] for r in fake_openai.messages_requests()]
    assert formats[0]["type"] == "json_schema"
    assert formats[0]["json_schema"]["schema"] == {
        "type": "object", "properties": {"label": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
        "required": ["label"], "additionalProperties": False,
    }  # fmt: skip


def test_category_name_is_the_longmemeval_question_type_when_the_record_has_one(tmp_path: Path) -> None:
    body = YES_NO.replace("Q: {}", "Q: {} [{category_name}]")
    spec = load_template_protocol(_write(tmp_path, body))
    lme = QARecord("q1_abs", "When?", "never said", "I do not know", 3, question_type="temporal-reasoning")
    assert spec.build_record_prompt(lme).startswith("Q: When? [temporal-reasoning]\n")
    locomo = QARecord("conv-1:0", "When?", "May", "May", 2)
    assert spec.build_record_prompt(locomo).startswith("Q: When? [temporal]\n")
