"""Every data reader names the record as the user finds it: ``line 7`` in JSON Lines, ``[6]`` in JSON.

A JSON Lines row is named by its 1-based line as editors number lines (blank lines count,
so row 2 can be on line 4); a JSON list's record by its 0-based index (and its sample or
question id where there is one). Each error is one line naming the file, the record and
the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lme_helpers import dataset_item, write_json

from locomo_exp.benchmarks.longmemeval.answers import read_lme_answers
from locomo_exp.data import DataValidationError, load_results
from locomo_exp.data.input_file import ParsedFile, read_results_file
from locomo_exp.data.reference import Reference


def _jsonl_with_blank_line(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Rows 0 and 1 on lines 1 and 2, a blank line 3, the rest from line 4 on."""
    lines = [json.dumps(row) for row in rows]
    path.write_text("\n".join([*lines[:2], "", *lines[2:]]) + "\n", encoding="utf-8")
    return path


def _error(read: Any, path: Path) -> str:
    with pytest.raises(DataValidationError) as refused:
        read(path)
    message = str(refused.value)
    assert "\n" not in message
    return message


LME_ROWS = [
    {"question_id": "q1", "hypothesis": "a"},
    {"question_id": "q2", "hypothesis": "b"},
    {"question_id": "q3", "hypothesis": 5},
]
LOCOMO_ROWS = [  # the qa_results layout (the example's)
    {"question_id": str(n), "question": f"Q{n}?", "ground_truth": "x", "predicted_answer": "y",
     "category": category}
    for n, category in ((1, 1), (2, 2), (3, "zz"))
]


def test_a_json_lines_row_is_named_by_the_line_an_editor_shows() -> None:
    parsed = ParsedFile(Path("f.jsonl"), [{}, {}, {}], "", 0, lines=(1, 2, 4))
    assert [parsed.where(i) for i in range(3)] == ["line 1", "line 2", "line 4"]
    assert parsed.relabel("[2].qa[5] (sample_id=conv-26)") == "line 4, qa[5] (sample_id=conv-26)"
    assert parsed.relabel("[1]") == "line 2"
    assert parsed.relabel('["conv-1"][0]') == '["conv-1"][0]'  # not a row of the list
    plain = ParsedFile(Path("f.json"), [{}, {}], "", 0)
    assert (plain.where(1), plain.relabel("[1]")) == ("[1]", "[1]")


def test_read_results_file_keeps_the_line_of_each_row(tmp_path: Path) -> None:
    parsed = read_results_file(_jsonl_with_blank_line(tmp_path / "h.jsonl", LME_ROWS))
    assert parsed.lines == (1, 2, 4)
    assert read_results_file(write_json(tmp_path / "h.json", LME_ROWS)).lines is None


def test_longmemeval_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = _jsonl_with_blank_line(tmp_path / "h.jsonl", LME_ROWS)
    assert _error(read_lme_answers, path) == f"{path}: line 4: field 'hypothesis': is 5, not text"


def test_longmemeval_json_errors_name_the_index(tmp_path: Path) -> None:
    path = write_json(tmp_path / "h.json", LME_ROWS)
    assert _error(read_lme_answers, path) == (
        f"{path}: record [2]: field 'hypothesis': is 5, not text"
    )


def test_longmemeval_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    rows = [*LME_ROWS[:2], {"question_id": "q1", "hypothesis": "c"}]
    path = _jsonl_with_blank_line(tmp_path / "h.jsonl", rows)
    assert _error(read_lme_answers, path) == (
        f"{path}: line 4: field 'question_id': duplicate question id 'q1' (first at line 1)"
    )


def test_longmemeval_label_on_some_rows_names_the_first_line_without(tmp_path: Path) -> None:
    label = {"model": "m", "label": True}
    rows = [{**row, "hypothesis": "x", "autoeval_label": label} for row in LME_ROWS]
    del rows[2]["autoeval_label"]
    path = _jsonl_with_blank_line(tmp_path / "h.jsonl", rows)
    assert _error(read_lme_answers, path).startswith(
        f"{path}: line 4: field 'autoeval_label': is missing while 2 other row(s) have one"
    )


def test_locomo_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = _jsonl_with_blank_line(tmp_path / "r.jsonl", LOCOMO_ROWS)
    assert _error(load_results, path).startswith(
        f"{path}: line 4: field 'category': unknown category 'zz' (expected 1-5 or one of "
    )
    json_path = write_json(tmp_path / "r.json", LOCOMO_ROWS)
    assert _error(load_results, json_path).startswith(
        f"{json_path}: record [2]: field 'category': unknown category 'zz'"
    )


def test_locomo_jsonl_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    rows = [*LOCOMO_ROWS[:2], {**LOCOMO_ROWS[0], "category": 3}]
    path = _jsonl_with_blank_line(tmp_path / "r.jsonl", rows)
    assert _error(load_results, path).startswith(
        f"{path}: line 4: field 'question_id': duplicate question id '1' (first at line 1)"
    )


def test_locomo_samples_as_jsonl_name_the_line_and_the_question(tmp_path: Path) -> None:
    qa = {"question": "Q?", "answer": "x", "mem0_prediction": "y", "category": 1}
    samples = [
        {"sample_id": "conv-1", "qa": [qa]},
        {"sample_id": "conv-2", "qa": [qa]},
        {"sample_id": "conv-3", "qa": [qa, {**qa, "category": 9}]},
    ]
    path = _jsonl_with_blank_line(tmp_path / "s.jsonl", samples)
    assert _error(load_results, path).startswith(
        f"{path}: line 4, qa[1] (sample_id=conv-3): field 'category': "
    )


def test_a_reference_sample_without_qa_names_the_record_and_field(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "ref.json",
        [{"sample_id": "conv-1", "qa": []}, {"sample_id": "conv-2", "qa": "none"}],
    )
    assert _error(Reference, path) == (
        f"{path}: record [1] (sample_id=conv-2): field 'qa': is not a list; data.reference "
        "must be LoCoMo's dataset: a JSON list of {sample_id, qa}"
    )
    items = write_json(tmp_path / "lme.json", [dataset_item("a", "multi-session")])
    assert _error(Reference, items) == (
        f"{items}: record [0]: field 'qa': is not a list; data.reference must be LoCoMo's "
        "dataset: a JSON list of {sample_id, qa}"
    )
