"""Errors, one line each, before anything is written (issue 18 §6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, Composer

from locomo_exp.data import DataValidationError
from locomo_exp.data.detect import suggested_fields_command
from locomo_exp.data.loading import load_results
from locomo_exp.experiment import run_experiment
from locomo_exp.overrides import wrong_value_types


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        pytest.param("judge.runs=ten", "judge.runs=ten: expected an integer", id="int"),
        pytest.param("judge.temperature=hot", "judge.temperature=hot: expected a number or null",
                     id="optional-float"),
        pytest.param("f1.variant=bogus", "f1.variant=bogus: expected one of locomo, squad, mem0",
                     id="enum"),
        pytest.param("overwrite=maybe", "overwrite=maybe: expected true or false", id="bool"),
        pytest.param("judge.runs=1,ten", "judge.runs=ten: expected an integer", id="sweep-value"),
    ],
)
def test_a_value_of_the_wrong_type_is_one_line_before_hydra(override: str, problem: str) -> None:
    assert wrong_value_types([override]) == [problem]


@pytest.mark.parametrize(
    "override",
    ["judge.runs=3", "judge.temperature=null", "judge.runs=${oc.env:RUNS}", "data.path=1.json",
     "judge=haiku-4-5", "+foo=1", "hydra.run.dir=x", "judge.audit.max_share=null"],
)
def test_values_the_schema_accepts_pass(override: str) -> None:
    assert wrong_value_types([override]) == []


@pytest.mark.slow
def test_judge_runs_ten_is_the_projects_one_line_not_hydras_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "HYDRA_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "judge.runs=ten", "tracking=none"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["error: judge.runs=ten: expected an integer"]
    assert not any(tmp_path.iterdir())  # nothing written


def test_an_unknown_layout_names_the_keys_found_and_gives_a_ready_command(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps([{"q": "What?", "gold": "a", "sys_out": "b", "type": 1}]))
    with pytest.raises(DataValidationError) as refused:
        load_results(path)
    message = str(refused.value)
    assert str(path) in message
    assert (
        "cannot detect the format: the records have the keys q, gold, sys_out, type, and no "
        "known set of question, gold answer and prediction fields; name them, e.g. "
        "data.format=fields data.fields.question=q data.fields.ground_truth=gold "
        "data.fields.prediction=sys_out data.fields.category=type"
    ) in message


def test_the_suggested_command_reads_the_file(tmp_path: Path, typed_config: Composer) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps([
        {"q": f"What {i}?", "gold": "a", "sys_out": "a" if i % 2 else "b", "type": 1 + i % 4}
        for i in range(8)
    ]))
    command = suggested_fields_command(["q", "gold", "sys_out", "type"])
    result = run_experiment(
        typed_config("tracking=none", "data=file", f"data.path={path}", *command.split()),
        tmp_path / "out", PROJECT_ROOT,
    )
    assert result.summary["counts"]["overall"] == 8


def test_a_role_no_key_suggests_is_left_for_the_user() -> None:
    assert suggested_fields_command(["alpha", "beta"]) == (
        "data.format=fields data.fields.question=<key> data.fields.ground_truth=<key> "
        "data.fields.prediction=<key> data.fields.category=<key>"
    )


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("{not json", id="invalid-json"),
        pytest.param(json.dumps([{"q": "x", "gold": "y", "z": 1}]), id="unknown-layout"),
    ],
)
def test_input_errors_leave_no_mlflow_run(
    tmp_path: Path, typed_config: Composer, content: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    db = tmp_path / "mlflow.db"
    with pytest.raises(DataValidationError):
        run_experiment(
            typed_config(f"tracking.uri=sqlite:///{db}", "data=file", f"data.path={path}"),
            tmp_path / "out", PROJECT_ROOT,
        )
    assert not db.exists()
    assert not (tmp_path / "out" / "report.md").exists()
