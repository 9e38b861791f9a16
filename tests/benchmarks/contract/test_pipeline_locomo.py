"""LoCoMo's job on the one pipeline (issue 26 §2): ``run_experiment`` is ``run_job``.

LoCoMo's hooks (``benchmarks/locomo/``) make a *recorded* job; every registered pipeline
plug-in keeps the pipeline's plain steps (their defaults), so their outputs stay as they were.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE

from locomo_exp.benchmarks import pipeline, registry
from locomo_exp.benchmarks.locomo.steps import LocomoSteps
from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.steps import JobSteps
from locomo_exp.experiment import run_experiment


@pytest.mark.parametrize(
    "plugin", [p for p in registry.registered() if isinstance(p, PipelinePlugin)],
    ids=lambda p: p.name)
def test_a_pipeline_plugin_keeps_the_plain_steps(plugin: PipelinePlugin) -> None:
    steps = plugin.steps()
    assert steps.records_first is False
    # the preflight hooks LoCoMo added keep their defaults: one data.path, no trust plan
    for hook in ("input_paths", "source", "plan_trust", "before_judge", "judge_failed"):
        assert getattr(type(steps), hook) is getattr(JobSteps, hook), hook


def test_run_experiment_is_run_job_with_locomo_steps(
    typed_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real = pipeline.run_job

    def spy(steps: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(type(steps).__name__)
        return real(steps, *args, **kwargs)

    monkeypatch.setattr(pipeline, "run_job", spy)
    result = run_experiment(typed_config("tracking=none", "data=example"), tmp_path / "out",
                            tmp_path)
    assert seen == ["LocomoSteps"]
    rows = [json.loads(line) for line in
            (tmp_path / "out" / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert result.summary["counts"]["overall"] == len(rows) == 20  # the example's 20 answers
    # the mean of the 20 rows' F1 (0-1), on the 0-100 scale of the metrics
    assert result.metrics["f1/overall"] == pytest.approx(100 * sum(r["f1"] for r in rows) / 20)
    assert result.metrics["f1/overall"] == pytest.approx(48.41346153846155)


def test_two_pooled_files_are_every_input_path(typed_config: Any, tmp_path: Path) -> None:
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_bytes(EXAMPLE.read_bytes())
    cfg = typed_config("tracking=none", "data=file", "data.runs=[a.json,b.json]")
    assert LocomoSteps().input_paths(cfg, tmp_path) == [tmp_path / "a.json", tmp_path / "b.json"]
