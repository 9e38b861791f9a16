"""Published LoCoMo result layouts read with no options (issue 10 items 1-5)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_job

from locomo_exp.config import (
    DataConfig,
    FieldMap,
)
from locomo_exp.data import DataValidationError, load_results


def _write(tmp_path: Path, obj: object, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _detailed(question: str, correct: object, category: int = 4, **extra: object) -> dict:
    return {"question": question, "standard_answer": "Paris", "generated_answer": "Paris",
            "category": category, "is_correct": correct, **extra}


# ---------------------------------------------------------------- 1. records beside metadata


def test_records_beside_a_summary_are_found_and_stored_j_is_50(tmp_path: Path) -> None:
    path = _write(tmp_path, {"summary": {"accuracy": 0.5, "total": 2, "model": "x"},
                             "detailed_results": [_detailed("Q1?", True), _detailed("Q2?", False)]})
    loaded = load_results(path)
    assert (loaded.format, loaded.records_key, loaded.judge_field) == ("fields", "detailed_results", "is_correct")
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 0.0]
    assert loaded.stored_judge["groups"]["overall"]["mean"] == 50.0
    assert loaded.file_aggregates == {"summary.accuracy": 0.5, "summary.total": 2}
    assert (loaded.records[0].ground_truth, loaded.records[0].prediction) == ("Paris", "Paris")
    assert loaded.records[1].question_id == "q1"
    assert loaded.records[1].category == 4


def test_records_beside_metadata_reach_summary_json(tmp_path: Path) -> None:
    path = _write(tmp_path, {"summary": {"accuracy": 0.5},
                             "detailed_results": [_detailed("Q1?", True), _detailed("Q2?", False)]})
    result = run_job(tmp_path, path=path)
    summary = result.summary
    assert summary["stored_judge"]["overall"]["mean"] == 50.0
    assert summary["input"]["records_key"] == "detailed_results"
    assert summary["input"]["judge_field"] == "is_correct"
    assert summary["input"]["file_aggregates"] == {"summary.accuracy": 0.5}
    assert summary["stored_judge_detail"]["groups"]["overall"]["mean"] == 50.0
    on_disk = json.loads((result.output_dir / "summary.json").read_text())
    assert on_disk["stored_judge_detail"]["field"] == "is_correct"


def test_several_record_lists_ask_for_records_key(tmp_path: Path) -> None:
    path = _write(tmp_path, {"train": [_detailed("Q1?", True)], "eval": {"n": 1, "runs": [_detailed("Q2?", False)]},
                             "meta": "x"})
    with pytest.raises(DataValidationError, match=r"several lists of records in the file: train, eval.runs; "
                                                  r"they hold different records: choose one with data.records_key=<key>"):
        load_results(path)
    loaded = load_results(path, DataConfig(records_key="eval.runs"))
    assert [r.question for r in loaded.records] == ["Q2?"]
    assert loaded.records_key == "eval.runs"
    assert loaded.file_aggregates == {"eval.n": 1}


def test_records_key_naming_nothing_is_one_clear_line(tmp_path: Path) -> None:
    path = _write(tmp_path, {"summary": {"n": 1}, "detailed_results": [_detailed("Q1?", True)]})
    with pytest.raises(DataValidationError, match=r"data.records_key=results: no key 'results' in the file"):
        load_results(path, DataConfig(records_key="results"))


def test_wrapped_record_problem_names_the_records_key(tmp_path: Path) -> None:
    path = _write(tmp_path, {"summary": {"n": 2}, "detailed_results": [_detailed("Q1?", True), _detailed("Q2?", True, category="odd")]})
    with pytest.raises(DataValidationError, match=r"record detailed_results\[1\]: field 'category': unknown category 'odd'"):
        load_results(path)


# ---------------------------------------------------------------- 2. several judgments


def _judged(question: str, verdicts: list[bool], category: int = 4) -> dict:
    return {"question": question, "answer": "Paris", "response": "Paris", "category": category,
            "llm_judgments": {f"judgment_{i + 1}": v for i, v in enumerate(verdicts)}}


def test_three_judgments_per_question_give_mean_44_44_majority_33_33_and_per_run_j(tmp_path: Path) -> None:
    path = _write(tmp_path, {"accuracy": 0.44, "detailed_results": {"conv_a": [
        _judged("Q1?", [True, True, False]), _judged("Q2?", [True, False, False]),
        _judged("Q3?", [True, False, False])]}})
    loaded = load_results(path)
    assert (loaded.format, loaded.records_key, loaded.judge_field) == ("mem0", "detailed_results", "llm_judgments.*")
    assert loaded.file_aggregates == {"accuracy": 0.44}
    assert loaded.records[0].stored_judgments == (100.0, 100.0, 0.0)
    assert loaded.records[0].conversation_id == "conv_a"
    overall = loaded.stored_judge["groups"]["overall"]
    assert round(overall["mean"], 2) == 44.44
    assert round(overall["majority"], 2) == 33.33
    assert [round(v, 2) for v in overall["per_run"]] == [100.0, 33.33, 0.0]
    assert round(overall["runs_mean"], 2) == 44.44
    assert round(overall["runs_std"], 2) == 50.92
    assert loaded.stored_judge["n_judgments"] == 3


def test_judgments_are_ordered_by_run_number_and_reported_per_category(tmp_path: Path) -> None:
    record = _judged("Q1?", [])
    record["llm_judgments"] = {f"judgment_{i}": i == 10 for i in (1, 2, 10)}  # judgment_10 last
    other = _judged("Q2?", [True, True, True], category=2)
    loaded = load_results(_write(tmp_path, {"0": [record, other]}))
    assert loaded.records[0].stored_judgments == (0.0, 0.0, 100.0)
    groups = loaded.stored_judge["groups"]
    assert groups["4"]["per_run"] == [0.0, 0.0, 100.0]
    assert groups["2"]["majority"] == 100.0
    assert groups["5"]["count"] == 0 and groups["5"]["mean"] is None


# ---------------------------------------------------------------- 3. LoCoMo's own output with <name>_llm


def _locomo_file(tmp_path: Path, **extra: object) -> Path:
    qa = [{"question": "Q1?", "answer": "Paris", "category": 4, "sys_prediction": "Paris", "sys_llm": 1, **extra},
          {"question": "Q2?", "answer": "Rome", "category": 2, "sys_prediction": "Oslo", "sys_llm": 0}]
    return _write(tmp_path, [{"sample_id": "conv-1", "qa": qa}])


def test_locomo_output_with_name_llm_gives_stored_j_50_without_options(tmp_path: Path) -> None:
    loaded = load_results(_locomo_file(tmp_path))
    assert (loaded.format, loaded.prediction_key, loaded.judge_field) == ("locomo", "sys_prediction", "sys_llm")
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 0.0]
    assert loaded.stored_judge["groups"]["overall"]["mean"] == 50.0


def test_judge_score_field_is_refused_where_it_does_not_apply(tmp_path: Path) -> None:
    config = DataConfig(fields=FieldMap(judge_score="verdict"))
    with pytest.raises(DataValidationError) as info:
        load_results(_locomo_file(tmp_path), config)
    message = str(info.value)
    assert "data.fields.judge_score=verdict applies only with data.format=fields (data.format is auto)" in message
    assert str(tmp_path / "results.json") in message
    with pytest.raises(DataValidationError, match="data.format is locomo"):
        load_results(_locomo_file(tmp_path), DataConfig(format="locomo", fields=FieldMap(judge_score="v")))


# ---------------------------------------------------------------- 4-5. encodings and field names


@pytest.mark.parametrize(
    ("field", "values", "expected_j"),
    [
        pytest.param("llm_score", [1, 0], 50.0, id="llm_score-1-0"),
        pytest.param("grade", [True, False], 50.0, id="grade-true-false"),
        pytest.param("is_correct", [True, True], 100.0, id="is_correct-bools"),
        pytest.param("judgment", ["CORRECT", "WRONG"], 50.0, id="judgment-CORRECT-WRONG"),
        pytest.param("judgment", ["correct", "Wrong"], 50.0, id="judgment-any-case"),
        pytest.param("llm_score", [0.25, 1.0], 62.5, id="0-1-fractions"),
        pytest.param("llm_score", [85, 40], 62.5, id="0-100-scores"),
    ],
)
def test_verdict_encodings_and_field_names_are_detected(tmp_path: Path, field: str, values: list, expected_j: float) -> None:
    rows = [{"question": f"Q{i}?", "ground_truth": "A", "predicted_answer": "A", "category": 4, field: v}
            for i, v in enumerate(values)]
    loaded = load_results(_write(tmp_path, rows))
    assert loaded.judge_field == field
    assert loaded.stored_judge["groups"]["overall"]["mean"] == pytest.approx(expected_j)


def test_fractions_give_55_56_with_the_one_shared_scale_rule(tmp_path: Path) -> None:
    rows = [{"question": f"Q{i}?", "answer": "A", "response": "A", "category": "4", "llm_score": v}
            for i, v in enumerate([1.0, 0.6667, 0.0])]
    loaded = load_results(_write(tmp_path, {"0": rows}))
    assert loaded.format == "mem0"
    assert round(loaded.stored_judge["groups"]["overall"]["mean"], 2) == 55.56


def test_text_verdicts_mixed_with_scores_name_the_record(tmp_path: Path) -> None:
    rows = [{"question": f"Q{i}?", "ground_truth": "A", "predicted_answer": "A", "category": 4, "judgment": v}
            for i, v in enumerate(["CORRECT", 0.5])]
    path = _write(tmp_path, rows)
    with pytest.raises(DataValidationError, match=r"record \[1\]: field 'judgment': stored judge verdicts mix "
                                                  r"true/false with scores such as 0.5"):
        load_results(path)


def test_an_unknown_verdict_inside_judgments_names_its_index(tmp_path: Path) -> None:
    record = _judged("Q1?", [True, True])
    record["llm_judgments"]["judgment_2"] = "maybe"
    with pytest.raises(DataValidationError, match=r"record \[\"0\"\]\[0\]: field 'llm_judgments\[1\]': a stored "
                                                  r"judge verdict must be true/false, CORRECT/WRONG"):
        load_results(_write(tmp_path, {"0": [record]}))


# ---------------------------------------------------------------- published files, no options


def test_zep_grades_read_with_no_options_reproduce_published_j(shared_data: Path) -> None:
    loaded = load_results(shared_data / "predictions" / "zep_locomo_grades.json")
    assert loaded.format == "fields"
    assert loaded.judge_field == "grade"
    first = json.loads((shared_data / "predictions" / "zep_locomo_grades.json").read_text())
    first = first["locomo_experiment_user_0"][0]
    assert loaded.records[0].prediction == first["answer"]  # Zep's `answer` is its prediction
    assert loaded.records[0].ground_truth == first["golden_answer"]
    groups = loaded.stored_judge["groups"]
    assert {k: round(groups[k]["mean"], 2) for k in ("1", "2", "3", "4", "overall_1_4")} == {
        "1": 74.11, "2": 66.04, "3": 67.71, "4": 79.79, "overall_1_4": 75.13}


def test_memobase_and_honcho_are_detected_with_their_verdict_fields(shared_data: Path) -> None:
    memobase = load_results(shared_data / "predictions" / "memobase_eval_0710.json")
    assert (memobase.format, memobase.judge_field) == ("mem0", "llm_score")
    assert round(memobase.stored_judge["groups"]["overall"]["mean"], 2) == 75.78
    honcho = load_results(shared_data / "predictions" / "honcho_locomo10_qa.json")
    assert (honcho.format, honcho.judge_field) == ("locomo", None)
    assert Counter(r.category for r in honcho.records) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}


def test_report_names_field_records_key_aggregates_and_shows_majority_and_runs(tmp_path: Path) -> None:
    path = _write(tmp_path, {"accuracy": 0.44, "detailed_results": {"conv_a": [
        _judged("Q1?", [True, True, False]), _judged("Q2?", [True, False, False]),
        _judged("Q3?", [True, False, False])]}})
    report = run_job(tmp_path, path=path).report_path.read_text()
    assert "- Records read from `detailed_results` inside the file's top-level object" in report
    assert "- Stored judge verdicts read from `llm_judgments.*`" in report
    assert "- The file's own aggregates (as given, not recomputed): `accuracy` = 0.44" in report
    assert "- Question set: custom: 3 questions" in report
    assert "| overall (1-4) | 3 | 44.44 | 33.33 | 100.00 | 33.33 | 0.00 | 44.44 ± 50.92 |" in report
