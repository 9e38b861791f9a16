"""The judge as a user runs it: the whole command against the ideal, with CPU per call.

Runs ``python -m locomo_exp`` in a fresh process on Zep's 1,540 published answers with
``scorer=judge judge.runs=2 judge.audit.n=0`` (3,072 calls) against the fake Messages API
served from this process (100 ms per reply by default), concurrency 32, MLflow on (an
existing store in a temporary directory, made before the timing starts; ``--new-store``
times its creation too), a new judge cache. Prints, as medians over ``--pairs`` runs:

* the whole command's wall time against the ideal ``calls x latency / concurrency`` (the
  reference), and the target ``1.10 x ideal + 3 s``;
* the span of the calls (first request to last reply, from the server's clock) and the
  time before the first call and after the last reply (start-up, reading, writing);
* the command's CPU time (user + system) per call, and the client's CPU during the calls
  (sampled from /proc) per call;
* the **marginal client CPU per call** (target <= 2 ms): each pair runs the command on all
  the answers and on a ``data.limit`` subset (``--subset``, 256 answers = 512 calls) one
  after the other, with the same settings; ``(CPU all - CPU subset) / (calls all - calls
  subset)`` is the CPU one more call costs, with the fixed costs (Python, imports, Hydra,
  the MLflow run, the report) cancelled out. The median over the pairs is printed.

``--reference-commit SHA`` measures that commit's code in the same run, alternated with
this checkout's (a temporary ``git worktree`` put first on ``PYTHONPATH``, same venv), and
prints each figure's ratio this / reference. The issue's reference is 104e73d, the code issue
20 measured at 12.3 s of CPU = 4 ms per call. Without it the reference is the ideal.

``--callgrind`` counts instructions instead (``valgrind --tool=callgrind``; about 70 M
instructions per second, so it runs two small sizes, ``--callgrind-limits``, once each per
code): instructions per call = the difference of the two counts over the difference of the
calls. Under valgrind the client is slower than the fake API, so the replies are always
waiting; the count does not depend on the machine's load.

``--py-spy FILE`` records one run with py-spy (``--format speedscope`` if FILE ends in
``.json``, ``raw`` collapsed stacks if ``.txt``, else a flame graph SVG).

Where the time goes (issue 20 §1; cProfile, ``-X importtime``, callgrind and A/B runs,
2 December 2026, on a machine ~2x slower than on 1 December and at load 8-15 on 2 CPUs):

* Per call (the marginal figure): callgrind counts 3.86 M instructions per call for the whole
  command (ff1b232: 21.88 G fixed, +3.86 M per call). In the pool, cProfile gives the SDK's
  generic ``post`` (``FinalRequestOptions`` built by pydantic, the request's URL parsed and
  its headers merged, the aiohttp send and read) ~80% of a call, the cache's claim and
  store (two SQLite transactions, ~0.11 ms of CPU per call) ~12%, reading the verdict ~3%.
  Work after the calls that grows with the answers (aggregation, scores.jsonl, the MLflow
  table) counts here too.
* Before the first call (2.4-4 s of CPU today): Python, Hydra and the command-line checks;
  ``import anthropic`` (its types are ~1,480 pydantic classes, and it imports its Vertex,
  Bedrock and tools modules eagerly); reading the file, the outputs written before the
  judge and the 3,072 cache keys. Hydra used to compose the config twice (``get_mode`` then
  ``run``); it composes once since this stop: ~1.1 G instructions (7%) fewer for a small F1
  job, deterministic count.
* During the calls, besides the calls: the MLflow thread (import, store, run, first params,
  then the imports the outputs need). ``import mlflow`` alone is the largest fixed cost:
  pandas (imported by ``mlflow.data``, so ``log_table`` adds only the DataFrame), and
  ``mlflow.genai`` (FastAPI through ``mlflow.gateway``, the built-in scorers); none of it can
  be skipped from outside MLflow. Its GIL holds the event loop back: the calls span
  1.27-1.33x ideal with MLflow, 1.12x without. Wilson intervals at 95% no longer import
  ``scipy.special`` (0.1-0.8 s).
* After the last reply (0.7-1 s of CPU today): aggregation and the stored-verdict comparison,
  the outputs (two plots, report.html), MLflow logging.

Usage::

    .venv/bin/python benchmarks/judge_whole_command.py [--latency 0.1] [--runs 2]
        [--concurrency 32] [--path FILE] [--pairs 3] [--subset 256]
        [--reference-commit 104e73d] [--callgrind [--callgrind-limits 64,320]]
        [--py-spy profile.svg] [--no-mlflow] [--new-store]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fake_anthropic import FakeAnthropicServer  # noqa: E402

DEFAULT_PATH = REPO.parent / "shared/data/predictions/zep_locomo_grades.json"
TARGET_MS_PER_CALL = 2.0


@dataclass(frozen=True)
class Code:
    """Which code runs: a label and the folder put first on ``PYTHONPATH``."""

    label: str
    root: Path


@dataclass(frozen=True)
class Run:
    """One command, measured. Times in seconds from its start; CPU in seconds."""

    calls: int
    wall: float
    cpu: float
    user: float
    first: float
    last_reply: float
    cpu_first: float
    cpu_last_reply: float
    cpu_end: float
    load: float


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


def _command(args: argparse.Namespace, url: str, tmp: str, limit: int | None) -> list[str]:
    command = [
        sys.executable, "-m", "locomo_exp", "data=zep", f"data.path={args.path}",
        "scorer=judge", f"judge.runs={args.runs}", "judge.audit.n=0",
        f"judge.max_concurrency={args.concurrency}", f"judge.base_url={url}",
        f"judge.cache_path={tmp}/cache.sqlite", "judge.progress=false",
        f"hydra.run.dir={tmp}/run",
        "tracking=none" if args.no_mlflow else f"tracking.uri=sqlite:///{tmp}/mlflow.db",
    ]
    return [*command, f"data.limit={limit}"] if limit else command


def _env(code: Code) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code.root), env.get("PYTHONPATH")]))
    env["ANTHROPIC_API_KEY"] = "fake-key-for-benchmark"
    return env


def _make_store(args: argparse.Namespace, tmp: str) -> None:
    """The MLflow store a user's earlier run made (not timed)."""
    if not (args.no_mlflow or args.new_store):
        subprocess.run(
            [sys.executable, "-c", "import mlflow; mlflow.MlflowClient("
             f"'sqlite:///{tmp}/mlflow.db').search_experiments()"],
            check=True, capture_output=True,
        )


