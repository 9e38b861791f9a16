"""Start-up and the main job's wall time, each against a reference measured in the same run.

Measured as a user runs them, in fresh processes (``subprocess``), best and median of
``--repeats`` runs, from a temporary directory (a new MLflow store each time, as on the
first run after install, unless ``--warm-store``):

1. ``python -m locomo_exp --help`` against ``python -c pass`` (the interpreter alone);
2. the main job on the example (the README's first command after install, which logs to
   MLflow) against the same job with ``tracking=none``.

Targets (issue 20 §1): ``--help`` <= 1.0 s; the main job with MLflow <= 4.0 s.

Usage::

    .venv/bin/python benchmarks/startup_main_job.py [--repeats 5] [--warm-store]

Prints one line per measurement and the ratios. Not a test: numbers depend on the machine
and its load (compare the ratios, which share the run's conditions).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def _timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, children) of one command."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def _measure(
    label: str, make_args: Callable[[Path, Path], list[str]], repeats: int, warm_store: bool
) -> float:
    walls: list[float] = []
    cpus: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(repeats):
            run_dir = Path(tmp) / f"run{index}"
            store = Path(tmp) / ("mlflow.db" if warm_store else f"mlflow{index}.db")
            wall, cpu = _timed(make_args(run_dir, store), Path(tmp))
            walls.append(wall)
            cpus.append(cpu)
    median = statistics.median(walls)
    print(
        f"  {label:<44} median {median:6.2f} s  best {min(walls):6.2f} s  "
        f"cpu median {statistics.median(cpus):6.2f} s  ({repeats} runs)"
    )
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--warm-store", action="store_true", help="reuse one MLflow store (after the first run)"
    )
    args = parser.parse_args()
    py = sys.executable
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")

    print("start-up:")
    bare = _measure(
        "python -c pass (reference)", lambda d, s: [py, "-c", "pass"], args.repeats, False
    )
    helped = _measure(
        "python -m locomo_exp --help",
        lambda d, s: [py, "-m", "locomo_exp", "--help"],
        args.repeats,
        False,
    )
    print(f"  --help / interpreter: {helped / bare:.1f}x (target <= 1.0 s: {helped:.2f} s)")

    print("main job on the example:")
    none = _measure(
        "tracking=none (reference)",
        lambda d, s: [py, "-m", "locomo_exp", f"hydra.run.dir={d}", "tracking=none"],
        args.repeats,
        False,
    )
    store = "one store" if args.warm_store else "a new store each run"
    with_mlflow = _measure(
        f"with MLflow ({store})",
        lambda d, s: [py, "-m", "locomo_exp", f"hydra.run.dir={d}", f"tracking.uri=sqlite:///{s}"],
        args.repeats,
        args.warm_store,
    )
    print(
        f"  with MLflow / tracking=none: {with_mlflow / none:.2f}x   "
        f"(target <= 4.0 s with MLflow: {with_mlflow:.2f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
