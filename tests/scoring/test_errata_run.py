"""data.errata in a run: both keys per category in summary.json, report section, card (issue 13, part 3)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import CONF_DIR, SHARED_DATA
from hydra import compose, initialize_config_dir
from test_errata import QUESTIONS, _two_entries

from locomo_exp.config import ExperimentConfig, register_configs, to_experiment_config
from locomo_exp.data import DataValidationError
from locomo_exp.experiment import run_experiment
from locomo_exp.scoring.errata import score_errata

DATA = SHARED_DATA
AUDIT = DATA / "locomo_audit_errors.json"
HONCHO = DATA / "predictions" / "honcho_locomo10_qa.json"


def _typed(*overrides: str) -> ExperimentConfig:
    register_configs()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(CONF_DIR)
    ):
        return to_experiment_config(
            compose(config_name="config", overrides=["tracking=none", *overrides])
        )


def _input(tmp_path: Path) -> Path:
    records = [
        {
            "question_id": f"q{i}",
            "conversation_id": q["conversation_id"],
            "question": q["question"],
            "ground_truth": q["ground_truth"],
            "predicted_answer": q["prediction"],
            "category": q["category"],
        }
        for i, q in enumerate(QUESTIONS)
    ]
    path = tmp_path / "five.json"
    path.write_text(json.dumps(records))
    return path


def test_run_with_errata_scores_both_keys_and_ceiling_exact(tmp_path):
    errata = _two_entries(tmp_path)
    result = run_experiment(
        _typed(f"data.path={_input(tmp_path)}", f"data.errata={errata}"), tmp_path / "out", tmp_path
    )
    out = tmp_path / "out"
    key = json.loads((out / "summary.json").read_text())["answer_key"]
    assert (key["n_entries"], key["n_matched"], key["n_score_changing"]) == (2, 2, 2)
    assert key["sha256"] == hashlib.sha256(errata.read_bytes()).hexdigest()
    f1 = {
        g: (v["n"], v["original"], v["corrected"], v["ceiling"], v["above_ceiling"])
        for g, v in key["metrics"]["f1_locomo"].items()
    }
    assert f1 == {
        "1": (1, 100.0, 100.0, 100.0, False),
        "2": (2, 50.0, 100.0, 50.0, False),
        "4": (2, 50.0, 100.0, 50.0, False),
        "overall_1_4": (5, 60.0, 100.0, 60.0, False),
        "overall": (5, 60.0, 100.0, 60.0, False),
    }
    assert sorted(key["metrics"]) == ["bleu1", "f1_locomo", "f1_mem0", "f1_squad"]
    report = result.report_path.read_text()
    assert "## Answer key: original vs corrected" in report
    assert (
        "- Entries matched to questions (conversation + question text): 2 of 2; 2 change scores"
        in report
    )
    assert "| 2 temporal | 2 | 1 | 50.00 | 50.00 | 100.00 |  |" in report
    # from a new user's trial: the card said "corrected" while every headline used the original
    assert (
        "- Answer key: original LoCoMo for every headline number; a corrected key (errata "
        f"{errata}, sha256 {key['sha256']}) is scored beside it" in report
    )
    card = json.loads((out / "card.json").read_text())
    assert card["answer_key"] == {
        "version": "original",
        "errata_path": str(errata),
        "errata_sha256": key["sha256"],
        "corrected_scored_beside": True,
    }


def test_score_above_ceiling_is_flagged_in_the_report(tmp_path):
    records = json.loads(_input(tmp_path).read_text())
    records[1]["predicted_answer"] = "2022"  # right under the original (wrong) key
    path = tmp_path / "five.json"
    path.write_text(json.dumps(records))
    result = run_experiment(
        _typed(f"data.path={path}", f"data.errata={_two_entries(tmp_path)}"),
        tmp_path / "o",
        tmp_path,
    )
    key = json.loads((tmp_path / "o" / "summary.json").read_text())["answer_key"]
    assert key["metrics"]["f1_locomo"]["2"] == {
        "n": 2,
        "original": 100.0,
        "corrected": 50.0,
        "ceiling": 50.0,
        "above_ceiling": True,
    }
    assert (
        "| 2 temporal | 2 | 1 | 50.00 | 100.00 | 50.00 | ⚠ above ceiling |"
        in result.report_path.read_text()
    )


def test_missing_errata_file_is_refused_before_any_work(tmp_path):
    with pytest.raises(DataValidationError, match="nope.json"):
        run_experiment(
            _typed("data=example", f"data.errata={tmp_path / 'nope.json'}"),
            tmp_path / "out",
            tmp_path,
        )
    assert not (tmp_path / "out" / "report.md").exists()


def test_run_without_errata_has_original_key_and_no_section(tmp_path):
    result = run_experiment(_typed("data=example"), tmp_path / "out", tmp_path)
    assert "answer_key" not in json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "Answer key: original vs corrected" not in result.report_path.read_text()
    assert (
        json.loads((tmp_path / "out" / "card.json").read_text())["answer_key"]["version"]
        == "original"
    )


@pytest.mark.skipif(not (AUDIT.is_file() and HONCHO.is_file()), reason="../shared/data not present")
def test_real_audit_against_the_honcho_file():
    from locomo_exp.data import load_results

    loaded = load_results(HONCHO)
    section = score_errata(loaded.records, AUDIT, with_bleu1=False)
    assert (
        len(loaded.records),
        section["n_entries"],
        section["n_matched"],
        section["n_score_changing"],
    ) == (
        1986,
        156,
        156,
        99,
    )
    f1 = section["metrics"]["f1_locomo"]
    assert {
        g: (v["n"], round(v["original"], 2), round(v["corrected"], 2), round(v["ceiling"], 2))
        for g, v in f1.items()
        if g != "5" and g != "overall"
    } == {
        "1": (282, 22.68, 22.95, 90.07),
        "2": (321, 2.22, 2.34, 91.90),
        "3": (96, 12.24, 13.23, 90.62),
        "4": (841, 21.41, 21.12, 95.72),
        "overall_1_4": (1540, 17.07, 17.05, 93.57),
    }
    assert not any(v["above_ceiling"] for v in f1.values())