def run_once(
    args: argparse.Namespace, server: FakeAnthropicServer, code: Code, limit: int | None,
    prefix: list[str] | None = None,
) -> Run:
    """Run the command once on ``code`` (all answers, or ``data.limit=limit``) and measure it."""
    server.clear()
    with tempfile.TemporaryDirectory() as tmp:
        _make_store(args, tmp)
        command = [*(prefix or []), *_command(args, server.url, tmp, limit)]
        before, start = os.times(), time.monotonic()
        proc = subprocess.Popen(
            command, cwd=tmp, env=_env(code), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )
        samples: list[tuple[float, float]] = []
        sampler = threading.Thread(target=_sample_cpu, args=(proc, samples), daemon=True)
        sampler.start()
        out, err = proc.communicate()
        end, after = time.monotonic(), os.times()
        sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(
            f"{code.label} failed (rc {proc.returncode}):\n{out[-3000:]}\n{err[-3000:]}"
        )
    arrivals = sorted(r.received_at for r in server.messages_requests())
    user = after.children_user - before.children_user
    first, last_reply = arrivals[0], arrivals[-1] + args.latency
    return Run(
        calls=len(arrivals),
        wall=end - start,
        cpu=user + after.children_system - before.children_system,
        user=user,
        first=first - start,
        last_reply=last_reply - start,
        cpu_first=_cpu_at(samples, first),
        cpu_last_reply=_cpu_at(samples, last_reply),
        cpu_end=samples[-1][1] if samples else 0.0,
        load=os.getloadavg()[0],
    )


def marginal_ms(full: Run, subset: Run) -> float:
    """Extra CPU over extra calls, milliseconds per call (fixed costs cancel)."""
    return 1e3 * (full.cpu - subset.cpu) / (full.calls - subset.calls)


@contextlib.contextmanager
def reference_checkout(commit: str | None) -> Iterator[Code | None]:
    """A temporary ``git worktree`` of ``commit`` (removed afterwards), or None."""
    if commit is None:
        yield None
        return
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", commit],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "reference"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), sha],
            check=True, capture_output=True,
        )
        # its bytecode compiled now, not during its first timed run
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "locomo_exp")],
                       check=True, capture_output=True)
        try:
            yield Code(f"reference {sha}", folder)
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)],
                check=False, capture_output=True,
            )


