"""The entrance hall stays light: ``--help`` and the config load no heavy library (issue 17 §2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.core.global_hydra import GlobalHydra

from locomo_exp.cli import app_help
from tests.conftest import CONF_DIR, EXAMPLE, clean_env

HEAVY = (
    "scipy", "statsmodels", "nltk", "numpy", "mlflow", "anthropic", "openai", "matplotlib",
    "pydantic",  # the run log (results/run_log.py) only where a log is built or read
)


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_importing_the_config_loads_no_heavy_library() -> None:
    assert _loaded_after("import locomo_exp.config") == []


def test_the_command_line_module_loads_no_job_until_it_runs_one() -> None:
    assert _loaded_after("import locomo_exp.cli") == []


def test_app_help_lists_every_config_group_and_the_composed_config() -> None:
    GlobalHydra.instance().clear()
    text = app_help(["--help", "scorer=both"])
    groups = sorted(p.name for p in CONF_DIR.iterdir() if p.is_dir() and p.name != "templates")
    for group in groups:
        options = ", ".join(sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml")))
        assert f"\n{group}: {options}\n" in text
    # conf/templates holds judge prompt files, not a group (templates=x is refused)
    assert "\ntemplates:" not in text
    assert "\n(judge.template=<file or name>; shipped: binary-label-own-words, " in text
    assert "== Config ==" in text and "scorer:\n  name: both\n" in text
    assert "hydra:" not in text  # Hydra's own node is left out, as in Hydra's help


def _into_closed_pipe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m locomo_exp ARGS`` with stdout a pipe whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader: the child's first write gets EPIPE, every time
    try:
        return subprocess.run(
            [sys.executable, "-m", "locomo_exp", *args],
            cwd=cwd,
            env=clean_env(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.slow
def test_help_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """``--help | head -3``: the reader is gone before the help is written (issue 18, trial)."""
    done = _into_closed_pipe(["--help"], tmp_path)
    assert done.stderr == ""
    assert done.returncode == 0


@pytest.mark.slow
def test_a_job_into_a_closed_pipe_exits_quietly_with_every_output_written(tmp_path: Path) -> None:
    """``python -m locomo_exp ... | head -1``: Hydra's console log and the result's lines meet
    a closed pipe; no traceback, exit 0, and the run directory is complete."""
    done = _into_closed_pipe([f"data.path={EXAMPLE}", "tracking=none", "hydra.run.dir=run"], tmp_path)
    assert done.stderr == ""
    assert done.returncode == 0
    run = tmp_path / "run"
    assert (run / "report.md").read_text().startswith("# ")
    assert json.loads((run / "summary.json").read_text())["counts"]["overall"] == 20
    assert "read 20 records" in (run / "locomo_exp.log").read_text()  # the log file is whole


def test_the_entrance_hall_holds_at_most_five_modules() -> None:
    """Issue 17 §2: the package's top level holds the entry, the jobs and ``__init__`` only;
    everything else lives in a package named for its layer (docs/development.md), the
    command-line layer included (``cli/``)."""
    top = Path(__file__).resolve().parents[2] / "locomo_exp"
    modules = sorted(p.name for p in top.glob("*.py"))
    assert modules == [
        "__init__.py",
        "__main__.py",
        "experiment.py",
    ]
    assert (top / "cli" / "__init__.py").is_file()
