"""``overwrite=true`` never loses a finished comparison or sweep (issue 27 §3, the part left).

A comparison (``mode=compare``) replaced ``compare.md``/``compare.json`` one file at a
time and its directory did not count as used; a sweep with ``overwrite=true`` removed the
earlier summary as soon as every job was validated. Both now build the new outputs in the
stage of ``report/run_swap.py`` and swap them in at the end: a stop at any point (Ctrl-C at
the write, ``OSError(ENOSPC)``, a crash, a refused comparison, a failed job) leaves every
earlier output byte for byte, no stage, and one log line saying so.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from test_compare import _questions, write_run

from locomo_exp import sweep
from locomo_exp.compare import CompareConfig, CompareError
from locomo_exp.compare.job import run_compare_job
from locomo_exp.report.run_dir import OutputDirInUse, check_output_dir, run_dir_state
from locomo_exp.report.run_swap import OLD_DIR, STAGE_DIR
from locomo_exp.sweep.callback import SweepCallback
from locomo_exp.sweep.reuse import replacing_sweep


def _files(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] not in skip
    }


def _kept_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "is kept as it was" in r.getMessage()]


def _enospc(*_: object, **__: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _interrupt(*_: object, **__: object) -> None:
    raise KeyboardInterrupt


def _crash(*_: object, **__: object) -> None:
    raise RuntimeError("boom")


# -- comparisons -------------------------------------------------------------------------


def _runs(tmp_path: Path, n: int = 2) -> list[Path]:
    questions = _questions()
    scores = [[1.0 if k % 3 else 0.0 for k in range(60)], [0.0] * 60, [1.0] * 60]
    return [write_run(tmp_path / name, questions, scores[k]) for k, name in
            enumerate("ABC"[:n])]


def _compare(runs: list[Path], out: Path, start: Path, uri: str | None = None,
             **kwargs: Any) -> Any:
    cfg = CompareConfig(runs=[str(r) for r in runs], bootstrap_samples=50,
                        permutation_samples=50, **kwargs)
    return run_compare_job(cfg, out, start, tracking_uri=uri)


@pytest.fixture
def old_compare(tmp_path: Path) -> tuple[Path, list[Path], dict[str, bytes]]:
    """A finished comparison of two runs in ``tmp_path/cmp`` (with its forest plot)."""
    runs, out = _runs(tmp_path), tmp_path / "cmp"
    _compare(runs, out, tmp_path)
    assert {"compare.md", "compare.json", "compare_forest.png"} <= set(_files(out))
    return out, runs, _files(out)


def test_a_directory_holding_a_comparison_counts_as_used(old_compare, tmp_path: Path) -> None:
    out, _, _ = old_compare
    assert run_dir_state(out) == "finished"
    with pytest.raises(OutputDirInUse, match=r"already holds a run \(compare.md, compare.json\)"):
        check_output_dir(out, overwrite=False)
    assert check_output_dir(out, overwrite=True) == "finished"  # replaced with overwrite=true
    (out / "compare.md").unlink()  # stopped before its last file: resumed by the same command
    assert run_dir_state(out) == "incomplete"


def _stop_at_markdown(monkeypatch: pytest.MonkeyPatch, stop: Any) -> None:
    import locomo_exp.compare.render as render

    monkeypatch.setattr(render, "render_markdown", stop)  # compare.json already written


def _stop_at_plot(monkeypatch: pytest.MonkeyPatch, stop: Any) -> None:
    import locomo_exp.compare.render as render

    monkeypatch.setattr(render, "forest_plot", stop)


def _stop_in_mlflow(monkeypatch: pytest.MonkeyPatch, stop: Any) -> None:
    import locomo_exp.tracking.compare_run as compare_run

    monkeypatch.setattr(compare_run, "log_comparison", stop)


@pytest.mark.parametrize(
    ("where", "stop", "raised", "reason"),
    [
        (_stop_at_markdown, _interrupt, KeyboardInterrupt, "interrupted"),
        (_stop_at_markdown, _enospc, OSError, "[Errno 28] No space left on device"),
        (_stop_at_plot, _enospc, OSError, "[Errno 28] No space left on device"),
        (_stop_in_mlflow, _crash, RuntimeError, "boom"),
        (_stop_in_mlflow, _interrupt, KeyboardInterrupt, "interrupted"),
    ],
    ids=["ctrl-c-at-write", "full-disk-at-write", "full-disk-at-plot", "crash-in-mlflow",
         "ctrl-c-in-mlflow"],
)
def test_a_stopped_comparison_leaves_the_old_one_exactly_as_it_was(
    old_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture, where: Any, stop: Any, raised: type[BaseException],
    reason: str,
) -> None:
    out, runs, before = old_compare
    where(monkeypatch, stop)
    caplog.set_level(logging.INFO)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pytest.raises(raised):
        _compare(runs, out, tmp_path, labels=["new A", "new B"], uri=uri)
    assert _files(out) == before  # byte for byte, nothing added
    assert not (out / STAGE_DIR).exists() and not (out / OLD_DIR).exists()
    assert _kept_lines(caplog) == [
        f"overwrite=true: the new comparison stopped before it finished ({reason}); "
        f"the earlier comparison in {out} is kept as it was"
    ]


def test_a_refused_comparison_leaves_the_old_one(old_compare, tmp_path: Path, caplog) -> None:
    out, runs, before = old_compare
    caplog.set_level(logging.INFO)
    with pytest.raises(CompareError, match="at least two"):
        _compare(runs[:1], out, tmp_path)
    assert _files(out) == before
    assert len(_kept_lines(caplog)) == 1


def test_a_finished_comparison_replaces_the_old_one_and_its_plots(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs, out = _runs(tmp_path, 3), tmp_path / "cmp"
    _compare(runs, out, tmp_path)
    old_plots = sorted(p.name for p in out.glob("compare_forest*.png"))
    assert len(old_plots) == 3  # three pairs
    caplog.set_level(logging.INFO)
    job = _compare(runs[:2], out, tmp_path, labels=["new A", "new B"])
    assert sorted(p.name for p in out.glob("compare_forest*.png")) == ["compare_forest.png"]
    assert json.loads((out / "compare.json").read_text())["settings"]["labels"] == [
        "new A", "new B"]
    assert "new A" in (out / "compare.md").read_text()
    assert sorted(job.result.outputs.values()) == sorted(
        out / name
        for name in ("compare.json", "compare.md", "compare_forest.png", "questions.html"))
    assert not (out / STAGE_DIR).exists() and not (out / OLD_DIR).exists()
    assert _kept_lines(caplog) == []
    assert f"overwrite=true: the new comparison replaced the earlier one in {out}" in [
        r.getMessage() for r in caplog.records]


# -- sweeps ------------------------------------------------------------------------------

JOBS = [["f1=locomo"], ["f1=squad"]]


def _context(sweep_dir: Path, name: str) -> sweep.SweepContext:
    return sweep.SweepContext(name=name, sweep_dir=str(sweep_dir), swept_keys=["f1"],
                              swept_overrides=["f1=locomo,squad"], jobs=JOBS)


def _job(sweep_dir: Path, job: int, status: str, overall: float) -> None:
    name = ["locomo", "squad"][job]
    out = sweep_dir / str(job)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"counts": {"overall": 60},
                                                  "overall": overall}))
    sweep.JobRecord(job=job, overrides=[f"f1={name}"], swept={"f1": name}, run_name=name,
                    status=status, output_dir=str(out)).write()


def _open(sweep_dir: Path, name: str, overwrite: bool) -> SweepCallback:
    callback = SweepCallback()
    callback._open(_context(sweep_dir, name), overwrite)
    return callback


@pytest.fixture
def old_sweep(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A finished sweep of two jobs in ``tmp_path/sweep``, with a comparison folder."""
    sweep_dir = tmp_path / "sweep"
    callback = _open(sweep_dir, "old sweep", overwrite=False)
    for job in (0, 1):
        _job(sweep_dir, job, sweep.COMPLETED, 50.0)
    callback.finish()
    (sweep_dir / "vs_baseline" / "1").mkdir(parents=True)
    (sweep_dir / "vs_baseline" / "1" / "compare.md").write_text("old comparison\n")
    past = (1_000_000_000, 1_000_000_000)  # the earlier sweep's job records: long before
    for job in (0, 1):
        os.utime(sweep_dir / str(job) / sweep.JOB_RECORD_FILE, past)
    own = _files(sweep_dir, skip=("0", "1"))
    assert {"sweep_summary.json", "sweep_summary.md", "sweep_context.json",
            "vs_baseline/1/compare.md"} <= set(own)
    return sweep_dir, own


