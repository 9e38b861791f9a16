"""The card on every run: card.json, the report block, baseline cards (issue 13, part 2)."""

from __future__ import annotations

import json

from conftest import CONF_DIR
from hydra import compose, initialize_config_dir

from locomo_exp.config import register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment
from locomo_exp.report.card import baseline_card_differences, baseline_card_unstated


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


def test_fields_deciding_comparability_a_baseline_does_not_state_are_named():
    baselines = _typed().baselines
    run = {"f1": {"variant": "locomo"}, "question_set": "1,540", "answer_key": {"version": "original"}}
    assert baseline_card_unstated(run, baselines["locomo_paper"].card) == ["question_set (this run: 1,540)"]
    assert baseline_card_unstated(run, baselines["mem0_paper_f1"].card) == []  # states 1,540


def test_each_baseline_table_gets_its_own_note_under_its_own_heading(tmp_path):
    result = run_experiment(_typed("data=example"), tmp_path / "out", tmp_path)
    report = result.report_path.read_text()
    sections = report.split("\n### ")
    locomo = next(s for s in sections if s.startswith("vs LoCoMo paper"))
    mem0 = next(s for s in sections if s.startswith("vs Mem0 paper, F1"))
    assert locomo.splitlines()[2] == (
        "Not stated by LoCoMo paper (Maharana et al., ACL 2024), so not checked: "
        "question_set (this run: custom (20))"
    )
    assert mem0.splitlines()[2] == (
        "Measured differently from Mem0 paper, F1 (Mem0 harness): question_set: custom (20) vs 1,540"
    )
    assert all(s.count("Measured differently") + s.count("Not stated by") <= 1 for s in sections)
