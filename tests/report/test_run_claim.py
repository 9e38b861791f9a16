"""One running job per run directory: two runs never share one and lose each other's outputs.

Two runs started in the same second used to get one ``outputs/<date>/<time>/``: both
exited 0 and printed the same report path, one run's outputs were gone and the log held
both runs' lines. The default directory now carries microseconds, and a job claims its
directory exclusively before Hydra writes into it, so a shared ``hydra.run.dir`` refuses
the second run with one line.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import clean_env
from omegaconf import OmegaConf

from locomo_exp.report import run_claim
from locomo_exp.report.run_claim import (
    CLAIM_FILE,
    RunDirClaimed,
    claim_run_dir,
    release_run_dir_claims,
)
from locomo_exp.report.run_dir import RunDirCallback, check_run_dir

CONF = Path(__file__).resolve().parents[2] / "locomo_exp" / "conf" / "config.yaml"


def _claimed_by(directory: Path, pid: int, host: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / CLAIM_FILE
    marker.write_text(json.dumps(
        {"pid": pid, "host": host or socket.gethostname(), "started": "2026-12-01T18:51:09+00:00"}
    ))
    return marker


def _ended_pid() -> int:
    """The id of a process that has ended (reaped: no process with it runs now)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.fixture(autouse=True)
def _nothing_held() -> None:
    yield
    release_run_dir_claims()


def test_the_default_run_and_sweep_dirs_differ_within_one_second() -> None:
    hydra = OmegaConf.to_container(OmegaConf.load(CONF).hydra, resolve=False)
    assert isinstance(hydra, dict)
    for key in ("run", "sweep"):
        pattern = str(hydra[key]["dir"])
        assert pattern.endswith("${now:%H-%M-%S-%f}"), pattern


def test_a_second_claim_is_refused_naming_the_first_run_and_release_frees_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    marker = _claimed_by(run, os.getppid())  # a process that runs: the test's parent
    with pytest.raises(RunDirClaimed) as refused:
        claim_run_dir(run)
    assert str(refused.value) == (
        f"{run} is in use by a run that has not ended (process {os.getppid()} on "
        f"{socket.gethostname()}, started 2026-12-01T18:51:09+00:00); wait for it or choose "
        f"another hydra.run.dir (if no run uses it, remove {marker})"
    )
    assert json.loads(marker.read_text())["pid"] == os.getppid()  # untouched

    marker.unlink()  # the first run ended
    assert claim_run_dir(run) == marker
    assert json.loads(marker.read_text())["pid"] == os.getpid()
    assert release_run_dir_claims() == [marker]
    assert not marker.exists()
    assert sorted(p.name for p in run.iterdir()) == []


def test_a_claim_of_an_ended_process_or_of_this_one_is_taken_over(tmp_path: Path) -> None:
    for pid in (_ended_pid(), os.getpid()):
        run = tmp_path / str(pid)
        marker = _claimed_by(run, pid)
        assert claim_run_dir(run) == marker
        assert json.loads(marker.read_text())["pid"] == os.getpid()


@pytest.mark.parametrize("content", ["{not json", json.dumps({"pid": 1, "host": "other-host"})])
def test_an_unreadable_or_another_hosts_claim_is_refused(tmp_path: Path, content: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / CLAIM_FILE).write_text(content)
    with pytest.raises(RunDirClaimed, match="is in use by a run that has not ended"):
        claim_run_dir(run)
    assert (run / CLAIM_FILE).read_text() == content


def test_release_leaves_a_claim_taken_over_by_another_process(tmp_path: Path) -> None:
    run = tmp_path / "run"
    marker = claim_run_dir(run)
    _claimed_by(run, os.getppid())
    assert release_run_dir_claims() == []
    assert json.loads(marker.read_text())["pid"] == os.getppid()


def _config(run_dir: Path, *extra: str) -> object:
    return OmegaConf.create(
        {"hydra": {"run": {"dir": str(run_dir)}}, "mode": "run", "overwrite": False,
         "data": {"path": None}, **dict(e.split("=", 1) for e in extra)}
    )


def test_the_run_callback_refuses_a_dir_a_running_job_holds_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "shared"
    _claimed_by(run, os.getppid())
    with pytest.raises(SystemExit) as stop:
        RunDirCallback().on_run_start(_config(run))
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run} is in use by a run that has not ended")
    assert err.count("\n") == 1
    assert [p.name for p in run.iterdir()] == [CLAIM_FILE]  # nothing written


def test_the_run_callback_claims_then_releases_at_the_end(tmp_path: Path) -> None:
    run = tmp_path / "mine"
    callback = RunDirCallback()
    callback.on_run_start(_config(run))
    assert json.loads((run / CLAIM_FILE).read_text())["pid"] == os.getpid()
    callback.on_run_end(_config(run))
    assert not (run / CLAIM_FILE).exists()


def test_a_refused_finished_run_dir_is_not_left_claimed(tmp_path: Path) -> None:
    run = tmp_path / "done"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"status": {"f1": "ok"}}))
    with pytest.raises(ValueError, match="already holds a run"):
        check_run_dir(_config(run))
    assert not (run / CLAIM_FILE).exists()
    assert not run_claim._held


@pytest.mark.slow
def test_two_runs_started_together_into_one_dir_lose_nothing_and_never_mix_logs(
    tmp_path: Path,
) -> None:
    """The trial's race, with one hydra.run.dir: one run writes, the other is refused."""
    commands = [("tracking=none",), ("f1=squad", "tracking=none")]
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "locomo_exp", *args, "hydra.run.dir=same"],
            cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    done = [(p.wait(timeout=300), *p.communicate()) for p in started]
    codes = sorted(code for code, _, _ in done)
    assert codes == [0, 1], done
    winner = next(i for i, (code, _, _) in enumerate(done) if code == 0)
    refused = done[1 - winner][2]
    assert refused.count("\n") == 1 and refused.startswith(f"error: {tmp_path / 'same'} ")
    assert "is in use by a run that has not ended" in refused or "already holds a run" in refused
    summary = json.loads((tmp_path / "same" / "summary.json").read_text())
    assert summary["versions"]["f1"].startswith("f1_squad") == (winner == 1)
    log = (tmp_path / "same" / "locomo_exp.log").read_text()
    assert log.count("read 20 records") == 1 and not (tmp_path / "same" / CLAIM_FILE).exists()
    overrides = (tmp_path / "same" / ".hydra" / "overrides.yaml").read_text()
    assert ("f1=squad" in overrides) == (winner == 1)


@pytest.mark.slow
def test_two_runs_in_the_same_second_get_their_own_dirs(tmp_path: Path) -> None:
    started = [
        subprocess.Popen([sys.executable, "-m", "locomo_exp", *args], cwd=tmp_path,
                         env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for args in [("tracking=none",), ("f1=squad", "tracking=none")]
    ]
    assert [p.wait(timeout=300) for p in started] == [0, 0]
    runs = sorted(p.parent for p in tmp_path.glob("outputs/*/*/report.md"))
    assert len(runs) == 2
    for run in runs:
        assert not (run / CLAIM_FILE).exists()
        assert (run / "locomo_exp.log").read_text().count("read 20 records") == 1
