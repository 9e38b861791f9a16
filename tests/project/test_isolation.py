"""Tests cannot be disturbed by the user's directory (issue 17 §7).

Run from a checkout where a user has worked, a test once read the judge cache in the
repository root. Now every test runs in its own temporary directory (``conftest.py``'s autouse
fixture), so a stray ``.judge_cache/`` or ``mlflow.db`` in the checkout is never read: the slow
test below copies the tests into a checkout whose root holds both, as unreadable files, shows
that a job started there does trip over them, and runs the tests that use the default cache
and store from that checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, Composer, clean_env, run_cli

from locomo_exp.experiment import run_experiment

POISON = b"left by a user's own runs; not a database\n"

PROBE = '''
from pathlib import Path

from locomo_exp.experiment import run_experiment


def test_probe_a_job_with_default_paths(tmp_path, typed_config):
    result = run_experiment(typed_config("scorer=both", "judge.dry_run=true"), tmp_path / "out")
    assert result.tracking_uri == f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert Path.cwd() == tmp_path
'''


def test_each_test_starts_in_its_own_directory_without_ambient_settings(tmp_path: Path) -> None:
    assert Path.cwd() == tmp_path
    assert os.environ["MLFLOW_TRACKING_URI"] == f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert not [name for name in os.environ if name.startswith(("ANTHROPIC_", "OPENAI_"))]
    assert not [name for name in clean_env() if name.startswith(("ANTHROPIC_", "OPENAI_", "MLFLOW_"))]


def test_a_job_with_default_paths_keeps_its_store_in_the_test_directory(
    tmp_path: Path, typed_config: Composer
) -> None:
    result = run_experiment(typed_config(), tmp_path / "out")  # start directory: the cwd
    assert result.tracking_uri == f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert (tmp_path / "mlflow.db").is_file()


def _checkout(root: Path) -> Path:
    """A copy of the tests beside the real package, with a user's leftovers in its root."""
    shutil.copytree(
        PROJECT_ROOT / "tests", root / "tests", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy2(PROJECT_ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "locomo_exp").symlink_to(PROJECT_ROOT / "locomo_exp")
    (root / "tests" / "test_probe_defaults.py").write_text(PROBE, encoding="utf-8")
    (root / ".judge_cache").mkdir()
    (root / ".judge_cache" / "judge_cache.sqlite").write_bytes(POISON)
    (root / "mlflow.db").write_bytes(POISON)
    return root


@pytest.mark.slow
def test_a_stray_judge_cache_and_mlflow_db_in_the_checkout_are_not_read(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path / "checkout")
    entries = sorted(path.name for path in checkout.iterdir())

    # a job started in the checkout does read them: the leftovers are a real trap
    cache_trap = run_cli(
        "scorer=both", "judge.dry_run=true", "tracking=none", f"hydra.run.dir={tmp_path / 'a'}",
        cwd=checkout,
    )
    assert cache_trap.returncode == 1
    assert "is not a judge cache (not an SQLite database)" in cache_trap.stderr
    store_trap = run_cli(f"hydra.run.dir={tmp_path / 'b'}", cwd=checkout)
    assert store_trap.returncode == 1
    assert "MLflow cannot use this store" in store_trap.stderr

    # the tests that use the default cache and store, run from the checkout, do not
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/test_probe_defaults.py",
            "tests/project/test_isolation.py::test_a_job_with_default_paths_keeps_its_store_in_the_test_directory",
            "tests/e2e/test_cli_e2e.py::test_judge_dry_run_says_nothing_was_scored_and_lists_the_estimate",
            "tests/report/test_outputs.py",
        ],
        cwd=checkout,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
    assert (checkout / ".judge_cache" / "judge_cache.sqlite").read_bytes() == POISON
    assert (checkout / "mlflow.db").read_bytes() == POISON
    assert sorted(path.name for path in checkout.iterdir() if path.name != ".benchmarks") == entries