def _jobs_then_finish(statuses: list[str | None], interrupted: bool = False):
    def run(sweep_dir: Path, callback: SweepCallback) -> None:
        for job, status in enumerate(statuses):
            if status is not None:  # None: the job wrote no record (killed, never started)
                _job(sweep_dir, job, status, 70.0)
        callback.finish(interrupted=interrupted)
    return run


def _patched(target: str, stop: Any, statuses: list[str | None]):
    def run(sweep_dir: Path, callback: SweepCallback) -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(f"locomo_exp.sweep.callback.{target}", stop)
            _jobs_then_finish(statuses)(sweep_dir, callback)
    return run


DONE = sweep.COMPLETED


@pytest.mark.parametrize(
    ("run", "raised", "reason"),
    [
        (_jobs_then_finish([DONE, sweep.FAILED]), None, "1 of 2 jobs did not complete"),
        (_jobs_then_finish([DONE, sweep.PENDING]), None, "1 of 2 jobs did not complete"),
        (_jobs_then_finish([DONE, None]), None, "1 of 2 jobs did not complete"),
        (_jobs_then_finish([sweep.RUNNING, None], interrupted=True), None, "interrupted"),
        (_patched("atomic_write_text", _interrupt, [DONE, DONE]), KeyboardInterrupt,
         "interrupted"),
        (_patched("atomic_write_text", _enospc, [DONE, DONE]), OSError,
         "[Errno 28] No space left on device"),
        (_patched("build_sweep_summary", _crash, [DONE, DONE]), RuntimeError, "boom"),
    ],
    ids=["a-job-failed", "a-job-pending", "a-job-wrote-no-record", "ctrl-c-at-exit",
         "ctrl-c-at-summary-write", "full-disk-at-summary-write", "crash"],
)
def test_a_stopped_sweep_leaves_the_old_one_exactly_as_it_was(
    old_sweep, caplog: pytest.LogCaptureFixture, run: Any,
    raised: type[BaseException] | None, reason: str,
) -> None:
    sweep_dir, before = old_sweep
    callback = _open(sweep_dir, "new sweep", overwrite=True)
    assert sweep.SweepContext.read(sweep_dir).name == "new sweep"  # what the jobs read
    assert sweep.SweepContext.read(sweep_dir, staged=False).name == "old sweep"
    caplog.set_level(logging.INFO)
    if raised is None:
        run(sweep_dir, callback)
    else:
        with pytest.raises(raised):
            run(sweep_dir, callback)
    assert _files(sweep_dir, skip=("0", "1")) == before  # byte for byte, nothing added
    assert not (sweep_dir / STAGE_DIR).exists() and not (sweep_dir / OLD_DIR).exists()
    assert _kept_lines(caplog) == [
        f"overwrite=true: the new sweep stopped before it finished ({reason}); "
        f"the earlier sweep in {sweep_dir} is kept as it was"
    ]


