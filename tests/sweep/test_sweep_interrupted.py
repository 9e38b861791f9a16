"""An interrupted sweep says which job was interrupted and which never ran (trial 4, finding 11).

``timeout -s INT 15 python -m locomo_exp -m ... judge.temperature=0.0,1.0`` gave
``| 0 | 0.0 | FAILED |`` and ``| 1 | 1.0 | FAILED |`` ("the job did not report a result
(crashed, killed or not run)"), though job 1 never started. The interrupted job is now
INTERRUPTED, a job never started NOT RUN, and the MLflow parent run ends KILLED.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import mlflow_runs, run_python

from locomo_exp import sweep
from locomo_exp.sweep.callback import SweepCallback


def _context(tmp_path: Path) -> sweep.SweepContext:
    context = sweep.SweepContext(
        name="sweep f1=locomo,squad,mem0", sweep_dir=str(tmp_path), swept_keys=["f1"],
        swept_overrides=["f1=locomo,squad,mem0"],
        jobs=[["f1=locomo"], ["f1=squad"], ["f1=mem0"]],
    )
    context.write()
    return context


def _record(tmp_path: Path, job: int, status: str) -> None:
    name = ["locomo", "squad"][job]
    sweep.JobRecord(job=job, overrides=[f"f1={name}"], swept={"f1": name},
                    run_name=f"job {job}", status=status,
                    output_dir=str(tmp_path / str(job))).write()


def _finish(context: sweep.SweepContext, interrupted: bool) -> dict:
    callback = SweepCallback()
    callback._context = context
    return callback.finish(interrupted=interrupted)


def test_an_interrupted_sweep_tells_interrupted_from_not_run(tmp_path: Path) -> None:
    context = _context(tmp_path)
    _record(tmp_path, 0, sweep.RUNNING)  # started, never returned
    summary = _finish(context, interrupted=True)
    assert [r["status"] for r in summary["rows"]] == ["INTERRUPTED", "NOT RUN", "NOT RUN"]
    assert summary["n_failed"] == 0
    assert (summary["n_interrupted"], summary["n_not_run"]) == (1, 2)
    markdown = (tmp_path / sweep.SUMMARY_MD).read_text()
    assert "- jobs: 3 (0 failed, 1 interrupted, 2 not run: the sweep was interrupted; run the " \
           "same command to resume)" in markdown
    assert "| 0 | locomo | INTERRUPTED |" in markdown
    assert "| 1 | squad | NOT RUN |" in markdown


def test_a_job_that_recorded_its_interrupt_keeps_it(tmp_path: Path) -> None:
    context = _context(tmp_path)
    _record(tmp_path, 0, sweep.COMPLETED)
    _record(tmp_path, 1, sweep.INTERRUPTED)
    (tmp_path / "0").mkdir(exist_ok=True)
    (tmp_path / "0" / "summary.json").write_text(json.dumps({"counts": {"overall": 1}}))
    summary = _finish(context, interrupted=True)
    assert [r["status"] for r in summary["rows"]] == ["COMPLETED", "INTERRUPTED", "NOT RUN"]


def test_without_an_interrupt_a_missing_or_running_job_failed(tmp_path: Path) -> None:
    context = _context(tmp_path)
    _record(tmp_path, 0, sweep.RUNNING)
    summary = _finish(context, interrupted=False)
    assert [r["status"] for r in summary["rows"]] == ["FAILED", "FAILED", "FAILED"]
    assert summary["failed_jobs"][0]["error"] == (
        "the job did not report a result (crashed or killed)"
    )
    assert "interrupted" not in (tmp_path / sweep.SUMMARY_MD).read_text()


SCRIPT = """
import runpy, signal, sys
import locomo_exp.benchmarks.locomo.steps as experiment  # LoCoMo's job hooks

def interrupted(*args, **kwargs):
    signal.raise_signal(signal.SIGINT)  # Ctrl-C while job 0 scores

experiment.score_lexical = interrupted
sys.argv = ["locomo_exp", "-m", "f1=locomo,squad", "tracking.experiment=e",
            "hydra.sweep.dir=sweep"]
runpy.run_module("locomo_exp", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_cli_sweep_interrupted_in_job_0(tmp_path: Path) -> None:
    done = run_python(SCRIPT, tmp_path)
    assert done.returncode == 130, done.stderr
    assert "interrupted; re-run the same command to resume" in done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads((tmp_path / "sweep" / sweep.SUMMARY_JSON).read_text())
    assert [r["status"] for r in summary["rows"]] == ["INTERRUPTED", "NOT RUN"]
    markdown = (tmp_path / "sweep" / sweep.SUMMARY_MD).read_text()
    assert "| 0 | locomo | INTERRUPTED |" in markdown and "| 1 | squad | NOT RUN |" in markdown
    runs = mlflow_runs(tmp_path, "e")
    parent = [r for r in runs if r.info.run_id == summary["parent_run_id"]]
    children = [r for r in runs if r.info.run_id != summary["parent_run_id"]]
    assert [r.info.status for r in parent] == ["KILLED"]
    assert [r.info.status for r in children] == ["KILLED"]  # job 1 made no run
