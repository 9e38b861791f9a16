"""Judge throughput against a fake judge API (100 ms per call by default).

Measures, with the provider's real SDK (``--provider anthropic``, the default, or ``openai``)
and its fake server (``tests/fake_anthropic.py``, ``tests/fake_openai.py``) in a separate
process:

1. ``run_judge`` on 1,540 questions x 10 runs at the default ``judge.max_concurrency``:
   wall time against the ideal ``calls x latency / concurrency`` (target: at most 1.10x),
   and the client's CPU time per call (``time.process_time`` of this process, which only
   runs the client).
2. The seed's design on ``--seed-questions`` questions (100 with anthropic, none by default
   with openai: the seed only had Claude): questions one after another, each question's 10
   runs in sequential batches of 3 concurrent calls; and ``run_judge`` on the same
   questions for comparison.
3. With ``--provider openai``, the same full run through the anthropic provider against the
   fake Messages API, measured in the same process as the reference (``--no-reference``
   skips it): on a loaded machine both ratios rise, and their quotient shows the provider's
   own cost.

Usage::

    .venv/bin/python benchmarks/judge_throughput.py [--provider openai] [--questions 1540]
        [--runs 10] [--latency 0.1] [--concurrency 32] [--seed-questions 100] [--skip-full]
        [--no-reference] [--profile]

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
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import REPO, start_fake_server

sys.path.insert(0, str(REPO))

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES  # noqa: E402
from locomo_exp.config import JudgeConfig  # noqa: E402
from locomo_exp.judge import run_judge  # noqa: E402
from locomo_exp.judge.calls import build_call_specs  # noqa: E402
from locomo_exp.llm.providers import make_client  # noqa: E402
from locomo_exp.results import QARecord  # noqa: E402

FAKE_KEYS = {"anthropic": "fake-key-for-benchmark", "openai": "fake-openai-key-for-benchmark"}
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
TARGET_WALL_OVER_IDEAL = 1.10


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


def judge_config(provider: str, url: str, args: argparse.Namespace) -> JudgeConfig:
    """The benchmark's judge config for ``provider``, aimed at its fake at ``url``."""
    os.environ[KEY_ENV[provider]] = FAKE_KEYS[provider]
    common: dict[str, Any] = {
        "base_url": url,
        "runs": args.runs,
        "max_concurrency": args.concurrency,
        "progress_interval_s": 5.0,
    }
    if provider == "anthropic":
        return JudgeConfig(**common)
    cfg = JudgeConfig(provider="openai", model="gpt-4o-mini-2024-07-18", **common)
    return replace(cfg, model_info=replace(cfg.model_info, id=None))


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
    client = make_client(cfg)
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


def measure(provider: str, args: argparse.Namespace, seed_questions: int) -> dict[str, Any]:
    """The full run (unless ``--skip-full``) and the seed comparison on one provider's fake."""
    server, url = start_fake_server(provider, args.latency)
    try:
        cfg = judge_config(provider, url, args)
        report: dict[str, Any] = {}
        if not args.skip_full:
            report["pool_full"] = bench_pool(
                make_records(args.questions), cfg, args.latency, args.profile
            )
        if seed_questions:
            small = make_records(seed_questions)
            report["seed_design_small"] = bench_seed(small, cfg, args.latency)
            report["pool_small"] = bench_pool(small, cfg, args.latency, False)
            report["speedup_small"] = round(
                report["seed_design_small"]["wall_s"] / report["pool_small"]["wall_s"], 1
            )
        return report
    finally:
        server.kill()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=sorted(KEY_ENV), default="anthropic")
    parser.add_argument("--questions", type=int, default=1540)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=JudgeConfig().max_concurrency)
    parser.add_argument("--seed-questions", type=int, default=None)
    parser.add_argument("--skip-full", action="store_true")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("httpx2", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    seed = args.seed_questions
    if seed is None:
        seed = 100 if args.provider == "anthropic" else 0
    report: dict[str, Any] = {"provider": args.provider, "latency_s": args.latency}
    report.update(measure(args.provider, args, seed))
    profile = report.get("pool_full", {}).pop("profile_top_tottime", None)
    if "pool_full" in report:
        report["target_wall_over_ideal"] = TARGET_WALL_OVER_IDEAL
        report["within_target"] = report["pool_full"]["wall_over_ideal"] <= TARGET_WALL_OVER_IDEAL
        if args.provider != "anthropic" and not args.no_reference:
            args.profile = False
            ref = measure("anthropic", args, 0)["pool_full"]
            report["reference_anthropic"] = ref
            report[f"{args.provider}_over_anthropic"] = round(
                report["pool_full"]["wall_over_ideal"] / ref["wall_over_ideal"], 3
            )
    report["load_average_1min"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))
    if profile:
        print(profile)


if __name__ == "__main__":
    main()
