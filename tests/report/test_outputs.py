"""Output integrity: atomic files, run status in the report, one run per job, reused run dirs."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Composer

from locomo_exp.experiment import run_experiment
from locomo_exp.report import run_dir as outputs
from locomo_exp.report.run_dir import (
    OutputDirInUse,
    atomic_write_jsonl,
    atomic_write_text,
    prepare_output_dir,
)
from locomo_exp.results.status import JUDGE_RUNNING, judge_status


def _litter(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(outputs.TEMP_PREFIX))


def _failing_dumps(fail_at: int) -> Callable[..., str]:
    """json.dumps that raises a full-disk error on its ``fail_at``-th call."""
    real = json.dumps
    calls = {"n": 0}

    def dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise OSError(28, "No space left on device")
        return real(obj, *args, **kwargs)

    return dumps


# ----------------------------------------------------------------------------- atomic writes


def test_failed_jsonl_write_keeps_the_old_file_whole_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "scores.jsonl"
    atomic_write_jsonl(path, [{"a": 1}, {"a": 2}])
    monkeypatch.setattr(outputs.json, "dumps", _failing_dumps(fail_at=3))

    with pytest.raises(OSError, match="No space left on device"):
        atomic_write_jsonl(path, [{"b": i} for i in range(5)])  # fails on the 3rd record

    assert path.read_text() == '{"a": 1}\n{"a": 2}\n'
    assert _litter(tmp_path) == []


def test_failed_text_write_leaves_no_file_when_there_was_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(tmp_path / "summary.json", '{"x": 1}\n')
    assert list(tmp_path.iterdir()) == []


def test_atomic_file_gets_the_usual_mode_not_mkstemps_0600(tmp_path: Path) -> None:
    path = atomic_write_text(tmp_path / "report.md", "# r\n")
    assert path.stat().st_mode & 0o777 == outputs._FILE_MODE
    assert outputs._FILE_MODE & 0o044 or outputs._FILE_MODE == 0o600  # readable by others unless umask says no


def test_run_failing_mid_scores_leaves_no_output_and_no_temp(
    typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = typed_config("tracking=none")
    monkeypatch.setattr(outputs.json, "dumps", _failing_dumps(fail_at=5))  # row 5 of 20
    out = tmp_path / "out"

    with pytest.raises(OSError, match="No space left on device"):
        run_experiment(cfg, out, tmp_path)

    # the plot was complete before scores.jsonl started; nothing else, nothing partial
    assert sorted(p.name for p in out.iterdir()) == ["category_scores.png"]


def test_plot_failing_mid_save_leaves_no_png_and_no_temp(
    typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path.write_bytes

    def half_write(self: Path, data: Any) -> int:
        if self.suffix != ".png":
            return real(self, data)
        real(self, data[:6])  # a partial PNG, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", half_write)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="No space left"):
        run_experiment(typed_config("tracking=none"), out, tmp_path)
    assert sorted(p.name for p in out.iterdir()) == []


# ----------------------------------------------------------------------------- run status


def test_judge_status_texts() -> None:
    class Stopped(Exception):
        run_status = "interrupted"

    assert judge_status(KeyboardInterrupt()) == "interrupted"
    assert judge_status(Stopped("signal 15")) == "interrupted"
    assert judge_status(RuntimeError("API down")) == "failed: API down"
    assert judge_status(RuntimeError()) == "failed: RuntimeError"


@pytest.mark.parametrize(
    ("raised", "expected"),
    [(RuntimeError("overloaded_error after 4 retries"), "failed: overloaded_error after 4 retries"),
     (KeyboardInterrupt(), "interrupted")],
)
def test_report_opens_with_what_ran_when_the_judge_did_not_finish(
    typed_config: Composer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
    expected: str,
) -> None:
    import locomo_exp.judge as judge

    def run_judge(*args: Any, **kwargs: Any) -> Any:
        raise raised

    monkeypatch.setattr(judge, "preflight_judge", lambda cfg, records, **kwargs: None)
    monkeypatch.setattr(judge, "run_judge", run_judge)
    out = tmp_path / "out"

    with pytest.raises(type(raised)):
        run_experiment(typed_config("tracking=none", "scorer=both"), out, tmp_path)

    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == {"f1": "ok", "judge": expected}
    report = (out / "report.md").read_text().splitlines()
    assert report[:6] == [
        "# LoCoMo evaluation report",
        "",
        "## Run status: INCOMPLETE",
        "",
        "- f1: done",
        f"- judge: {expected}",
    ]
    assert len((out / "scores.jsonl").read_text().splitlines()) == 20  # F1 rows kept


def test_report_of_a_judge_still_running_says_so_and_a_complete_run_has_no_block(
    typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import locomo_exp.judge as judge

    seen: dict[str, str] = {}

    def run_judge(*args: Any, **kwargs: Any) -> Any:  # look at the report while "judging"
        seen["report"] = (tmp_path / "out" / "report.md").read_text()
        seen["files"] = " ".join(sorted(p.name for p in (tmp_path / "out").iterdir()))
        raise RuntimeError("stop")

    monkeypatch.setattr(judge, "preflight_judge", lambda cfg, records, **kwargs: None)
    monkeypatch.setattr(judge, "run_judge", run_judge)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "category_scores.png").write_bytes(b"an earlier attempt's plot")
    with pytest.raises(RuntimeError):
        run_experiment(typed_config("tracking=none", "scorer=both"), tmp_path / "out", tmp_path)
    assert f"- judge: {JUDGE_RUNNING}" in seen["report"]
    # the record before the judge draws no plot (and drops an earlier attempt's) ...
    assert ".png" not in seen["files"] and "report.html" in seen["files"]
    assert ".png" not in seen["report"]
    # ... and the judge's failure writes the outputs again, plots included
    assert (tmp_path / "out" / "category_scores.png").read_bytes()[:4] == b"\x89PNG"
    assert "category_scores.png" in (tmp_path / "out" / "report.md").read_text()

    f1_only = run_experiment(typed_config("tracking=none"), tmp_path / "f1", tmp_path)
    assert f1_only.summary["status"] == {"f1": "ok"}
    assert "Run status" not in (tmp_path / "f1" / "report.md").read_text()


# ----------------------------------------------------------------------------- MLflow run id


def test_mlflow_run_id_in_the_environment_is_ignored_and_the_old_run_stays_finished(
    typed_config: Composer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    first = run_experiment(typed_config(f"tracking.uri={uri}"), tmp_path / "first", tmp_path)
    monkeypatch.setenv("MLFLOW_RUN_ID", str(first.run_id))

    with caplog.at_level(logging.WARNING, logger="locomo_exp.tracking"):
        second = run_experiment(
            typed_config(f"tracking.uri={uri}", "f1=squad"), tmp_path / "second", tmp_path
        )

    assert second.run_id != first.run_id
    client = mlflow.MlflowClient(tracking_uri=uri)
    old = client.get_run(str(first.run_id))
    new = client.get_run(str(second.run_id))
    assert old.info.status == "FINISHED"
    assert old.data.params["f1.variant"] == "locomo"
    assert new.info.status == "FINISHED"
    assert new.data.params["f1.variant"] == "squad"
    assert f"MLFLOW_RUN_ID={first.run_id} is set in the environment; ignored" in caplog.text
    experiment = client.get_experiment_by_name("locomo_exp")
    assert experiment is not None
    assert len(client.search_runs([experiment.experiment_id])) == 2


# ----------------------------------------------------------------------------- reused run dir


def test_second_run_into_the_same_dir_is_refused_before_any_work(
    typed_config: Composer, tmp_path: Path
) -> None:
    out = tmp_path / "fixed"
    run_experiment(typed_config("tracking=none"), out, tmp_path)
    before = (out / "report.md").read_text()

    with pytest.raises(OutputDirInUse) as refused:
        run_experiment(typed_config("tracking=none", "f1=squad"), out, tmp_path)

    assert str(refused.value) == (
        f"{out} already holds a run (report.md, summary.json, scores.jsonl); choose another "
        "hydra.run.dir, or pass overwrite=true to replace that run's outputs"
    )
    assert (out / "report.md").read_text() == before


def test_overwrite_clears_only_the_tools_files_first(typed_config: Composer, tmp_path: Path) -> None:
    out = tmp_path / "fixed"
    (out / ".hydra").mkdir(parents=True)
    (out / ".hydra" / "config.yaml").write_text("hydra's own\n")
    (out / "locomo_exp.log").write_text("this job's log, written by Hydra before the job\n")
    (out / "notes.txt").write_text("the user's\n")
    (out / "report.md").write_text("old report\n")
    (out / "j_distribution.png").write_bytes(b"old plot of another run")

    result = run_experiment(typed_config("tracking=none", "overwrite=true"), out, tmp_path)

    assert result.summary["counts"]["overall"] == 20
    assert sorted(p.name for p in out.iterdir()) == [
        ".hydra",
        "card.json",
        "category_scores.png",
        "config.yaml",
        "locomo_exp.log",
        "notes.txt",
        "questions.html",
        "report.html",
        "report.md",
        "scores.jsonl",
        "summary.json",
    ]
    assert (out / "notes.txt").read_text() == "the user's\n"
    assert (out / ".hydra" / "config.yaml").read_text() == "hydra's own\n"


def test_hydra_files_alone_do_not_count_as_a_used_dir(tmp_path: Path) -> None:
    (tmp_path / ".hydra").mkdir()
    (tmp_path / "locomo_exp.log").write_text("")
    assert prepare_output_dir(tmp_path, overwrite=False) == []
