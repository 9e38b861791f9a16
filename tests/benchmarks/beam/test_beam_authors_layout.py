"""The BEAM authors' layout: answers in the probing file's order, the probing file as
data.reference (a file, or a folder of them). The probing file is read where it lies; the
answers are invented and written in the test's own directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from beam_helpers import PROBING_100K, config

from locomo_exp.benchmarks import plugin_for
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.data.input_file import DataValidationError

pytestmark = pytest.mark.skipif(not PROBING_100K.is_file(),
                                reason=f"shared BEAM data not found at {PROBING_100K}")

ITEMS_PER_ABILITY = {  # the data README's count of this chat's rubric items
    "abstention": 2, "contradiction_resolution": 8, "event_ordering": 8,
    "information_extraction": 7, "instruction_following": 2, "knowledge_update": 2,
    "multi_session_reasoning": 6, "preference_following": 4, "summarization": 10,
    "temporal_reasoning": 4,
}


def answers(tmp_path: Path, edit: Any = None) -> Path:
    probing = json.loads(PROBING_100K.read_text(encoding="utf-8"))
    out = {ability: [{"question": q["question"], "llm_response": f"invented answer {i}"}
                     for i, q in enumerate(qs)] for ability, qs in probing.items()}
    if edit is not None:
        edit(out)
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(out), encoding="utf-8")
    return path


def test_answers_with_the_probing_file_are_read_with_no_options(tmp_path: Path) -> None:
    cfg = config(answers(tmp_path), reference=str(PROBING_100K))
    assert plugin_for(cfg, tmp_path) is not None
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    assert result.summary["input"]["layout"] == "beam-authors"
    assert (result.summary["input"]["questions"], result.summary["input"]["rubric_items"]) == (
        20, 53)
    assert result.summary["figures"] == {}
    assert result.summary["status"]["scoring"].startswith("not measured")
    rows = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    per: dict[str, int] = {}
    for row in rows:
        per[row["ability"]] = per.get(row["ability"], 0) + row["rubric_items"]
        assert row["beam-nugget"] is None
    assert per == ITEMS_PER_ABILITY
    assert "Scores: not measured" in "\n".join(result.console)


def test_a_folder_reference_finds_the_chat_and_names_questions_as_mem0_does(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "chats" / "100K" / "1" / "probing_questions"
    folder.mkdir(parents=True)
    (folder / "probing_questions.json").symlink_to(PROBING_100K)
    cfg = config(answers(tmp_path), reference=str(tmp_path / "chats"))
    result = run_beam(cfg, tmp_path / "out", tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert rows[0]["question_id"] == "100K_0_q0_abstention"
    assert rows[19]["question_id"].startswith("100K_0_q19_")
    assert result.summary["input"]["chats"] == 1


def swap_first_two(out: dict[str, Any]) -> None:
    out["summarization"].reverse()


def drop_response(out: dict[str, Any]) -> None:
    del out["knowledge_update"][1]["llm_response"]


@pytest.mark.parametrize(("edit", "expected"), [
    pytest.param(swap_first_two, "record [\"summarization\"][0]: field 'question': differs from "
                 "question 0", id="out-of-order"),
    pytest.param(drop_response, "record [\"knowledge_update\"][1]: field 'llm_response': missing",
                 id="no-llm-response"),
])
def test_a_bad_answer_is_one_line_naming_file_record_and_field(
    tmp_path: Path, edit: Any, expected: str
) -> None:
    path = answers(tmp_path, edit)
    with pytest.raises(DataValidationError) as caught:
        run_beam(config(path, reference=str(PROBING_100K)), tmp_path / "out", tmp_path)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"{path}: {expected}")
    assert not list((tmp_path / "out").iterdir())


def test_answers_without_a_reference_ask_for_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="add data.reference=<probing_questions.json"):
        run_beam(config(answers(tmp_path)), tmp_path / "out", tmp_path)


def test_the_probing_file_given_as_answers_says_how_to_use_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is a BEAM probing-questions file .*data.reference"):
        run_beam(config(PROBING_100K), tmp_path / "out", tmp_path)
