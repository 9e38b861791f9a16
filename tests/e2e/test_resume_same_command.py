"""An unfinished run is resumed by the same command only (trial 4, finding 3).

A run of another command in a run directory holding an unfinished run was called
"resuming it" and replaced the unfinished run's partial outputs (a Zep judged run
replaced by a Memobase F1 run). The overrides saved in ``.hydra/overrides.yaml`` now
have to match; a different command is refused in one line, before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from omegaconf import OmegaConf

from locomo_exp.report.run_claim import CLAIM_FILE, release_run_dir_claims
from locomo_exp.report.run_dir import OutputDirInUse, check_run_dir, command_difference


@pytest.fixture(autouse=True)
def _nothing_held() -> None:
    yield
    release_run_dir_claims()


def _unfinished(run: Path, overrides: list[str]) -> dict[str, bytes]:
    """An interrupted run in ``run`` made by ``overrides``; returns its files' bytes."""
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "overrides.yaml").write_text(OmegaConf.to_yaml(overrides))
    (run / "scores.jsonl").write_text("{}\n")
    (run / "summary.json").write_text(json.dumps({"status": {"f1": "ok", "judge": "interrupted"}}))
    (run / "report.md").write_text("# the unfinished run\n")
    return {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()}


def _config(run: Path, overrides: list[str]) -> object:
    return OmegaConf.create({
        "hydra": {"run": {"dir": str(run)}, "output_subdir": ".hydra",
                  "overrides": {"task": overrides}},
        "mode": "run", "overwrite": "overwrite=true" in overrides, "data": {"path": None},
    })


ZEP = ["data=file", "data.path=zep.json", "scorer=both", "judge.runs=3"]


@pytest.mark.parametrize(
    ("given", "line"),
    [
        pytest.param(["data=file", "data.path=memobase.json"],
                     "data.path=memobase.json differs (zep.json in that run), and 2 more",
                     id="another-input-and-scorer"),
        pytest.param(["data=file", "data.path=zep.json", "scorer=both"],
                     "judge.runs=3 was given there, not now", id="one-left-out"),
        pytest.param([*ZEP, "judge.temperature=0"], "judge.temperature=0 is new", id="one-added"),
    ],
)
def test_another_command_is_refused_naming_the_difference(
    tmp_path: Path, given: list[str], line: str
) -> None:
    run = tmp_path / "int2"
    before = _unfinished(run, ZEP)
    with pytest.raises(OutputDirInUse) as refused:
        check_run_dir(_config(run, given))
    assert str(refused.value) == (
        f"{run} holds an unfinished run of a different command ({line}); re-run that command to "
        "resume it, or use another hydra.run.dir or overwrite=true"
    )
    after = {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert after == before  # not claimed, nothing written


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(ZEP, id="same"),
        pytest.param(list(reversed(ZEP)), id="same-in-another-order"),
        pytest.param([*ZEP, "judge.max_concurrency=4", "judge.progress=false"], id="pacing-changed"),
        pytest.param([*ZEP[:3], "judge.runs=5", "overwrite=true"], id="overwrite"),
    ],
)
def test_the_same_command_resumes(tmp_path: Path, given: list[str]) -> None:
    run = tmp_path / "int2"
    _unfinished(run, ZEP)
    assert check_run_dir(_config(run, given)) == run
    assert (run / CLAIM_FILE).exists()


def test_an_unfinished_run_without_saved_overrides_is_resumed(tmp_path: Path) -> None:
    run = tmp_path / "old"
    _unfinished(run, ZEP)
    (run / ".hydra" / "overrides.yaml").unlink()
    assert check_run_dir(_config(run, ["data.path=other.json"])) == run


def test_prefixes_do_not_count() -> None:
    assert command_difference(["+judge.x=1", "f1=squad"], ["f1=squad", "++judge.x=1"]) is None


@pytest.mark.slow
def test_cli_refuses_another_command_and_resumes_the_same(tmp_path: Path) -> None:
    first = ["f1=squad", "tracking=none", "hydra.run.dir=fixed"]
    done = run_cli(*first, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = tmp_path / "fixed" / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()),
                                   "status": {"f1": "ok", "judge": "interrupted"}}))
    before = {p: p.read_bytes() for p in (tmp_path / "fixed").rglob("*") if p.is_file()}
    other = run_cli("f1=mem0", "tracking=none", "hydra.run.dir=fixed", cwd=tmp_path)
    assert other.returncode == 1
    assert other.stderr.splitlines() == [
        f"error: {tmp_path / 'fixed'} holds an unfinished run of a different command "
        "(f1=mem0 differs (squad in that run)); re-run that command to resume it, or use "
        "another hydra.run.dir or overwrite=true"
    ]
    assert {p: p.read_bytes() for p in (tmp_path / "fixed").rglob("*") if p.is_file()} == before
    again = run_cli(*first, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(summary.read_text())["status"] == {"f1": "ok"}
