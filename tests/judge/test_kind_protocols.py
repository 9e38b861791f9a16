"""The per-kind protocol base: a prompt per kind chosen by the kind string, one verdict shape.

Issue 26 §1: question kinds travel as the benchmark's own keys; the integer the engine groups
and caches by is the kind's position in the protocol's kinds, the same ids the plug-ins used
before (so their cached verdicts are still hit).
"""

from __future__ import annotations

import pytest

from locomo_exp.benchmarks.beam import judge_prompts as beam
from locomo_exp.benchmarks.locomo_plus.protocol import LOCOMO_PLUS
from locomo_exp.judge.parsing import parse_judge_reply
from locomo_exp.judge.protocols.binary import BINARY, LABEL_SHAPE
from locomo_exp.judge.protocols.kinds import KindProtocol
from locomo_exp.judge.protocols.rubric import RUBRIC, SCORE_SHAPE
from locomo_exp.judge.protocols.shape import YES_NO
from locomo_exp.results import QARecord


def _render(question: str, gold: str | None, prediction: str, kind: str) -> str:
    return f"[{kind}] {question} | {gold} | {prediction}"


TINY = YES_NO.protocol(KindProtocol, name="tiny", prompt_version="tiny-v1", system_prompt="S",
                       reply_format="yes or no", kinds=("recall", "update"), render=_render)


def _record(qid: str, *, kind: str | None = None, question_type: str | None = None,
            category: int = 0) -> QARecord:
    return QARecord(qid, "Q?", "G", "P", category, question_type=question_type, kind=kind)


def test_the_prompt_is_chosen_by_the_kind_string_whatever_the_category():
    assert TINY.build_record_prompt(_record("a", kind="update", category=1)) == "[update] Q? | G | P"
    # no kind of its own: the question_type chooses
    assert TINY.build_record_prompt(_record("b", question_type="recall", category=2)) == (
        "[recall] Q? | G | P"
    )
    # kind first: a sub-kind of any type (an abstention question of a type, say)
    assert TINY.build_record_prompt(_record("c", kind="update", question_type="recall")) == (
        "[update] Q? | G | P"
    )


def test_engine_ids_are_positions_in_kinds():
    assert TINY.kind_ids == {1: "recall", 2: "update"}
    assert TINY.kind_id("update") == 2
    assert TINY.build_prompt("Q?", "G", "P", 2) == "[update] Q? | G | P"
    with pytest.raises(ValueError, match=r"protocol tiny: no kind 'x' \(kinds: recall, update\)"):
        TINY.kind_id("x")
    with pytest.raises(ValueError, match="protocol tiny: no kind has engine id 3"):
        TINY.build_prompt("Q?", "G", "P", 3)


def test_a_record_without_a_kind_of_the_protocol_is_named_in_one_line():
    records = [_record("ok", kind="recall"), _record("q7", question_type="bogus"), _record("q8")]
    assert TINY.record_problems(records) == [
        "protocol tiny: record q7 has kind 'bogus', not one of recall, update (2 record(s))"
    ]
    with pytest.raises(ValueError, match="record q8 has kind None"):
        TINY.build_record_prompt(records[2])


def test_the_shape_reads_the_verdict():
    assert TINY.verdict_field == "verdict" and TINY.krippendorff_level == "nominal"
    assert parse_judge_reply('{"verdict": "yes"}', TINY).score == 100.0
    assert parse_judge_reply("No.", TINY).score == 0.0


@pytest.mark.parametrize(
    ("spec", "shape"),
    [pytest.param(RUBRIC, SCORE_SHAPE, id="rubric"), pytest.param(BINARY, LABEL_SHAPE, id="binary")],
)
def test_fixed_protocols_are_their_shape_plus_prompts(spec, shape):
    assert (spec.verdict_field, spec.output_schema, spec.read, spec.bare, spec.label_scores) == (
        shape.verdict_field, shape.output_schema, shape.read, shape.bare, shape.label_scores
    )
    assert spec.kind_ids == {} and spec.by_name


def test_the_plugins_engine_ids_are_those_their_cache_keys_hold():
    # the codes LoCoMo-Plus and BEAM carried before kinds travelled as strings (b9434f1)
    assert LOCOMO_PLUS.kind_ids == {
        1: "multi-hop", 2: "temporal", 3: "common-sense", 4: "single-hop", 5: "adversarial",
        6: "Cognitive",
    }  # fmt: skip
    abilities = (
        "abstention", "contradiction_resolution", "event_ordering", "information_extraction",
        "instruction_following", "knowledge_update", "multi_session_reasoning",
        "preference_following", "summarization", "temporal_reasoning",
    )  # fmt: skip
    for spec in (beam.NUGGET_ITEM, beam.OFFICIAL_ITEM, beam.STRICT_ITEM, beam.ALIGN):
        assert spec.kind_ids == {i + 1: a for i, a in enumerate(abilities)}
        assert not spec.by_name
    assert beam.ability_id("event_ordering") == 3
