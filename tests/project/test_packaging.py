"""A built wheel (not the editable checkout) runs ``python -m locomo_exp`` from anywhere.

The wheel is built with ``pip wheel --no-deps`` (setuptools comes from pip's configured
index or cache), installed with ``--no-deps`` into a fresh venv whose ``.pth`` file points
at this venv's site-packages for the dependencies. ``.pth`` files inside that directory
(the editable install's finder) are not processed, so ``locomo_exp`` comes from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT

pytestmark = pytest.mark.slow

OFFLINE_HINTS = ("No matching distribution", "Could not find a version", "NewConnectionError")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "ANTHROPIC_"))}
    env.pop("PYTHONPATH", None)
    return env


def test_wheel_installed_in_a_fresh_venv_runs_the_example_from_an_unrelated_directory(
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"  # a copy: the in-tree build would leave build/ in the checkout
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".*")
    shutil.copytree(PROJECT_ROOT / "locomo_exp", source / "locomo_exp", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(PROJECT_ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0 and any(hint in build.stderr for hint in OFFLINE_HINTS):
        pytest.skip(f"setuptools for the wheel build is not reachable: {build.stderr[-300:]}")
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("locomo_exp-*.whl")

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )
    (site / "reuse_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [str(python), "-m", "locomo_exp", "tracking=none", "hydra.run.dir=out"],
        cwd=elsewhere,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert proc.returncode == 0, proc.stderr
    assert "Scored 20 questions" in proc.stdout
    summary = json.loads((elsewhere / "out" / "summary.json").read_text())
    example = Path(summary["input"]["path"])
    assert example == site / "locomo_exp" / "example" / "qa_results.json"  # shipped in the wheel
    assert (elsewhere / "out" / "report.md").read_text().startswith("# LoCoMo evaluation report")
