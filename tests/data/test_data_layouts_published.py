"""Published layouts read with no options (issue 20 §2), on invented miniatures of each shape.

* records with answers under per-setting keys (``cutoff_results.top_200``);
* a full list of records beside partitions of the same records (``by_type.*.responses``);
* the Mem0 harness's numbers stored as text (latency in seconds, ``bleu_score``, ``llm_score``).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from conftest import run_job

from locomo_exp.config import DataConfig
from locomo_exp.data import DataValidationError, LoadedRuns, load_data, load_results


def _write(tmp_path: Path, obj: object, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


# ------------------------------------------------------------- records under per-setting keys


def _evaluation(index: int, answers: dict[str, tuple[str, str]], category: int = 2) -> dict:
    return {
        "question_id": f"conv0_q{index}",
        "conversation_idx": 0,
        "category": category,
        "category_name": "temporal",
        "question": f"When did event {index} happen?",
        "ground_truth_answer": "7 May 2023",
        "search_latency_ms": 3469.3,
        "cutoff_results": {
            name: {"generated_answer": answer, "judgment": judgment, "score": 1.0 if judgment == "CORRECT" else 0.0}
            for name, (answer, judgment) in answers.items()
        },
    }


def _per_setting_file(settings: tuple[str, ...]) -> dict:
    rows = [
        # (answer, judgment) per setting, in the order of ``settings``
        [("7 May 2023", "CORRECT"), ("May 2023", "CORRECT")],
        [("7 May 2023", "CORRECT"), ("ERROR", "ERROR")],
        [("", "WRONG"), ("8 May 2023", "WRONG")],
        [("in 2022", "WRONG"), ("7 May 2023", "CORRECT")],
    ]
    evaluations = [
        _evaluation(i, {name: row[j] for j, name in enumerate(settings)}) for i, row in enumerate(rows)
    ]
    return {
        "metadata": {"judge_model": "gpt-4.1-mini", "answerer_model": "gpt-4.1-mini", "n_questions": 4},
        "metrics_by_cutoff": {
            name: {"overall": {"accuracy": 50.0}, "by_category": {"temporal": {"accuracy": 50.0}}}
            for name in settings
        },
        "evaluations": evaluations,
    }


def test_one_setting_is_read_with_no_option_and_failed_answers_score_0(tmp_path: Path) -> None:
    path = _write(tmp_path, _per_setting_file(("top_200",)))
    loaded = load_results(path)
    assert (loaded.format, loaded.records_key, loaded.judge_field) == ("fields", "evaluations", "judgment")
    assert loaded.setting is not None
    assert (loaded.setting.field, loaded.setting.setting, loaded.setting.n_failed) == ("cutoff_results", "top_200", 1)
    # answers: correct, correct, empty (a failed answer: scored 0, counted), wrong
    assert [r.prediction for r in loaded.records] == ["7 May 2023", "7 May 2023", "", "in 2022"]
    assert [r.prediction_missing for r in loaded.records] == [False, False, True, False]
    assert loaded.n_missing_predictions == 1
    assert "a failed answer ''" in loaded.missing_predictions[0].message
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 100.0, 0.0, 0.0]
    assert [r.search_latency_s for r in loaded.records] == pytest.approx([3.4693] * 4)
    assert loaded.file_aggregates["metrics_by_cutoff.top_200.overall.accuracy"] == 50.0
    assert loaded.file_aggregates["metadata.n_questions"] == 4
    assert loaded.label == "results.json#top_200"


def test_several_settings_are_each_a_run_with_stored_j_per_setting(tmp_path: Path) -> None:
    path = _write(tmp_path, _per_setting_file(("top_50", "top_200")))
    loaded = load_data(DataConfig(path=str(path)), tmp_path)
    assert isinstance(loaded, LoadedRuns)
    assert [run.label for run in loaded.runs] == ["results.json#top_50", "results.json#top_200"]
    # top_50: CORRECT, CORRECT, WRONG, WRONG -> 50; top_200: CORRECT, ERROR (wrong), WRONG, CORRECT -> 50
    per_run = loaded.stored_j_per_run()["overall"]
    assert per_run == [50.0, 50.0]
    assert [run.setting.n_failed for run in loaded.runs if run.setting] == [1, 1]
    assert loaded.runs[1].records[1].prediction_missing  # "ERROR" answer under top_200


def test_several_settings_run_reports_each_setting(tmp_path: Path) -> None:
    path = _write(tmp_path, _per_setting_file(("top_50", "top_200")))
    result = run_job(tmp_path, path=path)
    summary = result.summary
    assert summary["runs"]["files"] == ["results.json#top_50", "results.json#top_200"]
    assert summary["input"]["setting"]["setting"] == "top_50"
    assert summary["input"]["setting"]["settings"] == ["top_50", "top_200"]
    assert summary["stored_judge_detail"]["across_runs"]["overall"]["per_run"] == [50.0, 50.0]
    report = (result.output_dir / "report.md").read_text()
    assert "## Runs (2 settings of one file, each scored as a run)" in report
    assert "Setting `top_50` of `cutoff_results` (the file also has: top_200)" in report


def test_data_setting_picks_one_and_a_wrong_name_lists_the_settings(tmp_path: Path) -> None:
    path = _write(tmp_path, _per_setting_file(("top_50", "top_200")))
    loaded = load_data(DataConfig(path=str(path), setting="top_200"), tmp_path)
    assert not isinstance(loaded, LoadedRuns)
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 0.0, 0.0, 100.0]
    with pytest.raises(DataValidationError, match=r"data.setting=top_20: no such setting under "
                                                  r"`cutoff_results`; the file has: top_50, top_200"):
        load_results(path, DataConfig(setting="top_20"))
    with pytest.raises(DataValidationError, match=r"answers under 2 settings of `cutoff_results` "
                                                  r"\(top_50, top_200\): score one with data.setting"):
        load_results(path)  # several files pooled, or data.runs, need one setting each


# ------------------------------------------------ a full list of records and its partitions


def _response(index: int, category: int, correct: bool) -> dict:
    return {
        "question": f"What did Caroline buy in week {index}?",
        "expected_answer": "a red bike",
        "ai_response": "a red bike" if correct else "a blue car",
        "category": category,
        "evaluation": {"is_correct": correct, "reasoning": "compared with the expected answer"},
    }


def _partitioned_file(conversation: str, responses: list[dict]) -> dict:
    by_type: dict[str, dict[str, Any]] = {}
    names = {2: "temporal_reasoning", 4: "single_hop"}
    for response in responses:
        part = by_type.setdefault(names[response["category"]], {"responses": []})
        part["responses"].append(response)
    correct = sum(r["evaluation"]["is_correct"] for r in responses)
    return {
        "conversation_id": conversation,
        "total": len(responses),
        "accuracy_percentage": round(100 * correct / len(responses), 2),
        "by_type": by_type,
        "responses": responses,
    }


def test_a_list_with_partitions_of_the_same_records_is_read_once(tmp_path: Path) -> None:
    responses = [_response(0, 2, True), _response(1, 4, True), _response(2, 4, False)]
    path = _write(tmp_path, _partitioned_file("conv-26", responses))
    loaded = load_results(path)
    assert loaded.records_key == "responses"
    assert loaded.records_partitions == ("by_type.temporal_reasoning", "by_type.single_hop")
    assert len(loaded.records) == 3
    assert loaded.judge_field == "evaluation.is_correct"
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 100.0, 0.0]
    assert [r.prediction for r in loaded.records] == ["a red bike", "a red bike", "a blue car"]
    assert loaded.file_aggregates["accuracy_percentage"] == 66.67
    result = run_job(tmp_path, path=path)
    report = (result.output_dir / "report.md").read_text()
    assert ("2 other list(s) in the file hold only records of `responses` (a breakdown of the same "
            "records), not read again") in report


def test_lists_that_really_differ_are_still_refused(tmp_path: Path) -> None:
    content = _partitioned_file("conv-26", [_response(0, 2, True), _response(1, 4, True)])
    content["by_type"]["single_hop"]["responses"].append(_response(9, 4, False))  # not in `responses`
    path = _write(tmp_path, content)
    with pytest.raises(DataValidationError, match="several lists of records in the file: .*they hold different records"):
        load_results(path)


def test_ten_partitioned_files_pool_into_one_result(tmp_path: Path) -> None:
    paths = []
    for conv in range(10):
        responses = [_response(i, 2 if i % 2 else 4, (i + conv) % 3 != 0) for i in range(3)]
        paths.append(str(_write(tmp_path, _partitioned_file(f"conv-{conv}", responses), f"conv-{conv}.json")))
    loaded = load_data(DataConfig(path=paths), tmp_path)
    assert not isinstance(loaded, LoadedRuns)
    assert len(loaded.records) == 30
    assert len(loaded.sources) == 10
    assert loaded.records[3].question_id == "conv-1/q0"
    expected = [100.0 if (i + conv) % 3 != 0 else 0.0 for conv in range(10) for i in range(3)]
    assert [r.stored_judge_score for r in loaded.records] == expected


# ------------------------------------------------------------------- numbers stored as text


def _mem0_text_record(index: int, total: str, search: str) -> dict:
    return {
        "question": f"Where does Melanie run {index}?",
        "answer": "in the park",
        "response": "in the park" if index % 2 == 0 else "at the gym",
        "category": "4",
        "bleu_score": "1.0" if index % 2 == 0 else "0.0",
        "f1_score": "1.0" if index % 2 == 0 else "0.0",
        "llm_score": "1" if index % 2 == 0 else "0",
        "search_time": search,
        "response_time": "0.657",
        "total_latency": total,
    }


def test_mem0_numbers_stored_as_text_are_read_as_numbers(tmp_path: Path) -> None:
    totals = ["0.657", "1.25", "2.0", "0.5"]
    searches = ["0.0", "0.25", "0.5", "0.1"]
    content = {"0": [_mem0_text_record(i, totals[i], searches[i]) for i in range(2)],
               "1": [_mem0_text_record(i, totals[i], searches[i]) for i in range(2, 4)]}
    path = _write(tmp_path, content)
    loaded = load_results(path)
    assert loaded.format == "mem0"
    assert [r.total_latency_s for r in loaded.records] == [0.657, 1.25, 2.0, 0.5]
    assert [r.search_latency_s for r in loaded.records] == [0.0, 0.25, 0.5, 0.1]
    assert [r.stored_judge_score for r in loaded.records] == [100.0, 0.0, 100.0, 0.0]
    assert loaded.stored_metrics["0:0"] == {"bleu_score": 1.0, "f1_score": 1.0}
    result = run_job(tmp_path, path=path)
    latency = result.summary["latency"]["total_latency_s"]
    # the author's mean total latency, computed independently from the text values
    assert latency["mean"] == pytest.approx(statistics.fmean(float(t) for t in totals))
    assert latency["count"] == 4
    report = (result.output_dir / "report.md").read_text()
    assert "| total latency mean (s) | 1.102 |" in report
    assert "| search latency mean (s) | 0.212 |" in report


@pytest.mark.parametrize(
    "value",
    [pytest.param("fast", id="word"), pytest.param("NaN", id="nan-text"), pytest.param("-1", id="negative")],
)
def test_latency_text_that_is_not_a_number_names_the_record(tmp_path: Path, value: str) -> None:
    content = {"0": [_mem0_text_record(0, value, "0.0")]}
    path = _write(tmp_path, content)
    with pytest.raises(DataValidationError, match=r'\["0"\]\[0\].*total_latency'):
        load_results(path)
