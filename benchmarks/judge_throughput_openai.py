"""Judge throughput of ``judge.provider=openai`` against the fake OpenAI server (100 ms per call).

With the real ``openai`` SDK and ``tests/fake_openai.py`` in a separate process:
``run_judge`` on 1,540 questions x 10 runs at ``judge.max_concurrency=32``; prints the wall
time against the ideal ``calls x latency / concurrency`` (target: at most 1.10x) and the
client's CPU time per call. The same run with ``judge.provider=anthropic`` against the fake
Messages API is measured in the same process as the reference (``--no-reference`` skips
it): on a loaded machine both ratios rise, and their quotient shows the provider's own cost.

Usage::

    .venv/bin/python benchmarks/judge_throughput_openai.py [--questions 1540] [--runs 10]
        [--latency 0.1] [--concurrency 32]

Prints one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from judge_throughput import bench_pool, make_records  # noqa: E402

from locomo_exp.config import JudgeConfig  # noqa: E402

FAKE_KEY = "fake-openai-key-for-benchmark"


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fake_openai.py"), "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {url!r}")
    return proc, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1540)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    os.environ.pop("OPENAI_BASE_URL", None)
    server, url = start_server(args.latency)
    try:
        cfg = JudgeConfig(
            provider="openai",
            model="gpt-4o-mini-2024-07-18",
            base_url=url,
            runs=args.runs,
            max_concurrency=args.concurrency,
            progress_interval_s=5.0,
        )
        cfg = replace(cfg, model_info=replace(cfg.model_info, id=None))
        report: dict[str, Any] = {"provider": "openai", "latency_s": args.latency}
        report["pool_full"] = bench_pool(make_records(args.questions), cfg, args.latency, False)
        report["target_wall_over_ideal"] = 1.10
        report["within_target"] = report["pool_full"]["wall_over_ideal"] <= 1.10
    finally:
        server.kill()
        server.wait()
    if not args.no_reference:
        ref = reference_anthropic(args)
        report["reference_anthropic"] = ref
        report["openai_over_anthropic"] = round(
            report["pool_full"]["wall_over_ideal"] / ref["wall_over_ideal"], 3
        )
    report["load_average_1min"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))


def reference_anthropic(args: argparse.Namespace) -> dict[str, Any]:
    """The same run through the anthropic provider and the fake Messages API."""
    from judge_throughput import start_server as start_anthropic

    os.environ["ANTHROPIC_API_KEY"] = "fake-key-for-benchmark"
    server, url = start_anthropic(args.latency)
    try:
        cfg = JudgeConfig(
            base_url=url, runs=args.runs, max_concurrency=args.concurrency, progress_interval_s=5.0
        )
        return bench_pool(make_records(args.questions), cfg, args.latency, False)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
