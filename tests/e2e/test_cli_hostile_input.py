"""``python -m locomo_exp`` on hostile inputs: exit status 1, one clear message, no traceback.

Three subprocesses (~4 s each, tracking off): a FIFO as ``data.path`` (must not block), a
symlink loop given as a relative path, and JSON nested 100,000 levels deep.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.slow


def _fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "pipe.json")
    return str(tmp_path / "pipe.json")


def _symlink_loop(tmp_path: Path) -> str:
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    return "a.json"  # relative to the start directory


def _deep(tmp_path: Path) -> str:
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    return str(tmp_path / "deep.json")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(_fifo, "pipe.json: is a FIFO (named pipe), not a regular file", id="fifo"),
        pytest.param(_symlink_loop, "a.json: symlink loop (too many levels of symbolic links)", id="symlink-loop"),
        pytest.param(_deep, "deep.json: JSON nested too deep to read", id="nested-too-deep"),
    ],
)
def test_hostile_data_path_exits_1_with_one_line_and_no_traceback(tmp_path: Path, make, message: str) -> None:
    data_path = make(tmp_path)
    proc = run_cli("data=file", f"data.path={data_path}", "tracking=none", f"hydra.run.dir={tmp_path / 'out'}",
                   cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert message in proc.stderr
    error_lines = [line for line in proc.stderr.splitlines() if message in line]
    assert len(error_lines) == 1
