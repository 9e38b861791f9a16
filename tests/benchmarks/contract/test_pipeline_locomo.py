"""LoCoMo's job on the one pipeline (issue 26 §2), beside the contract suite's LoCoMo case.

LoCoMo's hooks (``benchmarks/locomo/``) make a *recorded* job; every other registered
pipeline plug-in keeps the pipeline's plain steps (their defaults), so their outputs stay as
they were. The job itself (outputs, judge, batch, resume, refusals, MLflow, sweep, compare)
is the contract suite's ``locomo`` case (:mod:`test_plugin_contract_pipeline`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE

from locomo_exp.benchmarks import registry
from locomo_exp.benchmarks.locomo.steps import LocomoSteps
from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.steps import JobSteps
from locomo_exp.cli.jobs import print_result, run_plugin_from_cli
from locomo_exp.experiment import run_experiment


@pytest.mark.parametrize(
    "plugin", [p for p in registry.registered()[:-1] if isinstance(p, PipelinePlugin)],
    ids=lambda p: p.name)
def test_a_pipeline_plugin_keeps_the_plain_steps(plugin: PipelinePlugin) -> None:
    steps = plugin.steps()
    assert steps.records_first is False
    # the preflight hooks LoCoMo added keep their defaults: one data.path, no trust plan
    for hook in ("input_paths", "source", "plan_trust", "before_judge", "judge_failed"):
        assert getattr(type(steps), hook) is getattr(JobSteps, hook), hook


def test_the_command_line_prints_the_jobs_console_as_print_result_did(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # LoCoMo registered: the command line prints its JobResult's console (run_plugin_from_cli);
    # an in-process run_experiment's print_result gives the same lines (tracking on: MLflow's)
    store = f"sqlite:///{tmp_path / 'm.db'}"
    cfg = typed_config("data=example", f"tracking.uri={store}")
    plugin = registry.plugin_for(cfg, tmp_path)
    assert plugin.name == "locomo"
    run_plugin_from_cli(plugin, cfg, tmp_path / "cli", tmp_path)
    printed = capsys.readouterr().out
    print_result(run_experiment(cfg, tmp_path / "lib", tmp_path))
    again = capsys.readouterr().out
    run_ids = re.findall(r"MLflow: run (\w+) ", printed + again)
    assert len(run_ids) == 2 and run_ids[0] != run_ids[1]
    assert printed.replace(run_ids[0], "ID") == again.replace(run_ids[1], "ID").replace(
        str(tmp_path / "lib"), str(tmp_path / "cli"))
    lines = printed.splitlines()
    assert lines[:3] == ["", f"Scored 20 questions from {EXAMPLE}",
                         "F1 = f1_locomo (f1.variant=locomo); scores in percent"]
    assert "overall               20     48.41     39.36" in lines  # the example's F1, BLEU-1
    assert f"Report: {tmp_path / 'cli' / 'report.md'}" in lines


def test_two_pooled_files_are_every_input_path(typed_config: Any, tmp_path: Path) -> None:
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_bytes(EXAMPLE.read_bytes())
    cfg = typed_config("tracking=none", "data=file", "data.runs=[a.json,b.json]")
    assert LocomoSteps().input_paths(cfg, tmp_path) == [tmp_path / "a.json", tmp_path / "b.json"]
