"""Judge throughput against the fake Messages API (100 ms per call by default).

Measures, with the real ``anthropic`` SDK and the fake server in a separate process:

1. ``run_judge`` on 1,540 questions x 10 runs at the default ``judge.max_concurrency``:
   wall time against the ideal ``calls x latency / concurrency``, and the client's CPU time
   per call (``time.process_time`` of this process, which only runs the client).
2. The seed's design on 100 questions: questions one after another, each question's 10
   runs in sequential batches of 3 concurrent calls; and ``run_judge`` on the same 100
   questions for comparison.

Usage::

    .venv/bin/python benchmarks/judge_throughput.py [--questions 1540] [--runs 10]
        [--latency 0.1] [--concurrency 32] [--seed-questions 100] [--profile]

Prints one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import logging
import os
import pstats
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES  # noqa: E402
from locomo_exp.config import JudgeConfig  # noqa: E402
from locomo_exp.judge import run_judge  # noqa: E402
from locomo_exp.judge.calls import build_call_specs  # noqa: E402
from locomo_exp.judge.providers.anthropic import AnthropicJudgeClient  # noqa: E402
from locomo_exp.results import QARecord  # noqa: E402

FAKE_KEY = "fake-key-for-benchmark"


def make_records(n: int) -> list[QARecord]:
    """Synthetic records of LoCoMo-like length (categories 1-4)."""
    return [
        QARecord(
            question_id=f"conv-{i // 154}:{i}",
            question=f"When did Caroline go to the LGBTQ support group for the {i}th time?",
            ground_truth=f"{1 + i % 28} May 2023",
            prediction=(
                f"Caroline went to the LGBTQ support group on {1 + i % 28} May 2023, the day "
                "before she told Melanie about it; she said it was powerful and that she felt "
                "accepted there."
            ),
            category=1 + i % 4,
        )
        for i in range(n)
    ]


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fake_anthropic.py"), "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {url!r}")
    return proc, url


def bench_pool(
    records: list[QARecord], cfg: JudgeConfig, latency: float, profile: bool
) -> dict[str, Any]:
    calls = len(records) * cfg.runs
    with tempfile.TemporaryDirectory() as tmp:
        cfg = replace(cfg, cache_path=str(Path(tmp) / "cache.sqlite"))
        profiler = cProfile.Profile() if profile else None
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if profiler:
            profiler.enable()
        result = run_judge(records, cfg, start_dir=Path(tmp), category_names=DEFAULT_CATEGORY_NAMES)
        if profiler:
            profiler.disable()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    ideal = calls * latency / cfg.max_concurrency
    out: dict[str, Any] = {
        "questions": len(records),
        "runs": cfg.runs,
        "calls": calls,
        "concurrency": cfg.max_concurrency,
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "wall_over_ideal": round(wall / ideal, 3),
        "calls_per_s": round(calls / wall, 1),
        "client_cpu_s": round(cpu, 2),
        "client_cpu_ms_per_call": round(1000 * cpu / calls, 3),
        "client_cpu_utilisation": round(cpu / wall, 3),
        "valid": result.summary["counts"]["valid"],
        "api_errors": result.summary["counts"]["api_error"],
    }
    if profiler:
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(15)
        out["profile_top_tottime"] = stream.getvalue()
    return out


async def _seed_design(records: list[QARecord], cfg: JudgeConfig) -> int:
    """The seed: one question after another, its runs in sequential batches of 3."""
    client = AnthropicJudgeClient(
        api_key=FAKE_KEY,
        temperature=cfg.temperature,
        base_url=cfg.base_url,
        timeout_s=cfg.timeout_s,
    )
    calls = 0
    try:
        specs = build_call_specs(records, cfg, api_version=client.api_version)
        by_question: dict[str, list[Any]] = {}
        for spec in specs:
            by_question.setdefault(spec.question_id, []).append(spec)
        for question_specs in by_question.values():
            for start in range(0, len(question_specs), 3):
                batch = question_specs[start : start + 3]
                await asyncio.gather(*(client.complete(s.request) for s in batch))
                calls += len(batch)
    finally:
        await client.aclose()
    return calls


def bench_seed(records: list[QARecord], cfg: JudgeConfig, latency: float) -> dict[str, Any]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    calls = asyncio.run(_seed_design(records, cfg))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    batches_per_question = -(-cfg.runs // 3)
    ideal = len(records) * batches_per_question * latency
    return {
        "questions": len(records),
        "runs": cfg.runs,
        "calls": calls,
        "design": "questions sequential, runs in batches of 3",
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "calls_per_s": round(calls / wall, 1),
        "client_cpu_ms_per_call": round(1000 * cpu / calls, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1540)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=JudgeConfig().max_concurrency)
    parser.add_argument("--seed-questions", type=int, default=100)
    parser.add_argument("--skip-full", action="store_true")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    os.environ["ANTHROPIC_API_KEY"] = FAKE_KEY
    server, url = start_server(args.latency)
    try:
        cfg = JudgeConfig(
            base_url=url, runs=args.runs, max_concurrency=args.concurrency, progress_interval_s=5.0
        )
        report: dict[str, Any] = {"latency_s": args.latency}
        if not args.skip_full:
            report["pool_full"] = bench_pool(
                make_records(args.questions), cfg, args.latency, args.profile
            )
        small = make_records(args.seed_questions)
        report["seed_design_small"] = bench_seed(small, cfg, args.latency)
        report["pool_small"] = bench_pool(small, cfg, args.latency, False)
        report["speedup_small"] = round(
            report["seed_design_small"]["wall_s"] / report["pool_small"]["wall_s"], 1
        )
    finally:
        server.kill()
        server.wait()
    profile = report.get("pool_full", {}).pop("profile_top_tottime", None)
    print(json.dumps(report, indent=2))
    if profile:
        print(profile)


if __name__ == "__main__":
    main()
