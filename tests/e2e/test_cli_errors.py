"""Command-line input mistakes: one clear line (never a traceback), typed text kept as typed."""

from __future__ import annotations

import errno
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, run_cli
from omegaconf import OmegaConf

from locomo_exp import tracking
from locomo_exp.config.checks import keep_typed_text, unknown_override_keys
from locomo_exp.report import run_dir as outputs
from locomo_exp.report.run_dir import OutputDirNotWritable, check_writable


def _stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


# ----------------------------------------------------------------------------- unit


def test_unknown_keys_are_found_before_hydra_with_a_suggestion() -> None:
    assert unknown_override_keys(
        [
            "judge.run=3",
            "data.pathh=x",
            "zzz=1",
            "judge.runs=3",
            "+judge.run=3",  # added keys are refused after composition, as before
            "category_names.6=other",  # free keys below a dict field
            "judge.model_info.input_usd_per_mtok=1",
            "hydra.run.dir=x",
            "hydra/launcher=joblib",
            "scorer=judge",
            "overwrite=true",
            "-m",
        ]
    ) == [("judge.run", "judge.runs"), ("data.pathh", "data.path"), ("zzz", None)]


def test_string_options_keep_the_text_hydra_turned_into_numbers() -> None:
    cfg = OmegaConf.create(
        {
            "data": {"path": "2024.1"},
            "tracking": {"experiment": "1000.0", "run_name": "True"},
            "judge": {"runs": 3, "temperature": 0.5},
        }
    )
    restored = keep_typed_text(
        cfg,
        [
            "data.path=2024.10",
            "tracking.experiment=10e2",
            "tracking.run_name=true",
            "judge.runs=3",  # an int option: untouched
            "judge.temperature=0.50",  # a float option: untouched
        ],
    )
    assert restored == ["data.path", "tracking.experiment", "tracking.run_name"]
    assert OmegaConf.to_container(cfg) == {
        "data": {"path": "2024.10"},
        "tracking": {"experiment": "10e2", "run_name": "true"},
        "judge": {"runs": 3, "temperature": 0.5},
    }


def test_read_only_output_dir_is_one_line_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(outputs.tempfile, "NamedTemporaryFile", read_only)
    with pytest.raises(OutputDirNotWritable) as refused:
        check_writable(tmp_path / "out")
    assert str(refused.value) == f"cannot write outputs to {tmp_path / 'out'}: Read-only file system"


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("foo://x", "Model registry functionality is unavailable; got unsupported URI 'foo://x'"),
        ("sqlite:////proc/locomo_exp_no_such/m.db", "No such file or directory"),
    ],
)
def test_unusable_tracking_store_is_one_line(uri: str, reason: str) -> None:
    with pytest.raises(tracking.TrackingStoreError) as refused:
        with tracking.mlflow_run(tracking.RunSpec(uri, "e", "r")):
            pass
    message = str(refused.value)
    assert message.startswith(f"tracking.uri={uri}: MLflow cannot use this store (")
    assert reason in message
    assert message.endswith("; fix tracking.uri or use tracking=none")
    assert "\n" not in message


# ----------------------------------------------------------------------------- subprocess


@pytest.mark.slow
def test_typo_gets_the_projects_suggestion_first_not_hydras_plus_hint(tmp_path: Path) -> None:
    proc = run_cli("judge.run=3", "tracking=none", cwd=tmp_path)
    assert proc.returncode == 1
    assert _stderr_lines(proc) == ["error: unknown config key(s): judge.run (did you mean judge.runs?)"]


