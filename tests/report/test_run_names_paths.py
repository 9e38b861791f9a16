"""Sweep child names and parent metric labels show a swept file by its name, not its path."""

from __future__ import annotations

import pytest

from locomo_exp.data.locomo import detect_prediction_key
from locomo_exp.tracking.run_names import child_run_name, sweep_value_label


def test_a_swept_data_path_is_shown_by_its_file_name() -> None:
    swept = {"data.path": "/work/shared/data/predictions/memobase_eval_0710.json", "f1": "locomo"}
    assert child_run_name(swept, scorer="f1") == "memobase_eval_0710 · f1=locomo · f1"
    assert sweep_value_label(swept) == "memobase_eval_0710 f1:locomo"


def test_a_dataset_without_predictions_is_named_as_such() -> None:
    samples = [{"sample_id": "conv-26", "qa": [{"question": "q", "answer": "a", "category": 1}]}]
    with pytest.raises(ValueError, match="no '<name>_prediction' field: this looks like LoCoMo's dataset"):
        detect_prediction_key(samples)
