"""How long lexical scoring takes on a real file: the 1,986 Honcho LoCoMo answers.

Usage (from the project root)::

    .venv/bin/python benchmarks/f1_speed.py [--repeats 5] [--path FILE] [--no-tracemalloc]

Times :func:`locomo_exp.scoring.score_lexical` (all three F1 variants, with and without
BLEU-1) with ``time.perf_counter``. The first pass runs with an empty stemming cache
(``porter_stem`` and the LoCoMo token lists are cached, so each distinct word is stemmed
once); later passes are warm. ``benchmarks/f1_vs_official.py`` compares with the official
logic. Peak memory of one cold pass comes from ``tracemalloc`` (which itself slows the
pass, so it is measured separately). Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from locomo_exp.data import load_results
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.f1 import _locomo_tokens, porter_stem

DEFAULT_PATH = (
    Path(__file__).resolve().parents[1].parent / "shared/data/predictions/honcho_locomo10_qa.json"
)


def _timed(fn: Callable[[], object]) -> float:
    """Seconds for one call of ``fn``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _report(label: str, seconds: list[float], n: int) -> None:
    ms = [s * 1e3 for s in seconds]
    best, median = min(ms), statistics.median(ms)
    print(
        f"  {label:<26} median {median:8.1f} ms/pass  best {best:8.1f} ms/pass  "
        f"= {median * 1e3 / n:6.1f} us/question (median), {len(ms)} pass(es)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--repeats", type=int, default=5, help="warm passes per setting")
    parser.add_argument("--no-tracemalloc", action="store_true")
    args = parser.parse_args()

    if not args.path.is_file():
        print(f"not found: {args.path} (the read-only ../shared/data folder)", file=sys.stderr)
        return 2

    start = time.perf_counter()
    loaded = load_results(args.path)
    load_s = time.perf_counter() - start
    records = loaded.records
    n = len(records)
    print(f"{args.path.name}: {n} questions ({loaded.format}), loaded in {load_s * 1e3:.1f} ms")
    print(f"python {sys.version.split()[0]}")

    for with_bleu1 in (True, False):
        print(f"score_lexical(records, 'locomo', with_bleu1={with_bleu1}):")
        porter_stem.cache_clear()
        _locomo_tokens.cache_clear()
        cold = _timed(lambda bleu=with_bleu1: score_lexical(records, "locomo", bleu))
        distinct = porter_stem.cache_info().currsize
        warm = [
            _timed(lambda bleu=with_bleu1: score_lexical(records, "locomo", bleu))
            for _ in range(args.repeats)
        ]
        _report("cold (empty stem cache)", [cold], n)
        _report("warm", warm, n)
        print(f"  distinct words stemmed: {distinct}")

    if not args.no_tracemalloc:
        porter_stem.cache_clear()
        tracemalloc.start()
        score_lexical(records, "locomo", True)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"peak traced memory, one cold pass with BLEU-1: {peak / 2**20:.2f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
