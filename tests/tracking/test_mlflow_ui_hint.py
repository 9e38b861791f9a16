"""The ``mlflow ui`` hint printed after a run, a compare and a sweep: one function, a command that works."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from locomo_exp import tracking
from locomo_exp.tracking import ui


def _venv(root: Path) -> Path:
    """A virtual environment's layout under ``root``: ``.venv/bin/python`` and ``mlflow``."""
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "mlflow"):
        (bin_dir / name).write_text("#!/bin/sh\n")
    return bin_dir


def _interpreter(monkeypatch: pytest.MonkeyPatch, bin_dir: Path, *, venv: bool) -> None:
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setattr(sys, "prefix", str(bin_dir.parent))
    monkeypatch.setattr(sys, "base_prefix", "/usr" if venv else str(bin_dir.parent))


def test_a_venv_under_the_project_is_named_relative_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _interpreter(monkeypatch, _venv(tmp_path), venv=True)
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))  # an activated venv changes nothing
    assert ui.mlflow_command() == ".venv/bin/mlflow"
    assert tracking.open_ui_hint("sqlite:////p/mlflow.db", "7") == (
        "  Open the UI with: .venv/bin/mlflow ui --backend-store-uri sqlite:////p/mlflow.db\n"
        "  then: http://127.0.0.1:5000/#/experiments/7/runs?workflowType=machine_learning"
    )


def test_a_venv_elsewhere_is_named_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = _venv(tmp_path / "env")
    _interpreter(monkeypatch, bin_dir, venv=True)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert ui.mlflow_command() == str(bin_dir / "mlflow")


def test_outside_a_venv_the_mlflow_on_path_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = _venv(tmp_path)
    _interpreter(monkeypatch, bin_dir, venv=False)
    on_path = tmp_path / "path"
    on_path.mkdir()
    (on_path / "mlflow").write_text("#!/bin/sh\n")
    (on_path / "mlflow").chmod(0o755)
    monkeypatch.setenv("PATH", str(on_path))
    assert ui.mlflow_command() == "mlflow"
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # not on PATH: the one beside Python
    assert ui.mlflow_command() == ".venv/bin/mlflow"


def test_no_mlflow_beside_python_is_plain_mlflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _interpreter(monkeypatch, bin_dir, venv=True)
    assert ui.mlflow_command() == "mlflow"
    assert tracking.open_ui_hint("sqlite:////p/mlflow.db", None).endswith(
        "/#/experiments/0/runs?workflowType=machine_learning"
    )


def test_every_hint_is_printed_by_the_one_function() -> None:
    """Every benchmark's run, compare and sweep hints all call ``open_ui_hint``."""
    package = Path(tracking.__file__).parents[1]
    hints = {
        path.relative_to(package).as_posix(): path.read_text().count("open_ui_hint(")
        for path in package.rglob("*.py")
        if "Open the UI" in path.read_text() or "open_ui_hint(" in path.read_text()
    }
    # every benchmark's job (LoCoMo's included) ends its console with steps.where_lines;
    # a plug-in comparison's run with compare_track's lines
    plugins = {name: 1 for name in hints if name.startswith("benchmarks/")}
    assert hints == {"sweep/callback.py": 1, "tracking/ui.py": 1, **plugins}
    assert set(plugins) == {"benchmarks/steps.py", "benchmarks/compare_track.py"}
