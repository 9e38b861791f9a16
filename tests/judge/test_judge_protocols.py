"""One spec per judge protocol: registry, Krippendorff level, label map, parse rules."""

from __future__ import annotations

import pytest

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.preflight import check_config
from locomo_exp.judge.protocols import PROTOCOLS, available_protocols, get_protocol
from locomo_exp.llm.errors import JudgeError
from locomo_exp.scoring.summary import judge_reliability


def test_registry_lists_protocols_sorted_and_unknown_names_fail_lm_eval_style() -> None:
    assert available_protocols() == ["binary", "locomo_plus", "longmemeval", "rubric", "template"]
    with pytest.raises(ValueError) as raised:
        get_protocol("x")
    assert str(raised.value) == "unknown judge protocol 'x'. Available: binary, locomo_plus, longmemeval, rubric, template"


@pytest.mark.parametrize(
    "name, level, field, labels",
    [
        pytest.param("rubric", "interval", "score", {}, id="rubric"),
        pytest.param(
            "binary", "nominal", "label", {"CORRECT": 100.0, "WRONG": 0.0, "INCORRECT": 0.0},
            id="binary",
        ),
    ],
)
def test_each_spec_carries_its_level_verdict_field_and_label_map(
    name: str, level: str, field: str, labels: dict[str, float]
) -> None:
    spec = PROTOCOLS[name]
    assert spec.name == name
    assert spec.krippendorff_level == level
    assert spec.verdict_field == field
    assert dict(spec.label_scores) == labels
    assert spec.output_schema["required"] == [field, "explanation"]
    assert spec.build_prompt("q", "a", "p", 1).endswith(spec.reply_format)


def test_reliability_takes_its_level_from_the_protocol_spec() -> None:
    rows = [
        {"j_runs": [{"run": 0, "outcome": "valid", "score": s}, {"run": 1, "outcome": "valid", "score": s}]}
        for s in (0.0, 100.0, 100.0)
    ]
    assert judge_reliability(rows, "binary")["level"] == "nominal"
    assert judge_reliability(rows, "rubric")["level"] == "interval"
    assert judge_reliability(rows, "rubric")["unanimous_share"] == 1.0


def test_an_unknown_protocol_in_the_config_fails_before_any_call(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with pytest.raises(JudgeError, match="unknown judge protocol 'likert'. Available: binary, locomo_plus, longmemeval, rubric, template"):
        check_config(JudgeConfig(protocol="likert"))


@pytest.mark.parametrize(
    "reply, protocol, score, label",
    [
        pytest.param('{"label": "correct", "explanation": "x"}', "binary", 100.0, "CORRECT", id="binary-json"),
        pytest.param('{"label": "INCORRECT"}', "binary", 0.0, "WRONG", id="binary-incorrect-is-wrong"),
        pytest.param('{"score": "8.5/10"}', "rubric", 85.0, None, id="rubric-over-10"),
        pytest.param('{"label": "CORRECT", "explanation": "cut', "binary", 100.0, "CORRECT", id="binary-salvaged"),
    ],
)
def test_parser_reads_the_verdict_through_the_spec(
    reply: str, protocol: str, score: float, label: str | None
) -> None:
    parsed = parse_judge_reply(reply, protocol)
    assert (parsed.ok, parsed.score, parsed.label) == (True, score, label)


def test_a_parse_failure_is_unscored_with_a_reason_never_a_number() -> None:
    parsed = parse_judge_reply('{"label": "MAYBE"}', "binary")
    assert (parsed.ok, parsed.score, parsed.failure_reason) == (
        False, None, "label 'MAYBE' is not CORRECT or WRONG"
    )
