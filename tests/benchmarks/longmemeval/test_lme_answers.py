"""Reading LongMemEval answer files and matching them to the dataset by question_id."""

from __future__ import annotations

import json

import pytest
from lme_helpers import (
    GPT4O,
    HYPOTHESES,
    REFERENCE,
    dataset_item,
    need_shared,
    write_json,
    write_jsonl,
)

from locomo_exp.benchmarks.longmemeval.answers import (
    looks_like_lme,
    match_reference,
    read_lme_answers,
)
from locomo_exp.benchmarks.longmemeval.reference import read_lme_reference
from locomo_exp.data.input_file import DataValidationError


def test_eval_results_rows_carry_the_stored_label_and_its_judge():
    need_shared()
    answers = read_lme_answers(GPT4O)
    assert len(answers.rows) == 500
    assert answers.labelled and answers.label_models == ["gpt-4o-2024-08-06"]
    assert sum(r.label for r in answers.rows if r.label) == 362


def test_hypothesis_file_has_no_labels():
    need_shared()
    answers = read_lme_answers(HYPOTHESES)
    assert not answers.labelled and len(answers.rows) == 500


def test_a_json_list_reads_like_json_lines(tmp_path):
    rows = [{"question_id": "a", "hypothesis": "x", "autoeval_label": {"model": "m", "label": 1}}]
    answers = read_lme_answers(write_json(tmp_path / "h.json", rows))
    assert answers.rows[0].label is True and answers.label_models == ["m"]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param([{"question_id": "a", "hypothesis": "x"}], True, id="hypotheses"),
        pytest.param([{"question": "a", "prediction": "x"}], False, id="locomo-fields"),
        pytest.param({"question_id": "a", "hypothesis": "x"}, True, id="one-jsonl-row"),
        pytest.param({"question_id": "a"}, False, id="object"),
        pytest.param([], False, id="empty"),
    ],
)
def test_layout_detection(obj, expected):
    assert looks_like_lme(obj) is expected


def _one_problem(path):
    with pytest.raises(DataValidationError) as info:
        read_lme_answers(path)
    assert len(info.value.problems) == 1
    line = str(info.value.problems[0])
    assert line.startswith(str(path))
    return line


def test_duplicate_id_is_one_line_naming_both_records(tmp_path):
    path = write_jsonl(
        tmp_path / "h.jsonl",
        [{"question_id": "a", "hypothesis": "x"}, {"question_id": "b", "hypothesis": "y"},
         {"question_id": "a", "hypothesis": "z"}],
    )
    line = _one_problem(path)
    assert line == (
        f"{path}: line 3: field 'question_id': duplicate question id 'a' (first at line 1)"
    )


def test_locomo_results_file_is_named_as_such(tmp_path):
    rows = [{"question": "q?", "ground_truth": "g", "predicted_answer": "p", "category": 1}]
    line = _one_problem(write_json(tmp_path / "locomo.json", rows))
    assert "LoCoMo results file (layout qa_results)" in line
    assert "benchmark=longmemeval" in line


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        pytest.param(
            [{"question_id": "a", "hypothesis": "x", "autoeval_label": {"model": "m", "label": "yes"}}],
            "'autoeval_label.label': is 'yes', not true or false",
            id="label-text",
        ),
        pytest.param(
            [{"question_id": "a", "hypothesis": "x", "autoeval_label": {"model": "m", "label": True}},
             {"question_id": "b", "hypothesis": "y"}],
            "h.jsonl: line 2: field 'autoeval_label': is missing",
            id="label-on-some-rows",
        ),
        pytest.param(
            [{"question_id": "a", "hypothesis": 3}], "'hypothesis': is 3, not text", id="hyp-int"
        ),
    ],
)
def test_bad_rows_are_one_line(tmp_path, rows, expected):
    assert expected in _one_problem(write_jsonl(tmp_path / "h.jsonl", rows))


def test_ids_not_in_the_reference_are_skipped_and_counted(tmp_path, caplog):
    ref = read_lme_reference(
        write_json(tmp_path / "ref.json", [dataset_item("a", "multi-session"),
                                           dataset_item("b", "knowledge-update")])
    )
    answers = read_lme_answers(
        write_jsonl(tmp_path / "h.jsonl", [{"question_id": "a", "hypothesis": "x"},
                                           {"question_id": "zz", "hypothesis": "y"}])
    )
    matched = match_reference(answers, ref)
    assert [i.question.question_id for i in matched.items] == ["a"]
    assert matched.skipped_ids == ["zz"] and matched.unanswered_ids == ["b"]
    assert "skipped" in caplog.text


def test_answers_for_another_dataset_are_refused(tmp_path):
    need_shared()
    ref = read_lme_reference(REFERENCE)
    answers = read_lme_answers(write_jsonl(tmp_path / "h.jsonl", [{"question_id": "x", "hypothesis": ""}]))
    with pytest.raises(DataValidationError, match="none of its 1 question ids"):
        match_reference(answers, ref)


def test_null_hypothesis_is_kept_as_empty_and_counted(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps({"question_id": "a", "hypothesis": None}) + "\n")
    answers = read_lme_answers(path)
    assert answers.rows[0].hypothesis == "" and answers.missing_hypotheses == ["a"]
