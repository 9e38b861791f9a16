"""A template is checked whole before any call (issue 27 §2).

Duplicate YAML keys, ``{}`` mixed with ``{1}``, a format spec that hides a field and a
``by_kind`` key that names no kind of question are each one line naming the file and the key;
``by_kind`` accepts the names the console and report show; the hint for an unmapped
placeholder never proposes the prediction for a name that is about the gold answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config, text
from judge_helpers import make_records

from locomo_exp.judge import run_judge
from locomo_exp.judge.protocols.templates import TemplateError, load_template
from locomo_exp.llm.errors import JudgeError

HEAD = "name: t\nversion: '1'\n"
USER = "user: 'Q {question} G {gold_answer} P {predicted_answer}'\n"
RULE = "contains: {yes: 100}\notherwise: 0\n"


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(body, encoding="utf-8")
    return path


BAD = [
    pytest.param(
        HEAD + USER + "json_key: label\nlabels: {CORRECT: 100, WRONG: 0}\nlabels: {CORRECT: 0}\n",
        "duplicate key 'labels' at line 6 (first at line 5)",
        id="duplicate-top-level-key",
    ),
    pytest.param(
        HEAD + USER + "contains:\n  yes: 100\n  yes: 0\n",
        "duplicate key 'yes' at line 6 (first at line 5)",
        id="duplicate-nested-key",
    ),
    pytest.param(
        HEAD + "user: 'Q {} G {1} P {2}'\n"
        "fields: {positional: [question, gold_answer, predicted_answer]}\n" + RULE,
        "user: placeholders mix {} and {1}",
        id="automatic-and-numbered-slots",
    ),
    pytest.param(
        HEAD + "user: 'Q {question} G {gold_answer:.0} P {predicted_answer}'\n" + RULE,
        "user: placeholder {gold_answer:.0} has a format spec",
        id="format-spec-hides-gold",
    ),
    pytest.param(
        HEAD + "user: 'Q {question!r} G {gold_answer} P {predicted_answer}'\n" + RULE,
        "user: placeholder {question!r} has a format spec or conversion",
        id="conversion",
    ),
    pytest.param(
        HEAD + "by_kind:\n  multihop: 'G {gold_answer} P {predicted_answer}'\n" + USER + RULE,
        "by_kind.multihop: no question has this kind (did you mean 'multi_hop'?",
        id="by-kind-typo",
    ),
]


@pytest.mark.parametrize("body, message", BAD)
def test_a_template_problem_is_one_line_naming_the_file_and_key(
    tmp_path: Path, body: str, message: str
) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(TemplateError) as raised:
        load_template(path)
    line = str(raised.value)
    assert line.startswith(f"judge.template={path}: ") and "\n" not in line
    assert message in line


def test_a_bad_by_kind_key_stops_the_judge_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    path = _write(tmp_path, HEAD + "by_kind:\n  temporl: 'G {gold_answer} P {predicted_answer}'\n"
                  + USER + RULE)  # fmt: skip
    cfg = make_judge_config(fake_anthropic, tmp_path, protocol="template", template=str(path),
                            runs=1, temperature=0.0)  # fmt: skip
    with pytest.raises(JudgeError, match=r"by_kind\.temporl: no question has this kind"):
        run_judge(make_records(2), cfg, start_dir=tmp_path)
    assert fake_anthropic.messages_requests() == []


def test_by_kind_accepts_the_names_the_console_shows(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    body = HEAD + (
        "by_kind:\n"
        "  multi_hop: 'MH G {gold_answer} P {predicted_answer}'\n"
        "  Single-Hop: 'SH G {gold_answer} P {predicted_answer}'\n"
    ) + RULE
    fake_anthropic.responder = lambda request: text("yes")
    cfg = make_judge_config(fake_anthropic, tmp_path, protocol="template",
                            template=str(_write(tmp_path, body)), runs=1, temperature=0.0)  # fmt: skip
    run_judge(make_records(4, categories=(1, 4)), cfg, start_dir=tmp_path)
    starts = sorted(r.prompt.split(" ")[0] for r in fake_anthropic.messages_requests())
    assert starts == ["MH", "MH", "SH", "SH"]


@pytest.mark.parametrize(
    "name, suggested",
    [
        pytest.param("gold", "(gold: gold_answer)", id="gold"),
        pytest.param("reference_answer", "(reference_answer: gold_answer)", id="reference"),
        pytest.param("expected", "(expected: gold_answer)", id="expected"),
        pytest.param("generated_answer", "(generated_answer: predicted_answer)", id="generated"),
        pytest.param(
            "answer",
            "(answer: <one of question, gold_answer, predicted_answer, category, "
            "category_name>)",
            id="ambiguous",
        ),
    ],
)
def test_the_unmapped_placeholder_hint_follows_the_name(
    tmp_path: Path, name: str, suggested: str
) -> None:
    path = _write(tmp_path, HEAD + f"user: 'Q {{question}} P {{predicted_answer}} G {{{name}}}'\n"
                  + RULE)  # fmt: skip
    with pytest.raises(TemplateError) as raised:
        load_template(path)
    assert f"map it in fields: {suggested}," in str(raised.value)
