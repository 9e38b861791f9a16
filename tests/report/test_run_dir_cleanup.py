"""A run stopped by the user's mistake leaves no run directory holding only Hydra's files.

Hydra creates the run directory and writes ``.hydra/`` and the job log before the job
reads its input; a bad data path or field used to leave them behind (``outputs/<date>/
<time>/``). The directory is removed only when it holds nothing else: never a user's file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import EXAMPLE, run_cli

from locomo_exp.report.run_dir import remove_hydra_only_run_dir

HYDRA_FILES = (".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", "job.log")


def _hydra_run_dir(path: Path) -> Path:
    for name in HYDRA_FILES:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text("hydra's\n")
    return path


def _remove(run: Path, start: Path, **kwargs: str | list[str] | None) -> bool:
    options: dict[str, object] = {"hydra_subdir": ".hydra", "log_file": "job.log", **kwargs}
    return remove_hydra_only_run_dir(run, start, **options)  # type: ignore[arg-type]


def test_only_hydras_files_go_with_the_empty_parents_up_to_the_start_dir(tmp_path: Path) -> None:
    (tmp_path / "outputs" / "2026-12-01" / "09-00-00").mkdir(parents=True)  # another run
    run = _hydra_run_dir(tmp_path / "outputs" / "2026-12-02" / "10-00-00")
    assert _remove(run, tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "outputs", "outputs/2026-12-01", "outputs/2026-12-01/09-00-00",
    ]
    alone = _hydra_run_dir(tmp_path / "a" / "b")
    assert _remove(alone, tmp_path)
    assert not (tmp_path / "a").exists() and tmp_path.is_dir()


@pytest.mark.parametrize("extra", ["notes.txt", ".hydra/mine.yaml", "sub/x.json", "report.md"])
def test_any_other_file_keeps_the_whole_directory(tmp_path: Path, extra: str) -> None:
    run = _hydra_run_dir(tmp_path / "run")
    (run / extra).parent.mkdir(parents=True, exist_ok=True)
    (run / extra).write_text("the user's\n")
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    assert not _remove(run, tmp_path)
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


def test_an_empty_user_dir_or_a_symlink_keeps_it(tmp_path: Path) -> None:
    run = _hydra_run_dir(tmp_path / "run")
    (run / "empty").mkdir()
    assert not _remove(run, tmp_path)
    (run / "empty").rmdir()
    os.symlink(tmp_path / "elsewhere", run / "link")
    assert not _remove(run, tmp_path)
    assert (run / ".hydra" / "config.yaml").exists()


def test_the_start_dir_and_its_ancestors_are_never_removed(tmp_path: Path) -> None:
    start = _hydra_run_dir(tmp_path / "project")
    assert not _remove(start, start)  # hydra.run.dir=.
    assert not _remove(tmp_path, start)
    assert (start / "job.log").exists()


def test_a_run_dir_outside_the_start_dir_goes_but_not_its_parents(tmp_path: Path) -> None:
    start = tmp_path / "project"
    start.mkdir()
    run = _hydra_run_dir(tmp_path / "elsewhere" / "run")
    assert _remove(run, start)
    assert (tmp_path / "elsewhere").is_dir() and not run.exists()


def test_a_run_dir_another_run_wrote_over_is_kept(tmp_path: Path) -> None:
    """Two runs in one outputs/<date>/<time>/ (same second): the other one's stays."""
    run = _hydra_run_dir(tmp_path / "run")
    (run / ".hydra" / "overrides.yaml").write_text("- data.path=other.json\n")
    assert not _remove(run, tmp_path, overrides=["data.path=nope.json"])
    assert (run / "job.log").exists()
    (run / ".hydra" / "overrides.yaml").write_text("- data.path=nope.json\n")
    assert _remove(run, tmp_path, overrides=["data.path=nope.json"])


def test_without_hydra_subdir_or_log_only_what_hydra_wrote_counts(tmp_path: Path) -> None:
    run = _hydra_run_dir(tmp_path / "run")
    assert not _remove(run, tmp_path, hydra_subdir=None)  # .hydra/ is then not Hydra's
    assert not _remove(run, tmp_path, log_file=None)  # nor is job.log
    assert _remove(run, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    "mistake",
    [("data=file", "data.path=nope.json"), ("data=file", f"data.path={EXAMPLE}", "data.format=fields", "data.fields.prediction=nope")],
    ids=["data path", "field"],
)
def test_a_users_mistake_leaves_nothing_in_the_start_dir(tmp_path: Path, mistake: tuple[str, ...]) -> None:
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "earlier.txt").write_text("the user's\n")
    done = run_cli(*mistake, "tracking=none", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error: ")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "outputs", "outputs/earlier.txt",
    ]


@pytest.mark.slow
def test_a_run_dir_holding_a_users_file_is_kept(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("the user's\n")
    done = run_cli("data=file", "data.path=nope.json", "tracking=none", "hydra.run.dir=mine", cwd=tmp_path)
    assert done.returncode == 1
    assert (tmp_path / "mine" / "notes.txt").read_text() == "the user's\n"
    assert (tmp_path / "mine" / ".hydra").is_dir()  # nothing is taken from a user's directory


def test_overrides_are_compared_as_typed_an_unset_env_var_does_not_raise() -> None:
    from omegaconf import OmegaConf

    from locomo_exp.report.run_cleanup import _typed_overrides

    task = OmegaConf.create(["tracking=none", "data.path=${oc.env:LOCOMO_EXP_UNSET_VAR}"])
    assert _typed_overrides(task) == ["tracking=none", "data.path=${oc.env:LOCOMO_EXP_UNSET_VAR}"]
