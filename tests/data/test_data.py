"""Loaders for every results format, and every kind of invalid record."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import EXAMPLE

from locomo_exp.config import DataConfig, FieldMap, OnInvalid
from locomo_exp.data import DataValidationError, load_results, parse_category


def _write(tmp_path: Path, obj: object, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return path


def _qa(**overrides: object) -> dict:
    record = {"question": "Q?", "ground_truth": "A", "predicted_answer": "A", "category": 4}
    record.update(overrides)
    return record


# ---------------------------------------------------------------- each format


def test_example_is_qa_results_with_all_five_categories() -> None:
    loaded = load_results(EXAMPLE)
    assert loaded.format == "qa_results"
    assert len(loaded.records) == 20
    assert Counter(r.category for r in loaded.records) == {1: 4, 2: 4, 3: 4, 4: 4, 5: 4}
    first = loaded.records[0]
    assert (first.question_id, first.conversation_id) == ("ex-1-q01", "ex-1")
    assert first.evidence == ("D1:1", "D3:3", "D4:4")
    assert (first.search_latency_s, first.total_latency_s, first.context_tokens) == (0.18, 1.12, 1420)
    q06 = next(r for r in loaded.records if r.question_id == "ex-1-q06")
    assert q06.ground_truth == "2019"  # a JSON int in the file


def test_locomo_format_detects_prediction_key_and_adversarial_only_items(fixtures_dir: Path) -> None:
    loaded = load_results(fixtures_dir / "locomo_format.json")
    assert loaded.format == "locomo"
    assert loaded.prediction_key == "mysys_prediction"
    assert len(loaded.records) == 6
    assert [r.conversation_id for r in loaded.records] == ["conv-a"] * 3 + ["conv-b"] * 3
    assert loaded.records[1].ground_truth == "2019"
    adversarial_only = loaded.records[2]
    assert adversarial_only.category == 5
    assert adversarial_only.ground_truth == "the Pyrenees"
    assert adversarial_only.prediction == "Not mentioned in the conversation"
    assert adversarial_only.question_id == "conv-a:2"


def test_locomo_format_with_two_prediction_keys_needs_prediction_key(tmp_path: Path) -> None:
    obj = [{"sample_id": "s", "qa": [{"question": "Q", "answer": "A", "category": 4,
                                       "x_prediction": "A", "y_prediction": "B"}]}]
    path = _write(tmp_path, obj)
    with pytest.raises(DataValidationError, match="x_prediction, y_prediction.*data.prediction_key"):
        load_results(path)
    loaded = load_results(path, DataConfig(prediction_key="y_prediction"))
    assert loaded.records[0].prediction == "B"


def test_mem0_format_reads_string_categories(fixtures_dir: Path) -> None:
    loaded = load_results(fixtures_dir / "mem0_format.json")
    assert loaded.format == "mem0"
    assert [r.category for r in loaded.records] == [4, 2, 1, 4, 3, 2]
    assert {r.conversation_id for r in loaded.records} == {"0", "1"}


def test_fields_format_jsonl_with_mapping_and_milliseconds(fixtures_dir: Path) -> None:
    fields = FieldMap(question="q", ground_truth="gold", prediction="pred", category="cat",
                      question_id="qid", conversation_id="conv", total_latency_ms="latency_ms")
    loaded = load_results(fixtures_dir / "fields_format.jsonl",
                          DataConfig(format="fields", fields=fields))
    assert [r.category for r in loaded.records] == [4, 2, 2, 4, 1, 5]
    assert loaded.records[0].question_id == "f-1"
    assert loaded.records[0].total_latency_s == pytest.approx(0.8125)


def test_fields_format_on_zep_like_file_reads_answer_as_prediction(fixtures_dir: Path) -> None:
    fields = FieldMap(ground_truth="golden_answer", prediction="answer")
    loaded = load_results(fixtures_dir / "zep_like.json",
                          DataConfig(format="fields", fields=fields))
    raw = json.loads((fixtures_dir / "zep_like.json").read_text())
    first = raw["user_0"][0]
    assert loaded.records[0].prediction == first["answer"]
    assert loaded.records[0].ground_truth == first["golden_answer"]
    assert [r.conversation_id for r in loaded.records] == ["user_0"] * 3 + ["user_1"] * 2


def test_zep_published_grades_file_reads_1540_questions(shared_data: Path) -> None:
    fields = FieldMap(ground_truth="golden_answer", prediction="answer")
    loaded = load_results(shared_data / "predictions" / "zep_locomo_grades.json",
                          DataConfig(format="fields", fields=fields))
    assert len(loaded.records) == 1540
    assert Counter(r.category for r in loaded.records) == {1: 282, 2: 321, 3: 96, 4: 841}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(3, 3, id="int"),
        pytest.param("2", 2, id="numeric-string"),
        pytest.param("Multi-Hop", 1, id="name-any-case-and-dash"),
        pytest.param("single hop", 4, id="name-with-space"),
        pytest.param("commonsense", 3, id="alias"),
    ],
)
def test_parse_category(value: object, expected: int) -> None:
    assert parse_category(value) == expected


# ---------------------------------------------------------------- invalid input


def test_every_invalid_record_is_reported_at_once_with_file_record_and_field(tmp_path: Path) -> None:
    records = [
        _qa(question_id="ok-1"),
        {"ground_truth": "A", "predicted_answer": "A", "category": 4},  # no question
        _qa(category="weird"),  # unknown category
        _qa(category=9),  # out of range
        {"question": "Q", "ground_truth": "A", "category": 1},  # no prediction
        {"question": "Q", "predicted_answer": "A", "category": 2},  # no gold
        _qa(question_id="ok-1"),  # duplicate id
        "not an object",
        _qa(total_latency_s=-1),
    ]
    path = _write(tmp_path, records)
    with pytest.raises(DataValidationError) as info:
        load_results(path)
    problems = info.value.problems
    found = {(p.where, p.field) for p in problems}
    assert found == {
        ("[1]", "question"),
        ("[2]", "category"),
        ("[3]", "category"),
        ("[4]", "predicted_answer"),
        ("[5]", "ground_truth"),
        ("[6]", "question_id"),
        ("[7]", None),
        ("[8]", "total_latency_s"),
    }
    message = str(info.value)
    assert str(path) in message
    assert "record [2]: field 'category': unknown category 'weird'" in message
    assert "duplicate question id 'ok-1' (first at [0])" in message
    assert "data.on_invalid=skip" in message


def test_on_invalid_skip_scores_the_rest_and_counts_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, [_qa(), _qa(category="weird"), _qa(question=None), _qa()])
    loaded = load_results(path, DataConfig(on_invalid=OnInvalid.skip))
    assert len(loaded.records) == 2
    assert loaded.n_skipped_records == 2
    assert [r.position for r in loaded.records] == [0, 3]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("", "file is empty", id="empty-file"),
        pytest.param("   \n", "file is empty", id="whitespace-file"),
        pytest.param("{not json", "not valid JSON", id="not-json"),
        pytest.param("[]", "contains no records", id="empty-list"),
        pytest.param('{"a": 1}', "cannot detect the format", id="unknown-shape"),
    ],
)
def test_unreadable_files_are_named_in_the_error(tmp_path: Path, content: str, message: str) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(DataValidationError, match=message) as info:
        load_results(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataValidationError, match="file not found"):
        load_results(tmp_path / "nope.json")


def test_null_gold_is_excluded_and_integer_gold_is_text(tmp_path: Path) -> None:
    path = _write(tmp_path, [_qa(ground_truth=None, category=5), _qa(ground_truth=7, predicted_answer=None)])
    loaded = load_results(path)
    assert [r.position for r in loaded.records] == [1]  # a null gold is never scored as "None"
    assert loaded.n_excluded_no_gold == 1
    assert loaded.records[0].ground_truth == "7"
    assert loaded.records[0].prediction == ""
    assert loaded.records[0].prediction_missing


def test_category_5_with_only_adversarial_answer_is_valid(tmp_path: Path) -> None:
    obj = [{"question": "Q", "adversarial_answer": "X", "predicted_answer": "Not mentioned", "category": 5}]
    loaded = load_results(_write(tmp_path, obj))
    assert loaded.records[0].ground_truth == "X"
    obj[0]["category"] = 4
    with pytest.raises(DataValidationError, match="missing ground truth"):
        load_results(_write(tmp_path, obj))


def test_zep_responses_take_categories_from_grades_and_latency_in_seconds(shared_data: Path) -> None:
    import numpy as np

    predictions = shared_data / "predictions"
    fields = FieldMap(ground_truth="golden_answer", prediction="answer", total_latency_ms="duration_ms")
    config = DataConfig(format="fields", fields=fields,
                        categories_from=str(predictions / "zep_locomo_grades.json"))
    loaded = load_results(predictions / "zep_locomo_responses.json", config)
    assert len(loaded.records) == 1540
    assert Counter(r.category for r in loaded.records) == {1: 282, 2: 321, 3: 96, 4: 841}
    latencies = np.array([r.total_latency_s for r in loaded.records])
    # shared/data/README.md: p50 ≈ 3563.6 ms, p95 ≈ 6859.0 ms, mean 3834.8 ms (numpy default method)
    assert np.percentile(latencies, 50) == pytest.approx(3.5636, abs=1e-4)
    assert np.percentile(latencies, 95) == pytest.approx(6.8590, abs=1e-4)
    assert latencies.mean() == pytest.approx(3.8348, abs=1e-4)


def test_categories_from_reports_questions_it_cannot_find(tmp_path: Path) -> None:
    main = _write(tmp_path, [{"question": "Q1", "ground_truth": "a", "predicted_answer": "a"},
                             {"question": "Q2", "ground_truth": "a", "predicted_answer": "a"}], "main.json")
    other = _write(tmp_path, [_qa(question="Q1", category=2)], "cats.json")
    config = DataConfig(format="qa_results", categories_from=str(other))
    with pytest.raises(DataValidationError, match=r"record \[1\]: field 'category': missing category, and no record"):
        load_results(main, config)


def test_a_problem_shared_by_every_record_is_one_line_with_a_hint(tmp_path: Path) -> None:
    rows = [{"q": f"Q{i}", "gold": "a", "pred": "a"} for i in range(30)]
    fields = FieldMap(question="q", ground_truth="gold", prediction="pred", category="cat")
    with pytest.raises(DataValidationError) as info:
        load_results(_write(tmp_path, rows), DataConfig(format="fields", fields=fields))
    message = str(info.value)
    assert "30 records ([0], [1], [2], ...): field 'cat': missing category" in message
    assert message.count("missing category") == 1
    assert "first record's keys are: gold, pred, q" in message
    assert "data.categories_from" in message


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        pytest.param([True, False, True], [100.0, 0.0, 100.0], id="bools-binary"),
        pytest.param([1, 0, 1], [100.0, 0.0, 100.0], id="zero-one-binary"),
        pytest.param([85, 1, 40], [85.0, 1.0, 40.0], id="0-100-file-keeps-a-score-of-1"),
        pytest.param([1.0, 0.25, 0], [100.0, 25.0, 0.0], id="0-1-fractions-to-percent"),
    ],
)
def test_stored_judge_scale_is_decided_once_per_file(tmp_path: Path, stored: list, expected: list) -> None:
    rows = [_qa(question_id=f"q{i}", verdict=v) for i, v in enumerate(stored)]
    fields = FieldMap(ground_truth="ground_truth", prediction="predicted_answer", question_id="question_id",
                      judge_score="verdict")
    loaded = load_results(_write(tmp_path, rows), DataConfig(format="fields", fields=fields))
    assert [r.stored_judge_score for r in loaded.records] == expected
