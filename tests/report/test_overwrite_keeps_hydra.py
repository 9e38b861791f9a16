"""``overwrite=true`` with a refused input leaves the directory describing the old run (trial 4, finding 8).

The old outputs were kept, but Hydra's ``.hydra/`` files had already been rewritten for
the refused command: ``overrides.yaml`` named the bad input beside a report of another
run. They are now written back as the old run had them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, run_cli_ok
from omegaconf import OmegaConf

from locomo_exp.report.run_claim import release_run_dir_claims
from locomo_exp.report.run_cleanup import (
    forget_previous_hydra_files,
    keep_previous_hydra_files,
    restore_previous_hydra_files,
)
from locomo_exp.report.run_dir import check_run_dir, clear_output_dir


@pytest.fixture(autouse=True)
def _nothing_held() -> None:
    yield
    release_run_dir_claims()
    forget_previous_hydra_files()


def _finished_run(run: Path) -> dict[str, bytes]:
    (run / ".hydra").mkdir(parents=True)
    for name in ("config.yaml", "hydra.yaml", "overrides.yaml"):
        (run / ".hydra" / name).write_text(f"old {name}\n")
    (run / "summary.json").write_text(json.dumps({"status": {"f1": "ok"}}))
    (run / "report.md").write_text("# old report\n")
    return _files(run)


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def _hydra_writes(run: Path) -> None:
    """What Hydra does after the run callback: new ``.hydra/`` files for the new command."""
    for name in ("config.yaml", "hydra.yaml", "overrides.yaml"):
        (run / ".hydra" / name).write_text(f"new {name}\n")


def _config(run: Path) -> object:
    return OmegaConf.create({"hydra": {"run": {"dir": str(run)}, "output_subdir": ".hydra"},
                             "mode": "run", "overwrite": True, "data": {"path": None}})


def test_a_refused_overwrite_writes_the_old_hydra_files_back(tmp_path: Path) -> None:
    run = tmp_path / "same"
    before = _finished_run(run)
    check_run_dir(_config(run))
    release_run_dir_claims()
    _hydra_writes(run)
    restored = restore_previous_hydra_files()
    assert sorted(p.name for p in restored) == ["config.yaml", "hydra.yaml", "overrides.yaml"]
    assert _files(run) == before


def test_once_the_old_run_is_replaced_the_new_hydra_files_stay(tmp_path: Path) -> None:
    run = tmp_path / "same"
    _finished_run(run)
    check_run_dir(_config(run))
    _hydra_writes(run)
    clear_output_dir(run)  # the new input was valid
    assert restore_previous_hydra_files() == []
    assert (run / ".hydra" / "overrides.yaml").read_text() == "new overrides.yaml\n"


def test_a_file_the_old_run_did_not_have_is_removed(tmp_path: Path) -> None:
    run = tmp_path / "same"
    _finished_run(run)
    (run / ".hydra" / "hydra.yaml").unlink()
    keep_previous_hydra_files(run, ".hydra")
    _hydra_writes(run)
    restore_previous_hydra_files()
    assert not (run / ".hydra" / "hydra.yaml").exists()
    assert (run / ".hydra" / "overrides.yaml").read_text() == "old overrides.yaml\n"


def test_nothing_is_kept_without_hydra_files(tmp_path: Path) -> None:
    keep_previous_hydra_files(tmp_path, None)
    assert restore_previous_hydra_files() == []


@pytest.mark.slow
def test_cli_overwrite_with_a_malformed_input_keeps_the_directory_self_consistent(
    tmp_path: Path,
) -> None:
    run_cli_ok("f1=squad", "overwrite=true", "tracking=none", "hydra.run.dir=same", cwd=tmp_path)
    before = _files(tmp_path / "same")
    log = before.pop("locomo_exp.log")
    (tmp_path / "malformed.json").write_text("[{")
    bad = run_cli("overwrite=true", "tracking=none", "data=file", "data.path=malformed.json",
                  "hydra.run.dir=same", cwd=tmp_path)
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1 and "malformed.json" in bad.stderr
    after = _files(tmp_path / "same")
    assert after.pop("locomo_exp.log").startswith(log)  # the log appends the refused run
    assert after == before
    assert OmegaConf.load(tmp_path / "same" / ".hydra" / "overrides.yaml") == [
        "f1=squad", "overwrite=true", "tracking=none"
    ]