def this_code() -> Code:
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        check=False, capture_output=True, text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        check=False, capture_output=True, text=True,
    ).stdout.strip()
    return Code(f"this checkout {sha}{' + changes' if dirty else ''}", REPO)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def print_runs(
    args: argparse.Namespace, code: Code, pairs: list[tuple[Run, Run]]
) -> dict[str, float]:
    """Print one code's medians; return them for the ratios."""
    full = [f for f, _ in pairs]
    calls = full[0].calls
    ideal = calls * args.latency / args.concurrency
    wall = _median([r.wall for r in full])
    cpu = _median([r.cpu for r in full])
    during = _median([r.cpu_last_reply - r.cpu_first for r in full])
    marginal = _median([marginal_ms(f, s) for f, s in pairs])
    print(f"{code.label}: {calls} calls (subset {pairs[0][1].calls}), medians of {len(pairs)}; "
          f"load {min(r.load for r in full):.2f}-{max(r.load for r in full):.2f}")
    print(f"  whole command              {wall:6.2f} s = {wall / ideal:.2f}x ideal "
          f"(target <= 1.10 x ideal + 3 s = {1.10 * ideal + 3:.2f} s)")
    print(f"  calls span                 {_median([r.last_reply - r.first for r in full]):6.2f} s"
          f" = {_median([r.last_reply - r.first for r in full]) / ideal:.2f}x ideal")
    print(f"  before the first call      {_median([r.first for r in full]):6.2f} s  "
          f"(CPU {_median([r.cpu_first for r in full]):.2f} s)")
    print(f"  after the last reply       {_median([r.wall - r.last_reply for r in full]):6.2f} s  "
          f"(CPU {_median([r.cpu_end - r.cpu_last_reply for r in full]):.2f} s)")
    print(f"  command CPU                {cpu:6.2f} s = {1e3 * cpu / calls:.2f} ms per call "
          f"(user {_median([r.user for r in full]):.2f} s)")
    print(f"  client CPU during the calls {during:5.2f} s = {1e3 * during / calls:.2f} ms per call")
    print(f"  marginal client CPU        {marginal:6.2f} ms per call (target <= "
          f"{TARGET_MS_PER_CALL:g} ms; pairs: "
          f"{', '.join(f'{marginal_ms(f, s):.2f}' for f, s in pairs)})")
    return {"whole command": wall, "command CPU": cpu, "CPU during the calls": during,
            "marginal CPU per call": marginal}


def callgrind_count(args: argparse.Namespace, server: FakeAnthropicServer, code: Code,
                    limit: int) -> tuple[int, int]:
    """``(instructions, calls)`` of one command under callgrind."""
    server.clear()
    with tempfile.TemporaryDirectory() as tmp:
        _make_store(args, tmp)
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/callgrind.out",
             *_command(args, server.url, tmp, limit)],
            cwd=tmp, env={**_env(code), "PYTHONHASHSEED": "0"}, capture_output=True, text=True,
            check=False,
        )
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"{code.label} under callgrind failed:\n{proc.stderr[-3000:]}")
    return int(found.group(1)), len(server.messages_requests())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=3, help="full + subset runs per code")
    parser.add_argument("--subset", type=int, default=256, help="data.limit of the small run")
    parser.add_argument("--reference-commit", default=None, help="e.g. 104e73d (issue 20's)")
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead")
    parser.add_argument("--callgrind-limits", default="64,320")
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
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), f"on {os.cpu_count()} CPUs")
    try:
        with reference_checkout(args.reference_commit) as reference:
            codes = [this_code(), *([reference] if reference else [])]
            if args.py_spy:
                fmt = {".json": "speedscope", ".txt": "raw"}.get(args.py_spy.suffix, "flamegraph")
                spy = ["py-spy", "record", "--subprocesses", "-r", "200", "-f", fmt,
                       "-o", str(args.py_spy), "--"]
                run = run_once(args, server, codes[0], None, spy)
                print(f"{run.calls} calls in {run.wall:.2f} s; profile in {args.py_spy}")
                return 0
            if args.callgrind:
                return callgrind(args, server, codes)
            pairs: dict[str, list[tuple[Run, Run]]] = {code.label: [] for code in codes}
            for i in range(args.pairs):
                order = codes if i % 2 == 0 else codes[::-1]
                for code in order:
                    sizes = (None, args.subset) if i % 2 == 0 else (args.subset, None)
                    runs = {size: run_once(args, server, code, size) for size in sizes}
                    pairs[code.label].append((runs[None], runs[args.subset]))
            figures = [print_runs(args, code, pairs[code.label]) for code in codes]
    finally:
        server.stop()
    if len(figures) == 2:
        print(f"ratio this / {codes[1].label}:")
        for name, value in figures[0].items():
            print(f"  {name:<26} {value / figures[1][name]:.2f}x")
    return 0


def callgrind(args: argparse.Namespace, server: FakeAnthropicServer, codes: list[Code]) -> int:
    """Instructions per call of each code, from two sizes under callgrind."""
    small, large = (int(x) for x in args.callgrind_limits.split(","))
    per_call: list[float] = []
    for code in codes:
        (ir_small, calls_small), (ir_large, calls_large) = (
            callgrind_count(args, server, code, small), callgrind_count(args, server, code, large)
        )
        per_call.append((ir_large - ir_small) / (calls_large - calls_small))
        print(f"{code.label}: {ir_small / 1e9:.2f} G instructions for {calls_small} calls, "
              f"{ir_large / 1e9:.2f} G for {calls_large}: {per_call[-1] / 1e6:.2f} M per call; "
              f"fixed {(ir_small - calls_small * per_call[-1]) / 1e9:.2f} G")
    if len(per_call) == 2:
        print(f"ratio this / {codes[1].label}: {per_call[0] / per_call[1]:.2f}x per call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
