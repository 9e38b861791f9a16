"""Issue 10, items 6, 8, 10 and the plain command: aggregates as the authors computed them,
a file's stored metrics checked, runs scored one by one, sweeps accepting several files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_job

from locomo_exp import sweep
from locomo_exp.config import DataConfig, ExperimentConfig, TrackingConfig
from locomo_exp.data import load_results
from locomo_exp.results import QARecord, RunSummary
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.aggregate import lexical_aggregates
from locomo_exp.scoring.repeated_runs import mean_and_sample_std
from locomo_exp.scoring.specs import OFFICIAL_VERSIONS
from locomo_exp.scoring.stored_vs_recomputed import compare_stored, file_rounding
from locomo_exp.tracking import run_metrics


def _write(tmp_path: Path, obj: object, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _qa(qid: str, prediction: str = "Paris", gold: str = "Paris", category: int = 4, **extra: object) -> dict:
    return {"question_id": qid, "question": f"Question {qid}?", "ground_truth": gold,
            "predicted_answer": prediction, "category": category, **extra}


# ---------------------------------------------------------------- 6. official aggregation

TWO_THIRDS = ("apple banana cherry", "apple banana date")  # P = R = 2/3 -> F1 2/3 in locomo


def test_three_questions_with_f1_two_thirds_give_official_66_70_and_unrounded_66_67(
    tmp_path: Path,
) -> None:
    records = [_qa(f"q{i}", *TWO_THIRDS) for i in range(3)]
    result = run_job(tmp_path, path=str(_write(tmp_path, records, "three.json")))
    metrics = result.summary["metrics"]
    assert metrics["f1_locomo"]["overall"]["mean"] == pytest.approx(2 / 3)
    assert metrics["f1_locomo_official"]["overall"]["mean"] == pytest.approx(0.667)
    assert result.summary["versions"]["f1_locomo_official"] == OFFICIAL_VERSIONS["f1_locomo_official"]
    assert "round(f1, 3)" in result.summary["versions"]["f1_locomo_official"]
    report = (result.output_dir / "report.md").read_text()
    header = next(line for line in report.splitlines() if line.startswith("| category | n | F1"))
    assert (
        "| F1, LoCoMo scorer (mean per question) | F1, LoCoMo's own aggregate (round(3) first) |"
        in header
    )
    assert "| **overall (1-4)** | 3 | 66.67 | 66.67 | 66.70 |" in report  # no category 5: one overall row
    flat = run_metrics(result.summary, {4: "single_hop"})
    assert flat["f1_locomo_official/overall"] == pytest.approx(66.7)  # MLflow, percent
    assert flat["f1_locomo/overall"] == pytest.approx(200 / 3)


def test_official_aggregate_leaves_unrounded_metrics_alone() -> None:
    rows = [{"f1": 2 / 3, "f1_locomo": 2 / 3, "f1_mem0": 2 / 3}]
    metrics = lexical_aggregates(rows, [4])
    assert list(metrics) == ["f1", "f1_locomo", "f1_locomo_official", "f1_mem0"]
    assert metrics["f1_mem0"]["4"].mean == pytest.approx(2 / 3)
    assert metrics["f1_locomo_official"]["4"].mean == 0.667


def test_honcho_category_3_official_mean_is_12_25_as_its_stats_file(shared_data: Path) -> None:
    loaded = load_results(shared_data / "predictions" / "honcho_locomo10_qa.json")
    metrics = lexical_aggregates(score_lexical(loaded.records), [r.category for r in loaded.records])
    assert f"{100 * metrics['f1_locomo_official']['3'].mean:.2f}" == "12.25"
    assert f"{100 * metrics['f1_locomo']['3'].mean:.2f}" == "12.24"  # the unrounded mean
    stats = json.loads((shared_data / "predictions" / "honcho_locomo10_qa_stats.json").read_text())
    counts = stats["honcho"]["category_counts"]
    for category, total in stats["honcho"]["cum_accuracy_by_category"].items():
        published = round(total / counts[category], 4)  # 1: 0.2268 ... 3: 0.1225 ... 5: 0.9305
        assert round(metrics["f1_locomo_official"][category].mean, 4) == published


# ---------------------------------------------------------------- 8. stored vs recomputed


def test_stored_f1_rounded_to_3_decimals_is_matched_and_the_differing_one_listed(
    tmp_path: Path,
) -> None:
    records = [
        _qa("q1", *TWO_THIRDS, my_f1=0.667, bleu_score=0.5),
        _qa("q2", "salt and pepper", "salt pepper", my_f1=1.0),  # locomo drops "and": 1.0
        _qa("q3", "x y", "x z", my_f1=0.9, is_correct=True),  # F1 0.5 in every variant
    ]
    result = run_job(tmp_path, path=str(_write(tmp_path, records, "stored.json")))
    section = result.summary["stored_vs_recomputed"]
    assert list(section) == ["my_f1", "bleu_score"]  # is_correct (a verdict) is not a metric
    my_f1 = section["my_f1"]
    assert (my_f1["n"], my_f1["decimals"], my_f1["equal"]) == (3, 3, 2)
    assert my_f1["best"] == "f1_locomo"
    assert {m: c["equal"] for m, c in my_f1["candidates"].items()} == {
        "f1_locomo": 2, "f1_squad": 1, "f1_mem0": 1, "bleu1": 1,
    }
    assert my_f1["tolerance"] == pytest.approx(0.0005 + 1e-9)
    assert my_f1["max_difference"] == pytest.approx(0.4)
    assert my_f1["first_differences"] == [{"question_id": "q3", "stored": 0.9, "recomputed": 0.5}]
    report = (result.output_dir / "report.md").read_text()
    assert "## Stored vs recomputed per-question metrics" in report
    assert "| `my_f1` (3 decimals, 0-1) | 3 | `f1_locomo` | 2 / 3 | 0.4 |" in report
    assert "| q3 | 0.9 | 0.5 |" in report


def test_stored_metric_on_0_100_is_compared_in_percent() -> None:
    record = QARecord(question_id="a", question="q", ground_truth="x y", prediction="x z", category=4)
    section = compare_stored([record], score_lexical([record]), {"a": {"f1": 50.0}})
    assert section is not None
    assert (section["f1"]["scale"], section["f1"]["equal"], section["f1"]["decimals"]) == ("0-100", 1, 0)


def test_file_rounding_is_the_largest_number_of_decimals_shown() -> None:
    assert file_rounding([0.667, 1.0, 0.5]) == 3
    assert file_rounding([2 / 3, 0.5]) is None  # unrounded floats
    assert file_rounding([1.0, 0.0]) == 0


def test_no_stored_metrics_means_no_section(tmp_path: Path) -> None:
    result = run_job(tmp_path, path=str(_write(tmp_path, [_qa("q1")], "plain.json")))
    assert "stored_vs_recomputed" not in result.summary
    assert "Stored vs recomputed" not in (result.output_dir / "report.md").read_text()


def test_memobase_stored_f1_is_mem0_and_bleu_is_bleu1_for_all_1540(shared_data: Path) -> None:
    loaded = load_results(shared_data / "predictions" / "memobase_eval_0710.json")
    section = compare_stored(loaded.records, score_lexical(loaded.records), loaded.stored_metrics)
    assert section is not None
    assert (section["f1_score"]["best"], section["f1_score"]["equal"]) == ("f1_mem0", 1540)
    assert (section["bleu_score"]["best"], section["bleu_score"]["equal"]) == ("bleu1", 1540)
    assert section["f1_score"]["first_differences"] == []
    assert section["f1_score"]["candidates"]["f1_locomo"]["equal"] == 910  # not the file's variant


def test_honcho_stored_f1_is_locomo_official_within_1e_3_for_all_1986(shared_data: Path) -> None:
    loaded = load_results(shared_data / "predictions" / "honcho_locomo10_qa.json")
    section = compare_stored(loaded.records, score_lexical(loaded.records), loaded.stored_metrics)
    assert section is not None and list(section) == ["honcho_f1"]
    honcho = section["honcho_f1"]
    assert (honcho["best"], honcho["equal"], honcho["n"], honcho["decimals"]) == ("f1_locomo", 1986, 1986, 3)
    assert honcho["max_difference"] <= 1e-3


def test_summary_round_trips_the_new_sections() -> None:
    data = {
        "input": {"path": "/x.json", "sha256": "0", "format": "qa_results"},
        "versions": {}, "category_names": {}, "counts": {}, "metrics": {},
        "stored_vs_recomputed": {"f1_score": {"best": "f1_mem0"}},
        "runs": {"n_runs": 2, "files": ["a.json", "b.json"], "lexical": {}},
    }
    again = RunSummary.from_json(data).to_json()
    assert again["stored_vs_recomputed"] == data["stored_vs_recomputed"]
    assert again["runs"] == data["runs"]


# ---------------------------------------------------------------- 10. runs


def test_runs_are_each_scored_with_mean_and_sample_std_in_summary_and_report(tmp_path: Path) -> None:
    _write(tmp_path, [_qa("q1", llm_score=1), _qa("q2", llm_score=0)], "run1.json")
    _write(tmp_path, [_qa("q1", llm_score=1), _qa("q2", "wrong", llm_score=1)], "run2.json")
    result = run_job(tmp_path, runs=["run1.json", "run2.json"])
    runs = result.summary["runs"]
    assert (runs["n_runs"], runs["files"]) == (2, ["run1.json", "run2.json"])
    f1 = runs["lexical"]["f1"]["overall"]
    assert f1["per_run"] == [1.0, 0.5]
    assert (round(100 * f1["mean"], 2), round(100 * f1["std"], 2)) == (75.00, 35.36)
    assert runs["lexical"]["f1_locomo_official"]["4"]["per_run"] == [1.0, 0.5]
    report = (result.output_dir / "report.md").read_text()
    runs_table = report.split("## Runs (data.runs: 2 files)")[1]
    assert "| overall (1-4) | 100.00 | 50.00 | 75.00 ± 35.36 |" in runs_table
    # stored J of each run file: 50.00 and 100.00
    assert "| overall (1-4) | 50.00 | 100.00 | 75.00 ± 35.36 |" in report


def test_mean_and_sample_std_of_two_runs() -> None:
    mean, std = mean_and_sample_std([0.5, 1.0, None])
    assert (mean, round(std or 0, 4)) == (0.75, 0.3536)
    assert mean_and_sample_std([0.5]) == (0.5, None)
    assert mean_and_sample_std([]) == (None, None)


# ---------------------------------------------------------------- sweeps: data.path lists and globs


def _job(tmp_path: Path, **data: object) -> ExperimentConfig:
    return ExperimentConfig(data=DataConfig(**data), tracking=TrackingConfig(enabled=False))


def test_sweep_precheck_accepts_a_list_a_glob_and_runs(tmp_path: Path) -> None:
    (tmp_path / "conv").mkdir()
    _write(tmp_path, [_qa("q1")], "conv/a.json")
    _write(tmp_path, [_qa("q1")], "conv/b.json")
    assert sweep.job_problems(_job(tmp_path, path=["conv/a.json", "conv/b.json"]), tmp_path) == []
    assert sweep.job_problems(_job(tmp_path, path="conv/*.json"), tmp_path) == []
    assert sweep.job_problems(_job(tmp_path, runs=["conv/a.json", "conv/b.json"]), tmp_path) == []


def test_sweep_precheck_names_a_missing_file_of_a_list_and_an_empty_glob(tmp_path: Path) -> None:
    _write(tmp_path, [_qa("q1")], "a.json")
    problems = sweep.job_problems(_job(tmp_path, path=["a.json", "gone.json"]), tmp_path)
    assert problems == [f"data.path: no such file ({tmp_path / 'gone.json'})"]
    problems = sweep.job_problems(_job(tmp_path, path="nothing/*.json"), tmp_path)
    assert problems == ["data.path: nothing/*.json: no file matches this pattern"]
    problems = sweep.job_problems(_job(tmp_path, runs=["a.json", "b.json"]), tmp_path)
    assert problems == [f"data.runs: no such file ({tmp_path / 'b.json'})"]
