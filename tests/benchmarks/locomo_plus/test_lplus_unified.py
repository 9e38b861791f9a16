"""The unified 2,387-item set, built as the authors' ``unified_input.py`` does (item i into
conversation i mod 10), checked on the real files and on invented ones."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import SHARED_DATA

from locomo_exp.benchmarks.locomo_plus.unified import build_unified
from locomo_exp.data.input_file import DataValidationError

PLUS = SHARED_DATA / "locomo_plus"


@pytest.fixture
def real_files() -> tuple[Path, Path]:
    files = (PLUS / "locomo_plus.json", SHARED_DATA / "locomo10.json")
    if not all(f.is_file() for f in files):
        pytest.skip(f"LoCoMo-Plus files not found in {SHARED_DATA} (read-only shared/ folder)")
    return files


def test_the_real_unified_set_has_2387_items_with_the_published_counts(real_files) -> None:
    items = build_unified(*real_files)
    assert len(items) == 2387
    assert Counter(i.category for i in items) == {
        "multi-hop": 282, "temporal": 321, "common-sense": 96, "single-hop": 841,
        "adversarial": 446, "Cognitive": 401}
    cognitive = [i for i in items if i.category == "Cognitive"]
    assert Counter(i.relation for i in cognitive) == {
        "causal": 101, "state": 100, "goal": 100, "value": 100}
    assert [i.conversation for i in cognitive] == [k % 10 for k in range(401)]
    assert [i.index for i in items] == list(range(2387))
    assert items[:1986] == [i for i in items if i.category != "Cognitive"]  # LoCoMo first


def test_cognitive_evidence_matches_the_authors_and_kumihos_own_files(real_files) -> None:
    cognitive = [i for i in build_unified(*real_files) if i.category == "Cognitive"]
    authors = json.loads((PLUS / "authors_run" / "judged.json").read_text(encoding="utf-8"))
    their_cognitive = [r for r in authors if r["category"] == "Cognitive"]
    # the authors' earlier 254-item set opens with the same two items: same speakers, same text
    assert [i.evidence for i in cognitive[:2]] == [r["evidence"] for r in their_cognitive[:2]]
    assert cognitive[1].evidence.startswith("Jon：")  # item 1 -> conversation 1 (Jon, Gina)
    kumiho = json.loads((PLUS / "kumiho" / "all_results.json").read_text(encoding="utf-8"))
    kumiho.sort(key=lambda r: int(r["question_id"].removeprefix("cog-")))  # cog-<item index>
    assert [r["metadata"]["base_conv_idx"] for r in kumiho] == [i.conversation for i in cognitive]
    assert [r["ground_truth"] for r in kumiho] == [
        i.evidence.replace("：", ": ") for i in cognitive]


def _write(tmp_path: Path, cognitive: list[dict]) -> tuple[Path, Path]:
    locomo = [
        {"sample_id": f"s{c}", "conversation": {"speaker_a": f"Ann{c}", "speaker_b": f"Bo{c}"},
         "qa": [{"question": "Where did Ann go?", "answer": 1999, "category": 2},
                {"question": "Which pet?", "adversarial_answer": "a cat", "category": 5}]}
        for c in range(3)
    ]
    plus, ref = tmp_path / "plus.json", tmp_path / "locomo.json"
    plus.write_text(json.dumps(cognitive), encoding="utf-8")
    ref.write_text(json.dumps(locomo), encoding="utf-8")
    return plus, ref


def test_items_go_round_the_conversations_with_their_speakers(tmp_path: Path) -> None:
    cue = {"relation_type": "goal", "cue_dialogue": "A: I want to run a marathon.\nB: Go for it.",
           "trigger_query": "A: My knees hurt.", "time_gap": "a month later"}
    items = build_unified(*_write(tmp_path, [cue] * 4))
    assert len(items) == 6 + 4
    assert (items[0].category, items[0].ground_truth, items[1].ground_truth) == (
        "temporal", "1999", "")
    cognitive = items[6:]
    assert [i.conversation for i in cognitive] == [0, 1, 2, 0]
    assert [i.sample_id for i in cognitive] == ["s0", "s1", "s2", "s0"]
    assert cognitive[1].evidence == "Ann1：I want to run a marathon.\nBo1：Go for it."
    assert (cognitive[1].question, cognitive[1].time_gap) == ("A: My knees hurt.", "a month later")


def test_a_cue_line_without_a_speaker_is_one_line_naming_file_record_and_field(
        tmp_path: Path) -> None:
    good = {"relation_type": "goal", "cue_dialogue": "A: x\nB: y", "trigger_query": "A: z"}
    bad = {**good, "cue_dialogue": "Narrator says hello"}
    plus, ref = _write(tmp_path, [good, bad])
    with pytest.raises(DataValidationError) as caught:
        build_unified(plus, ref)
    message = str(caught.value)
    assert "\n" not in message
    assert str(plus) in message and "record [1]" in message and "cue_dialogue" in message