def test_a_finished_sweep_replaces_the_old_ones_files(old_sweep, caplog) -> None:
    sweep_dir, _ = old_sweep
    callback = _open(sweep_dir, "new sweep", overwrite=True)
    caplog.set_level(logging.INFO)
    _jobs_then_finish([DONE, DONE])(sweep_dir, callback)
    summary = json.loads((sweep_dir / sweep.SUMMARY_JSON).read_text())
    assert summary["sweep"] == "new sweep"
    assert [r["status"] for r in summary["rows"]] == [DONE, DONE]
    assert sweep.SweepContext.read(sweep_dir, staged=False).name == "new sweep"
    assert not (sweep_dir / "vs_baseline").exists()  # the earlier sweep's comparison went
    assert not (sweep_dir / STAGE_DIR).exists() and not (sweep_dir / OLD_DIR).exists()
    assert _kept_lines(caplog) == []


def test_a_sweep_without_overwrite_removes_a_stage_left_by_a_killed_one(old_sweep) -> None:
    sweep_dir, before = old_sweep
    stage = sweep_dir / STAGE_DIR
    stage.mkdir()
    (stage / sweep.CONTEXT_FILE).write_text("{}")  # a killed replacing sweep's
    assert replacing_sweep(sweep_dir, overwrite=False) is None
    assert not stage.exists()
    assert _files(sweep_dir, skip=("0", "1")) == before
