"""The judge as a user runs it: the whole command against the ideal, with CPU per call.

Runs ``python -m locomo_exp`` in a fresh process on Zep's 1,540 published answers with
``scorer=judge judge.runs=2 judge.audit.n=0`` (3,080 calls) against the fake Messages API
served from this process (100 ms per reply by default), concurrency 32, MLflow on (an
existing store in a temporary directory, made before the timing starts; ``--new-store``
times its creation too), a new judge cache. Prints:

* the whole command's wall time against the ideal ``calls x latency / concurrency`` (the
  reference), and the target ``1.10 x ideal + 3 s``;
* the span of the calls (first request to last reply, from the server's clock) and the
  time before the first call and after the last reply (start-up, reading, writing);
* the command's CPU time (user + system) per call, and the client's CPU during the calls
  (sampled from /proc) per call; target <= 2 ms.

``--py-spy FILE`` records the command with py-spy (``--format speedscope`` if FILE ends in
``.json``, else a flame graph SVG) to see where the time before and after the calls goes.

Where the time goes (issue 20 §1; py-spy, gc callbacks and A/B runs, December 2026):

* Before the first call (~1.6 s of CPU): Python, Hydra (which composes the config twice:
  ``get_mode`` and ``run``) and the command-line checks ~0.6 s; ``import anthropic`` ~0.5-0.7 s
  (it imports its aiohttp transport, Vertex and Bedrock clients eagerly); reading the file,
  the outputs written before the judge and the 3,072 cache keys ~0.3 s. Importing MLflow
  and opening its store (~1 s) moved from here to a thread during the calls.
* During the calls (~5 s of CPU over ~10.5 s): the SDK's request and response path ~0.95 ms
  per call (httpx request build, h11, two socket writes, the pydantic ``Message``), the pool
  and the cache's claims ~0.1 ms per call, and the MLflow thread ~1.3-1.5 s (``import
  mlflow`` ~0.7 s, of which ``mlflow.genai`` 0.36 s and pandas 0.28 s; the SQLAlchemy store,
  alembic and mappers ~0.3 s; matplotlib and scipy.special for the outputs ~0.35 s).
* After the last reply (~0.5 s of CPU): aggregation and the stored-verdict comparison
  ~0.1 s, the outputs (plots, report.html) ~0.2 s, MLflow logging ~0.2 s (``log_table``
  builds a pandas DataFrame).

Usage::

    .venv/bin/python benchmarks/judge_whole_command.py [--latency 0.1] [--runs 2]
        [--concurrency 32] [--path FILE] [--py-spy profile.svg] [--no-mlflow]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fake_anthropic import FakeAnthropicServer  # noqa: E402

DEFAULT_PATH = REPO.parent / "shared/data/predictions/zep_locomo_grades.json"


def _sample_cpu(proc: subprocess.Popen[str], samples: list[tuple[float, float]]) -> None:
    """Every 20 ms, the command's CPU seconds (user + system, from /proc) with the time."""
    ticks = os.sysconf("SC_CLK_TCK")
    while proc.poll() is None:
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return
        samples.append((time.monotonic(), (int(fields[11]) + int(fields[12])) / ticks))
        time.sleep(0.02)


def _cpu_at(samples: list[tuple[float, float]], moment: float) -> float:
    """The command's CPU seconds at ``moment`` (the last sample before it)."""
    before = [cpu for when, cpu in samples if when <= moment]
    return before[-1] if before else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--py-spy", type=Path, default=None)
    parser.add_argument("--no-mlflow", action="store_true")
    parser.add_argument(
        "--new-store",
        action="store_true",
        help="time the creation of a new MLflow store too (a user's very first run)",
    )
    args = parser.parse_args()
    if not args.path.is_file():
        print(f"not found: {args.path} (the read-only ../shared/data folder)", file=sys.stderr)
        return 2
    server = FakeAnthropicServer(latency_s=args.latency).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            command = [
                sys.executable, "-m", "locomo_exp", "data=zep", f"data.path={args.path}",
                "scorer=judge", f"judge.runs={args.runs}", "judge.audit.n=0",
                f"judge.max_concurrency={args.concurrency}", f"judge.base_url={server.url}",
                f"judge.cache_path={tmp}/cache.sqlite", "judge.progress=false",
                f"hydra.run.dir={tmp}/run",
                "tracking=none" if args.no_mlflow else f"tracking.uri=sqlite:///{tmp}/mlflow.db",
            ]
            if args.py_spy:
                fmt = {".json": "speedscope", ".txt": "raw"}.get(args.py_spy.suffix, "flamegraph")
                command = ["py-spy", "record", "--subprocesses", "-r", "200", "-f", fmt,
                           "-o", str(args.py_spy), "--", *command]
            env = {**os.environ, "ANTHROPIC_API_KEY": "fake-key-for-benchmark"}
            if not (args.no_mlflow or args.new_store):  # the store a user's earlier run made
                subprocess.run(
                    [sys.executable, "-c", "import mlflow; mlflow.MlflowClient("
                     f"'sqlite:///{tmp}/mlflow.db').search_experiments()"],
                    check=True, capture_output=True,
                )
            before = os.times()
            start = time.monotonic()
            proc = subprocess.Popen(
                command, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True,
            )
            samples: list[tuple[float, float]] = []
            sampler = threading.Thread(target=_sample_cpu, args=(proc, samples), daemon=True)
            sampler.start()
            out, err = proc.communicate()
            end = time.monotonic()
            after = os.times()
            sampler.join()
        if proc.returncode != 0:
            print(out[-3000:], err[-3000:], file=sys.stderr)
            return 1
        arrivals = sorted(r.received_at for r in server.messages_requests())
    finally:
        server.stop()
    calls = len(arrivals)
    ideal = calls * args.latency / args.concurrency
    wall = end - start
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    first, last_reply = arrivals[0], arrivals[-1] + args.latency
    span = last_reply - first
    print(f"{calls} calls, {args.latency * 1e3:.0f} ms each, concurrency {args.concurrency}; "
          f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"  ideal (reference)          {ideal:6.2f} s")
    print(f"  whole command              {wall:6.2f} s = {wall / ideal:.2f}x ideal "
          f"(target <= 1.10 x ideal + 3 s = {1.10 * ideal + 3:.2f} s)")
    print(f"  calls span                 {span:6.2f} s = {span / ideal:.2f}x ideal")
    cpu_first, cpu_last = _cpu_at(samples, first), _cpu_at(samples, last_reply)
    print(f"  before the first call      {first - start:6.2f} s  (CPU {cpu_first:.2f} s)")
    print(f"  after the last reply       {end - last_reply:6.2f} s  (CPU "
          f"{(samples[-1][1] if samples else 0.0) - cpu_last:.2f} s)")
    user = after.children_user - before.children_user
    print(f"  command CPU                {cpu:6.2f} s = {1e3 * cpu / calls:.2f} ms per call "
          f"(user {user:.2f} s, system {cpu - user:.2f} s)")
    if not args.py_spy:
        in_span = _cpu_at(samples, last_reply) - _cpu_at(samples, first)
        per_call = 1e3 * in_span / calls
        print(f"  client CPU during the calls {in_span:5.2f} s = {per_call:.2f} ms per call "
              "(target <= 2 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
