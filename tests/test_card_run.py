"""The card on every run: card.json, the report block, baseline cards (issue 13, part 2)."""

from __future__ import annotations

import json

from conftest import CONF_DIR
from hydra import compose, initialize_config_dir

from locomo_exp.config import register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment
from locomo_exp.report.card import baseline_card_differences


def _typed(*overrides: str):
    register_configs()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(CONF_DIR)
    ):
        return to_experiment_config(
            compose(config_name="config", overrides=["tracking=none", *overrides])
        )


def test_every_run_writes_card_json_and_the_block_after_the_title(tmp_path):
    result = run_experiment(_typed("data=example", "f1=squad"), tmp_path / "out", tmp_path)
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["f1"]["variant"] == "squad"
    assert card["question_set"] == "custom (20)"
    assert card["answer_key"] == {  # the example is not LoCoMo: its golds are its own
        "version": "original", "errata_path": None, "errata_sha256": None, "locomo": False
    }
    assert card["input"]["name"] == "qa_results.json"
    report = result.report_path.read_text().splitlines()
    assert report[:3] == ["# LoCoMo evaluation report", "", "## How this was measured"]
    assert "- Answer key: the golds in the input file" in report
    assert tmp_path / "out" / "card.json" in result.files


def test_published_baselines_carry_card_fields():
    baselines = _typed().baselines
    assert baselines["mem0_paper_j"].card["judge"] == {
        "model": "gpt-4o-mini",
        "model_snapshot": None,
        "protocol": "binary",
        "temperature": None,
        "runs": None,
    }
    assert baselines["mem0_paper_f1"].card["f1"]["variant"] == "mem0"
    assert baselines["locomo_paper"].card["question_set"] is None


def test_baseline_differences_list_only_what_the_publication_states():
    run = {
        "f1": {"variant": "locomo"},
        "question_set": "1,540",
        "judge": {"model": "claude-sonnet-4-6", "protocol": "rubric", "runs": 10},
        "answer_key": {"version": "original", "errata_sha256": None},
    }
    baseline = _typed().baselines["mem0_paper_j"].card
    assert baseline_card_differences(run, baseline) == [
        "judge.model: claude-sonnet-4-6 vs gpt-4o-mini",
        "judge.protocol: rubric vs binary",
    ]


def test_report_lists_differing_card_fields_above_the_baseline_table(tmp_path):
    result = run_experiment(_typed("data=example"), tmp_path / "out", tmp_path)
    report = result.report_path.read_text()
    line = "Measured differently from Mem0 paper, F1 (Mem0 harness): question_set: custom (20) vs 1,540"
    assert line in report
    assert report.index(line) < report.index("### vs Mem0 paper, F1 (Mem0 harness)")
