"""mode=compare of two LoCoMo-Plus runs logs an MLflow run and tags the flipped verdicts
(issue 29 "MLflow run for its compare", issue 30 §2); the counts are enumerated by hand."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient

from locomo_exp.benchmarks.locomo_plus import PLUGIN
from locomo_exp.cli.jobs import run_compare_from_cli

# stored verdicts of 12 Cognitive items (kumiho's layout, a boolean verdict)
VERDICTS_A = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0]
VERDICTS_B = [1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0]
# B against A: lost at items 1 and 6, gained at items 2, 5 and 8
GAINED, LOST = {"cog-2", "cog-5", "cog-8"}, {"cog-1", "cog-6"}


def stored_run(tmp_path: Path, typed_config: Any, name: str, verdicts: list[int],
               *overrides: str) -> Path:
    rows = [{"question_id": f"cog-{i}", "question": f"An invented trigger {i}.",
             "question_type": "cognitive/state", "ground_truth": "Ann: an invented cue.",
             "prediction": f"An invented reply {i}.", "judge_score": bool(v),
             "metadata": {"base_conv_idx": i % 6, "judge_reason": "invented"}}
            for i, v in enumerate(verdicts)]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    cfg = typed_config("data=file", f"data.path={path}", *overrides)
    assert PLUGIN.run(cfg, tmp_path / name, tmp_path).exit_status == 0
    return tmp_path / name


def test_compare_logs_a_run_and_tags_the_flipped_items(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = stored_run(tmp_path, typed_config, "runA", VERDICTS_A, "tracking.questions=true")
    b = stored_run(tmp_path, typed_config, "runB", VERDICTS_B, "tracking.questions=true")
    capsys.readouterr()
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]",
                       "compare.bootstrap_samples=300", "compare.permutation_samples=300")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    assert "Flipped verdicts runB vs runA: 3 gained, 2 lost" in out
    body = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    cognitive = body["groups"]["Cognitive"]
    client = MlflowClient(os.environ["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name("locomo_exp")
    [run] = client.search_runs([experiment.experiment_id],
                               filter_string="tags.`locomo_exp.kind` = 'compare'")
    params, metrics = run.data.params, run.data.metrics
    assert (params["compare.run.0"], params["compare.run.1"]) == (str(a), str(b))
    assert params["compare.bootstrap_samples"] == "300"
    prefix = "compare/runA_vs_runB/Cognitive"
    # the difference A - B in points: (8 - 9) correct of 12 items
    assert metrics[f"{prefix}/diff"] == pytest.approx(100 * (8 - 9) / 12)
    assert metrics[f"{prefix}/diff"] == pytest.approx(100 * cognitive["difference"])
    assert metrics[f"{prefix}/ci_low"] == pytest.approx(100 * cognitive["ci"][0])
    assert metrics[f"{prefix}/p"] == pytest.approx(cognitive["pvalue"])
    assert metrics[f"{prefix}/p_holm"] == pytest.approx(cognitive["pvalue_holm"])
    assert not any("factual/" in name for name in metrics)  # no factual pair: not measured
    assert metrics["compare/runA_vs_runB/flips/gained"] == 3
    assert metrics["compare/runA_vs_runB/flips/lost"] == 2
    for path, gained, lost in ((b, GAINED, LOST), (a, LOST, GAINED)):
        [logged] = client.search_runs(
            [experiment.experiment_id],
            filter_string=f"tags.`locomo_exp.output_dir` = '{path.resolve()}'")
        traces = client.search_traces(locations=[experiment.experiment_id],
                                      run_id=logged.info.run_id,
                                      filter_string="tag.flipped = 'true'")
        seen = {t.info.tags["question_id"]: t.info.tags["flip"] for t in traces}
        assert seen == {**dict.fromkeys(gained, "gained"), **dict.fromkeys(lost, "lost")}


def test_runs_without_traces_still_get_the_comparison_run(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = stored_run(tmp_path, typed_config, "A", VERDICTS_A, "tracking=none")
    b = stored_run(tmp_path, typed_config, "B", VERDICTS_B, "tracking=none")
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]", "compare.bootstrap_samples=50")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    assert "Flipped verdicts B vs A: 3 gained, 2 lost" in out and "MLflow: run " in out
    assert "compareToRunUuid" not in out  # no compared run in MLflow: nothing tagged
    runs = MlflowClient(os.environ["MLFLOW_TRACKING_URI"]).search_runs(
        [MlflowClient().get_experiment_by_name("locomo_exp").experiment_id])
    assert [r.data.tags["locomo_exp.kind"] for r in runs] == ["compare"]
