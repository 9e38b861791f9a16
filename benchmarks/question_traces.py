"""The cost of ``tracking.questions=true``: a job with and without its per-question traces.

Runs ``python -m locomo_exp`` on Zep's 1,540 answers (``--limit`` for fewer) in fresh
processes, alternating ``tracking.questions=false`` and ``=true`` on one existing sqlite
store per pair (the store's creation is not timed), and prints each job's wall and CPU
seconds (the child's own ``ru_utime + ru_stime`` from ``wait4``), the extra per question
(wall and CPU, milliseconds) and the ratio of the extra wall time to the job's wall time
without traces: the figure the default is decided on (on where it is under 10%).

``--judge`` runs the judge (``scorer=judge``, 1 run, no audit) against the fake Messages API
served from a child process with ``--latency`` seconds per reply and ``--concurrency`` calls
at once, so the judge job's wall time is that of a judged run at that latency.

Usage (from the project root)::

    .venv/bin/python benchmarks/question_traces.py [--pairs 2] [--limit N] [--judge]
        [--latency 1.0] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _common import REPO, child_env, start_fake_server

ZEP = REPO.parent / "shared" / "data" / "predictions" / "zep_locomo_grades.json"


def _timed(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one child; raises when it fails."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            out.seek(0)
            raise RuntimeError(f"job failed ({proc.returncode}): {out.read()[-2000:]!r}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    """Measure and print (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--judge", action="store_true")
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    if not ZEP.is_file():
        sys.exit(f"needs {ZEP} (shared data)")
    n = args.limit or 1540
    server = None
    env = child_env(ANTHROPIC_API_KEY="fake-key-for-benchmark")
    extra: list[str] = []
    if args.judge:
        server, url = start_fake_server("anthropic", args.latency)
        extra = ["scorer=judge", "judge.runs=1", "judge.audit.n=0", f"judge.base_url={url}",
                 f"judge.max_concurrency={args.concurrency}", "judge.progress=false"]
    off: list[tuple[float, float]] = []
    on: list[tuple[float, float]] = []
    try:
        for pair in range(args.pairs):
            with tempfile.TemporaryDirectory() as tmp:
                store = f"sqlite:///{tmp}/mlflow.db"
                subprocess.run([sys.executable, "-c", "import mlflow; mlflow.MlflowClient("
                                f"'{store}').search_experiments()"], env=env, check=True,
                               capture_output=True)
                for questions, into in (("false", off), ("true", on)):
                    command = [sys.executable, "-m", "locomo_exp", f"data.path={ZEP}",
                               f"tracking.uri={store}", f"tracking.questions={questions}",
                               f"hydra.run.dir={tmp}/run-{questions}",
                               f"judge.cache_path={tmp}/cache-{questions}.sqlite", *extra]
                    if args.limit:
                        command.append(f"data.limit={args.limit}")
                    into.append(_timed(command, env, tmp))
                    print(f"pair {pair + 1} questions={questions}: wall {into[-1][0]:.1f} s, "
                          f"CPU {into[-1][1]:.1f} s", flush=True)
    finally:
        if server is not None:
            server.kill()
            server.wait()
    wall_off = statistics.median(w for w, _ in off)
    wall_on = statistics.median(w for w, _ in on)
    cpu_off = statistics.median(c for _, c in off)
    cpu_on = statistics.median(c for _, c in on)
    print(f"{n} questions, {'judge' if args.judge else 'F1'} job, medians of {args.pairs}:")
    print(f"  without traces: wall {wall_off:.1f} s, CPU {cpu_off:.1f} s")
    print(f"  with traces:    wall {wall_on:.1f} s, CPU {cpu_on:.1f} s")
    print(f"  extra per question: wall {1000 * (wall_on - wall_off) / n:.1f} ms, "
          f"CPU {1000 * (cpu_on - cpu_off) / n:.1f} ms")
    print(f"  extra wall / job wall without traces: {(wall_on - wall_off) / wall_off:.0%}")


if __name__ == "__main__":
    main()