@pytest.mark.slow
def test_values_hydra_would_rewrite_reach_the_run_as_typed(tmp_path: Path) -> None:
    (tmp_path / "2024.10").write_bytes(EXAMPLE.read_bytes())  # "2024.1" does not exist
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    proc = run_cli(
        "data=file",
        "data.path=2024.10",
        "tracking.experiment=10e2",
        "tracking.run_name=true",
        f"tracking.uri={uri}",
        "hydra.run.dir=out",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["input"]["path"] == str(tmp_path / "2024.10")

    import mlflow

    client = mlflow.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("10e2")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_name == "true"
    assert run.data.params["data.path"] == "2024.10"


@pytest.mark.slow
def test_reused_run_dir_is_refused_before_hydra_touches_it_and_overwrite_replaces_it(tmp_path: Path) -> None:
    first = run_cli("tracking=none", "hydra.run.dir=fixed", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    fixed = tmp_path / "fixed"
    log_before = (fixed / "locomo_exp.log").read_text()
    overrides_before = (fixed / ".hydra" / "overrides.yaml").read_text()

    second = run_cli("tracking=none", "hydra.run.dir=fixed", "f1=squad", cwd=tmp_path)

    assert second.returncode == 1
    assert _stderr_lines(second) == [
        f"error: {fixed} already holds a run (report.md, summary.json, scores.jsonl); choose "
        "another hydra.run.dir, or pass overwrite=true to replace that run's outputs"
    ]
    assert (fixed / "locomo_exp.log").read_text() == log_before  # logs not mixed
    assert (fixed / ".hydra" / "overrides.yaml").read_text() == overrides_before

    third = run_cli("tracking=none", "hydra.run.dir=fixed", "f1=squad", "overwrite=true", cwd=tmp_path)

    assert third.returncode == 0, third.stderr
    summary = json.loads((fixed / "summary.json").read_text())
    assert summary["versions"]["f1"] == "f1_squad (f1.variant=squad)"
    assert "f1=squad" in (fixed / ".hydra" / "overrides.yaml").read_text()
    log_after = (fixed / "locomo_exp.log").read_text()  # Hydra appends: nothing lost
    assert log_after.startswith(log_before) and len(log_after) > len(log_before)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "line"),
    [
        (("hydra.run.dir=/proc/locomo_exp_out",), "error: cannot write outputs to /proc/locomo_exp_out: No such file or directory"),
        (("data.path=${oc.env:LOCOMO_EXP_UNSET_VAR}",), "error: data.path: environment variable 'LOCOMO_EXP_UNSET_VAR' is not set (from ${oc.env:LOCOMO_EXP_UNSET_VAR})"),
        (("tracking=mlflow", "tracking.experiment=''"), "error: tracking.experiment is empty: give an MLflow experiment name (e.g. tracking.experiment=locomo_exp) or use tracking=none"),
    ],
)
def test_input_mistakes_end_with_one_clear_line(tmp_path: Path, overrides: tuple[str, ...], line: str) -> None:
    proc = run_cli("tracking=none", "hydra.run.dir=out", *overrides, cwd=tmp_path)
    assert proc.returncode == 1
    assert _stderr_lines(proc) == [line]


@pytest.mark.slow
def test_bad_tracking_uri_is_one_line(tmp_path: Path) -> None:
    proc = run_cli("tracking.uri=foo://x", "hydra.run.dir=out", cwd=tmp_path)
    assert proc.returncode == 1
    (line,) = _stderr_lines(proc)
    assert line.startswith("error: tracking.uri=foo://x: MLflow cannot use this store (")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("override", "message"),
    [
        pytest.param("scorer=f2", "scorer=f2: no such option (available: both, f1, judge)", id="scorer"),
        pytest.param("data=fil", "data=fil: no such option (available: example, file, zep)", id="data"),
        pytest.param("f1=locomo,bogus", "f1=bogus: no such option (available: locomo, mem0, squad)", id="sweep"),
        pytest.param("baselines=[locomo_paper,nope]", "baselines=nope: no such option", id="list"),
    ],
)
def test_a_wrong_group_choice_is_one_line_before_hydra(override: str, message: str) -> None:
    # from a new user's trial: Hydra answered with ten lines and its config search path
    from locomo_exp.config.checks import unknown_group_options

    problems = unknown_group_options([override])
    assert len(problems) == 1 and problems[0].startswith(message)
    assert unknown_group_options(["scorer=both", "judge=haiku-4-5", "f1=locomo,mem0"]) == []


@pytest.mark.slow
def test_a_wrong_group_choice_exits_1_with_one_line(tmp_path: Path) -> None:
    done = run_cli("scorer=f2", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == "error: scorer=f2: no such option (available: both, f1, judge)"
