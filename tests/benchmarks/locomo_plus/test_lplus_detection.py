"""The plug-in claims a stored LoCoMo-Plus run of either layout, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import EXAMPLE

from locomo_exp.benchmarks import plugin_for
from locomo_exp.benchmarks.locomo_plus import PLUGIN


def _file(tmp_path: Path, name: str, rows: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_both_layouts_are_claimed_and_a_locomo_file_is_not(typed_config, tmp_path: Path) -> None:
    authors = _file(tmp_path, "judged.json", [{
        "question_input": "Where did Ann go?", "evidence": "", "category": "temporal",
        "ground_truth": "Paris", "prediction": "Paris", "model": "m", "judge_label": "correct",
        "judge_reason": "same city", "judge_score": 1.0}])
    kumiho = _file(tmp_path, "all_results.json", [{
        "question_id": "cog-0", "question_type": "cognitive/goal", "judge_score": True}])
    for path in (authors, kumiho):
        cfg = typed_config("data=file", f"data.path={path}")
        assert plugin_for(cfg, tmp_path) is PLUGIN
    assert plugin_for(typed_config("data=file", f"data.path={EXAMPLE}"), tmp_path).name == "locomo"
    missing = typed_config("data=file", f"data.path={tmp_path / 'nope.json'}")
    assert not PLUGIN.claims(missing, tmp_path)  # never raises
