"""The plain command reads every layout of issue 10 with no option.

``python -m locomo_exp data=file data.path=FILE tracking=none`` (or ``data.runs=[...]``): each
docs/formats.md layout-table row as an invented miniature, composed through Hydra with exactly
those overrides and run in process (fast); one subprocess runs the literal command (slow).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CONF_DIR, run_cli
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from locomo_exp.config import register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment


def _qa(question: str, prediction: str, verdict: Any, category: int = 4) -> dict[str, Any]:
    return {"question": question, "ground_truth": "Paris", "predicted_answer": prediction,
            "category": category, "llm_score": verdict}


def _judged(question: str, verdicts: list[bool]) -> dict[str, Any]:
    return {"question": question, "answer": "Paris", "response": "Paris", "category": 4,
            "llm_judgments": {f"judgment_{i + 1}": v for i, v in enumerate(verdicts)}}


# name -> (files to write, the data overrides, format, questions, stored J overall)
LAYOUTS: dict[str, tuple[dict[str, Any], list[str], str, int, float | None]] = {
    "qa_results": (
        {"a.json": [_qa("Q1?", "Paris", 1), _qa("Q2?", "Rome", 0)]},
        ["data.path=a.json"], "qa_results", 2, 50.0),
    "locomo_with_name_llm": (
        {"a.json": [{"sample_id": "conv-1", "qa": [
            {"question": "Q1?", "answer": "Paris", "category": 4, "sys_prediction": "Paris",
             "sys_llm": 1, "sys_f1": 1.0},
            {"question": "Q2?", "answer": "Rome", "category": 2, "sys_prediction": "Oslo",
             "sys_llm": 0, "sys_f1": 0.0}]}]},
        ["data.path=a.json"], "locomo", 2, 50.0),
    "mem0_harness": (
        {"a.json": {"0": [{"question": "Q1?", "answer": "Paris", "response": "Paris",
                           "category": "1", "llm_score": 1, "f1_score": 1.0, "bleu_score": 1.0},
                          {"question": "Q2?", "answer": "Paris", "response": "Rome",
                           "category": "2", "llm_score": 0, "f1_score": 0.0, "bleu_score": 0.0}]}},
        ["data.path=a.json"], "mem0", 2, 50.0),
    "fields_detected_zep": (
        {"a.json": {"locomo_experiment_user_0": [
            {"question": "Q1?", "answer": "Paris", "golden_answer": "Paris", "grade": True, "category": 1},
            {"question": "Q2?", "answer": "Rome", "golden_answer": "Paris", "grade": False, "category": 4}]}},
        ["data.path=a.json"], "fields", 2, 50.0),
    "records_beside_metadata": (
        {"a.json": {"summary": {"accuracy": 0.5}, "detailed_results": [
            {"question": "Q1?", "standard_answer": "Paris", "generated_answer": "Paris",
             "category": 4, "is_correct": True},
            {"question": "Q2?", "standard_answer": "Paris", "generated_answer": "Rome",
             "category": 4, "is_correct": False}]}},
        ["data.path=a.json"], "fields", 2, 50.0),
    "several_judgments": (
        {"a.json": {"accuracy": 0.44, "detailed_results": {"conv_a": [
            _judged("Q1?", [True, True, False]), _judged("Q2?", [True, False, False]),
            _judged("Q3?", [True, False, False])]}}},
        ["data.path=a.json"], "mem0", 3, 44.44),
    "fraction_verdicts": (
        {"a.json": [_qa("Q1?", "Paris", 1.0), _qa("Q2?", "Paris", 0.6667), _qa("Q3?", "Rome", 0.0)]},
        ["data.path=a.json"], "qa_results", 3, 55.56),
    "text_verdicts": (
        {"a.json": [{"question": "Q1?", "gold_answer": "Paris", "prediction": "Paris",
                     "category": 4, "judgment": "CORRECT"},
                    {"question": "Q2?", "gold_answer": "Paris", "prediction": "Rome",
                     "category": 4, "judgment": "WRONG"}]},
        ["data.path=a.json"], "fields", 2, 50.0),
    "one_file_per_conversation_list": (
        {"c0.json": [_qa("Q1?", "Paris", 1)], "c1.json": [_qa("Q1?", "Rome", 0)]},
        ["data.path=[c0.json,c1.json]"], "qa_results", 2, 50.0),
    "one_file_per_conversation_glob": (
        {"conv/c0.json": [_qa("Q1?", "Paris", 1)], "conv/c1.json": [_qa("Q1?", "Rome", 0)]},
        ["data.path=conv/*.json"], "qa_results", 2, 50.0),
    "one_file_per_run": (
        {"r1.json": [_qa("Q1?", "Paris", 1), _qa("Q2?", "Paris", 0)],
         "r2.json": [_qa("Q1?", "Paris", 1), _qa("Q2?", "Paris", 1)]},
        ["data.runs=[r1.json,r2.json]"], "qa_results", 2, 50.0),
}


def _write_files(tmp_path: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content), encoding="utf-8")


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_plain_command_reads_every_layout_with_no_option(tmp_path: Path, layout: str) -> None:
    files, data, fmt, n, stored_j = LAYOUTS[layout]
    _write_files(tmp_path, files)
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        cfg = to_experiment_config(
            compose(config_name="config", overrides=["data=file", *data, "tracking=none"])
        )
    summary = run_experiment(cfg, tmp_path / "out", tmp_path).summary
    assert summary["input"]["format"] == fmt
    assert summary["counts"]["overall"] == n
    assert round(summary["stored_judge"]["overall"]["mean"], 2) == stored_j
    assert summary["status"] == {"f1": "ok"}


def test_runs_layout_reports_75_00_pm_35_36_across_runs(tmp_path: Path) -> None:
    files, data, *_ = LAYOUTS["one_file_per_run"]
    _write_files(tmp_path, files)
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        cfg = to_experiment_config(
            compose(config_name="config", overrides=["data=file", *data, "tracking=none"])
        )
    summary = run_experiment(cfg, tmp_path / "out", tmp_path).summary
    across = summary["stored_judge_detail"]["across_runs"]["overall"]
    assert (round(across["mean"], 2), round(across["std"], 2)) == (75.00, 35.36)
    assert summary["runs"]["lexical"]["f1"]["overall"]["per_run"] == [1.0, 1.0]


@pytest.mark.slow
def test_the_literal_plain_command_reads_locomo_output_with_stored_f1(tmp_path: Path) -> None:
    files, *_ = LAYOUTS["locomo_with_name_llm"]
    _write_files(tmp_path, files)
    proc = run_cli("data=file", "data.path=a.json", "tracking=none", f"hydra.run.dir={tmp_path / 'out'}",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["stored_judge"]["overall"]["mean"] == 50.0
    assert summary["stored_vs_recomputed"]["sys_f1"]["best"] == "f1_locomo"
    assert summary["stored_vs_recomputed"]["sys_f1"]["equal"] == 2
