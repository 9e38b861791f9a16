"""Nothing lost (issue 18 §3): run directories, sweep directories.

A bad input with ``overwrite=true`` leaves the old run as it was; a directory that is an
input of the job is never the output directory; a run that did not finish is resumed by
the same command; a used sweep directory is treated like a used run directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Composer, run_cli, run_cli_ok
from omegaconf import OmegaConf

from locomo_exp.data import DataValidationError
from locomo_exp.experiment import run_experiment
from locomo_exp.report.run_dir import (
    OutputDirInUse,
    check_output_dir,
    refuse_input_as_output,
    run_dir_state,
)

# -- run directories --------------------------------------------------------------------


def _write_run(directory: Path, status: dict[str, str] | None, *, summary: bool = True) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "scores.jsonl").write_text("{}\n")
    if summary:
        (directory / "summary.json").write_text(json.dumps({"status": status or {}}))
        (directory / "report.md").write_text("# old report\n")


@pytest.mark.parametrize(
    ("status", "summary", "state"),
    [
        pytest.param({"f1": "ok", "judge": "ok"}, True, "finished", id="finished"),
        pytest.param({"f1": "ok", "judge": "interrupted"}, True, "incomplete", id="interrupted"),
        pytest.param({"judge": "failed: boom"}, True, "incomplete", id="failed"),
        pytest.param({"judge": "pending: batch b1"}, True, "incomplete", id="pending-batch"),
        pytest.param({"judge": "running: not finished"}, True, "incomplete", id="killed"),
        pytest.param(None, False, "incomplete", id="stopped-while-writing"),
    ],
)
def test_run_dir_state_tells_finished_from_incomplete(
    tmp_path: Path, status: dict[str, str] | None, summary: bool, state: str
) -> None:
    _write_run(tmp_path / "run", status, summary=summary)
    assert run_dir_state(tmp_path / "run") == state
    assert run_dir_state(tmp_path / "new") == "empty"


def test_unreadable_summary_counts_as_finished_and_is_refused(tmp_path: Path) -> None:
    _write_run(tmp_path, {"f1": "ok"})
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(OutputDirInUse, match="already holds a run"):
        check_output_dir(tmp_path, overwrite=False)


def test_overwrite_with_a_bad_input_keeps_the_old_run(
    typed_config: Composer, tmp_path: Path
) -> None:
    out = tmp_path / "fixed"
    run_experiment(typed_config("tracking=none"), out, tmp_path)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "q", "ground_truth": "a", "category": 9}]))
    with pytest.raises(DataValidationError):
        run_experiment(
            typed_config("tracking=none", "overwrite=true", "data=file", f"data.path={bad}"),
            out,
            tmp_path,
        )
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_an_incomplete_run_is_resumed_by_the_same_command_without_overwrite(
    typed_config: Composer, tmp_path: Path
) -> None:
    out = tmp_path / "fixed"
    _write_run(out, {"f1": "ok", "judge": "interrupted"})
    result = run_experiment(typed_config("tracking=none"), out, tmp_path)
    assert result.summary["status"] == {"f1": "ok"}
    assert "# old report" not in (out / "report.md").read_text()
    with pytest.raises(OutputDirInUse, match="already holds a run"):  # now it is finished
        run_experiment(typed_config("tracking=none"), out, tmp_path)


def _config(*items: str) -> object:
    return OmegaConf.from_dotlist(list(items))


@pytest.mark.parametrize(
    ("items", "key"),
    [
        pytest.param(("mode=compare", "compare.runs=[runs/a,out]"), "compare.runs", id="compare"),
        pytest.param(("data.path=out/scores.jsonl",), "data.path", id="data-path-output-file"),
        pytest.param(("data.runs=[x.json,out/summary.json]",), "data.runs", id="data-runs"),
        pytest.param(("judge.labels=out/report.md",), "judge.labels", id="labels"),
        pytest.param(("data.path=out",), "data.path", id="data-path-is-the-dir"),
    ],
)
def test_an_input_of_the_job_is_never_its_output_directory(
    tmp_path: Path, items: tuple[str, ...], key: str
) -> None:
    out = tmp_path / "out"
    with pytest.raises(OutputDirInUse) as refused:
        refuse_input_as_output(_config(*items), out, tmp_path)
    message = str(refused.value)
    assert message.startswith(f"hydra.run.dir {out} is an input of this job ({key} names ")
    assert "\n" not in message


@pytest.mark.parametrize(
    "items",
    [
        pytest.param(("compare.runs=[out]",), id="compare-runs-in-run-mode"),
        pytest.param(("data.path=out/notes.json",), id="own-file-in-the-dir"),
        pytest.param(("data.path=elsewhere/report.md",), id="report-elsewhere"),
    ],
)
def test_inputs_that_are_not_replaced_are_allowed(tmp_path: Path, items: tuple[str, ...]) -> None:
    refuse_input_as_output(_config(*items), tmp_path / "out", tmp_path)


@pytest.mark.slow
def test_compare_into_a_compared_run_is_refused_and_the_run_kept(tmp_path: Path) -> None:
    for name in ("a", "b"):
        run_cli_ok("tracking=none", f"hydra.run.dir={name}", cwd=tmp_path)
    before = (tmp_path / "a" / "report.md").read_text()
    proc = run_cli(
        "mode=compare", "compare.runs=[a,b]", "tracking=none", "hydra.run.dir=a",
        "overwrite=true", cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [
        f"error: hydra.run.dir {tmp_path / 'a'} is an input of this job (compare.runs names "
        f"{tmp_path / 'a'}); its outputs would replace it: choose another hydra.run.dir"
    ]
    assert (tmp_path / "a" / "report.md").read_text() == before


@pytest.mark.slow
def test_same_command_resumes_an_interrupted_run_in_a_fixed_dir(tmp_path: Path) -> None:
    _write_run(tmp_path / "fixed", {"f1": "ok", "judge": "interrupted"})
    run_cli_ok("tracking=none", "hydra.run.dir=fixed", cwd=tmp_path)
    assert json.loads((tmp_path / "fixed" / "summary.json").read_text())["status"] == {"f1": "ok"}


# -- sweep directories ------------------------------------------------------------------


def _sweep_dir(path: Path, jobs: list[list[str]], statuses: list[str] | None) -> Path:
    from locomo_exp.sweep import SweepContext

    SweepContext(name="s", sweep_dir=str(path), swept_keys=["f1"], swept_overrides=[],
                 jobs=jobs).write()
    if statuses is not None:
        rows = [{"status": status} for status in statuses]
        (path / "sweep_summary.json").write_text(json.dumps({"rows": rows}))
    return path


JOBS = [["f1=locomo"], ["f1=squad"]]


@pytest.mark.parametrize(
    ("jobs", "statuses", "overwrite", "refused"),
    [
        pytest.param(JOBS, ["COMPLETED", "COMPLETED"], False, "this sweep, finished", id="finished"),
        pytest.param(JOBS, ["COMPLETED", "FAILED"], False, None, id="same-with-failed-job"),
        pytest.param(JOBS, None, False, None, id="same-interrupted"),
        pytest.param([["f1=mem0"]], ["COMPLETED"], False, "another sweep", id="another"),
        pytest.param([["f1=mem0"]], ["FAILED"], False, "another sweep", id="another-failed"),
        pytest.param(JOBS, ["COMPLETED", "COMPLETED"], True, None, id="overwrite"),
    ],
)
def test_a_used_sweep_dir_is_refused_unless_the_same_sweep_is_unfinished(
    tmp_path: Path,
    jobs: list[list[str]],
    statuses: list[str] | None,
    overwrite: bool,
    refused: str | None,
) -> None:
    from locomo_exp.sweep.reuse import sweep_dir_problem

    _sweep_dir(tmp_path, jobs, statuses)
    problem = sweep_dir_problem(tmp_path, JOBS, overwrite)
    if refused is None:
        assert problem is None
        return
    used = "sweep_summary.json, sweep_context.json"
    assert problem == (
        f"{tmp_path} already holds {refused} ({used}); choose another hydra.sweep.dir, or "
        "pass overwrite=true to replace it"
    )
    assert sweep_dir_problem(tmp_path / "new", JOBS, False) is None


def test_completed_jobs_are_kept_on_resume_and_others_run(tmp_path: Path) -> None:
    from locomo_exp.sweep import COMPLETED, FAILED, JobRecord
    from locomo_exp.sweep.reuse import clear_sweep_dir, completed_job

    done, failed = tmp_path / "0", tmp_path / "1"
    _write_run(done, {"f1": "ok"})
    JobRecord(0, ["f1=locomo"], {}, "f1=locomo", COMPLETED, str(done)).write()
    JobRecord(1, ["f1=squad"], {}, "f1=squad", FAILED, str(failed)).write()
    assert completed_job(done, ["f1=locomo"]) is not None
    assert completed_job(done, ["f1=mem0"]) is None  # another job in that dir: it runs
    assert completed_job(failed, ["f1=squad"]) is None
    (tmp_path / "sweep_summary.json").write_text("{}")
    removed = clear_sweep_dir(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in removed) == [
        "0/sweep_job.json", "1/sweep_job.json", "sweep_summary.json",
    ]
    assert (done / "report.md").exists()  # the jobs' outputs are the jobs' to replace


@pytest.mark.slow
def test_a_second_sweep_into_a_used_sweep_dir_is_refused_and_the_first_summary_kept(
    tmp_path: Path,
) -> None:
    run_cli_ok("-m", "f1=locomo,squad", "tracking=none", "hydra.sweep.dir=sw", cwd=tmp_path)
    summary = (tmp_path / "sw" / "sweep_summary.json").read_text()
    second = run_cli("-m", "f1=mem0", "tracking=none", "hydra.sweep.dir=sw", cwd=tmp_path)
    assert second.returncode == 2
    assert f"error: the sweep was not started: {tmp_path / 'sw'} already holds another sweep" in (
        second.stderr
    )
    assert (tmp_path / "sw" / "sweep_summary.json").read_text() == summary
    run_cli_ok("-m", "f1=mem0", "tracking=none", "hydra.sweep.dir=sw", "overwrite=true",
               cwd=tmp_path)
    rows = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())["rows"]
    assert [row["status"] for row in rows] == ["COMPLETED"]
