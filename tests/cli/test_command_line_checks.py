"""Checks run on the command line before Hydra: group choices and keys (from a new user's trial)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT

from locomo_exp.cli import check_command_line, key_overrides
from locomo_exp.config.checks import (
    CONF_DIR,
    config_groups,
    unknown_group_options,
    unknown_override_keys,
)

SECRET = "sk-proj-trialsecret0123456789abcdefABCDEF"
LME = PROJECT_ROOT.parent / "shared" / "data" / "longmemeval"


def test_every_group_choice_passes_the_key_check() -> None:
    # benchmark is a group of @package _global_ options: it has no field in the schema,
    # and `benchmark=longmemeval` (docs/longmemeval.md) was refused as an unknown key
    groups = config_groups()
    assert groups["benchmark"] == ["beam", "locomo", "locomo_plus", "longmemeval"]
    assert "templates" not in groups
    overrides = [f"{group}={options[0]}" for group, options in groups.items()]
    assert unknown_override_keys(overrides) == []
    assert unknown_group_options(overrides) == []
    check_command_line(["benchmark=longmemeval", "scorer=judge", "judge.dry_run=true"])


def test_a_wrong_benchmark_names_the_options_and_templates_points_to_judge_template() -> None:
    assert unknown_group_options(["benchmark=lme"]) == [
        "benchmark=lme: no such option (available: beam, locomo, locomo_plus, longmemeval)"
    ]
    assert unknown_override_keys(["templates=binary-label-own-words"]) == [
        ("templates", "judge.template")
    ]
    assert sorted(p.stem for p in (CONF_DIR / "templates").glob("*.yaml")) == [
        "binary-label-own-words", "yes-no-by-kind-own-words"
    ]


@pytest.mark.parametrize(
    "override",
    [
        f"+hydra.job.env_set.OPENAI_API_KEY={SECRET}",  # Hydra's own way to set a variable
        f"+hydra.job.env_set.ANTHROPIC_API_KEY={SECRET}",
        f"+OPENAI_API_KEY={SECRET}",
        f"judge.api_key_env={SECRET}",  # the key pasted where the variable's name goes
        f"+judge.key={SECRET}",
        f"judge.model={SECRET}",
        "+hydra.job.env_set.ANTHROPIC_AUTH_TOKEN=abc",
        "+judge.access_token=abc",
    ],
)
def test_a_key_by_name_or_by_value_is_refused_without_repeating_it(override: str) -> None:
    message = key_overrides(["scorer=judge", override])
    assert message is not None
    assert override.split("=", 1)[1] not in message
    assert message.startswith(override.split("=", 1)[0] + "=...: ")
    assert "never accepted on the command line" in message


@pytest.mark.parametrize(
    "override",
    [
        "judge.api_key_env=MY_OPENAI_KEY",
        "judge.api_key_env=null",
        "data.records_key=detailed_results",
        "data.prediction_key=mysys_prediction",
        "data.path=risk-assessment-results-2024-final-v2.json",
        "data.path=/data/sk-runs/answers.json",
        "judge.model=gpt-4o-mini",
        "tracking.run_name=task-averaged-accuracy-sweep-0123",
    ],
)
def test_ordinary_overrides_are_not_taken_for_keys(override: str) -> None:
    assert key_overrides([override]) is None


@pytest.mark.slow
def test_a_key_through_hydras_env_set_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # from the trial: this override ran (exit 0) and the key went into card.json,
    # report.md's "Command:" line and .hydra/hydra.yaml
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OPENAI_"))}
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "scorer=judge", "judge=gpt-4o-mini",
         "judge.dry_run=true", f"+hydra.job.env_set.OPENAI_API_KEY={SECRET}",
         f"hydra.run.dir={run_dir}", "tracking=none"],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(PROJECT_ROOT)}, capture_output=True,
        text=True, timeout=600,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: +hydra.job.env_set.OPENAI_API_KEY=...: an API key is never accepted on the "
        "command line (it would be written to the run's saved config, card and report); export "
        "it in its environment variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, or the one named by "
        "judge.api_key_env)"
    ]
    assert SECRET not in done.stdout
    assert not run_dir.exists()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


@pytest.mark.slow
def test_benchmark_longmemeval_dry_run_counts_one_call_per_question(tmp_path: Path) -> None:
    # docs/longmemeval.md's "Judging a hypothesis file", as a dry run: LongMemEval's
    # protocol is one run per question (500 calls), not LoCoMo's default 10 runs
    if not LME.is_dir():
        pytest.skip(f"{LME} is absent (shared LongMemEval files)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "ANTHROPIC_"))}
    done = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "benchmark=longmemeval", "scorer=judge",
         "judge.dry_run=true", "data=file",
         f"data.path={LME / 'memory-agents' / 'my_predictions.jsonl'}",
         f"data.reference={LME / 'longmemeval_reference.json'}",
         f"hydra.run.dir={tmp_path / 'run'}", "tracking=none"],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(PROJECT_ROOT)}, capture_output=True,
        text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "judge dry run: 500 calls (0 cached, 500 to make)" in output
    assert "(at most 5000)" in output  # max_tokens 10 per call


@pytest.mark.parametrize("limit", [0, -5])
def test_a_bad_data_limit_is_a_setting_error_not_the_files(typed_config, limit: int) -> None:
    # from the trial: "1 problem(s) in the results file: - qa_results.json: data.limit must
    # be at least 1" blamed the example file for a setting
    from locomo_exp.config import ConfigValueError

    with pytest.raises(ConfigValueError) as refused:
        typed_config(f"data.limit={limit}")
    assert str(refused.value).endswith(
        f"data.limit={limit} must be at least 1 (or null: every question)"
    )


def test_input_problems_name_their_file_under_a_neutral_heading(tmp_path: Path) -> None:
    # data.reference=nope.json was reported as "1 problem(s) in the results file"; one problem
    # is now one line naming its file (no count line), several a count line then one each
    from locomo_exp.data import DataValidationError
    from locomo_exp.data.input_file import RecordProblem

    nope = tmp_path / "nope.json"
    error = DataValidationError([RecordProblem(str(nope), "", None, "file not found")])
    assert str(error) == f"{nope}: file not found"
    two = DataValidationError(
        [RecordProblem(str(nope), "", None, "file not found"),
         RecordProblem(str(nope), "[2]", "category", "is 9", position=2)]
    )
    assert str(two) == (
        f"2 problems in the input:\n  - {nope}: file not found\n"
        f"  - {nope}: record [2]: field 'category': is 9\n"
        "Fix the file, or set data.on_invalid=skip to score the valid records."
    )
