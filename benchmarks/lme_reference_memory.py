"""Peak memory (RSS) of reading a LongMemEval dataset file streaming, against json.load.

Usage (from the project root)::

    .venv/bin/python benchmarks/lme_reference_memory.py [--mb 265] [--questions 500]

Generates a file of LongMemEval's layout (``longmemeval_s_cleaned.json``'s shape: 500
questions, each with about 50 haystack sessions of user/assistant turns) of about ``--mb``
megabytes in a temporary directory, then reads it in two fresh child processes:

* ``streamed``: :func:`locomo_exp.benchmarks.longmemeval.reference.read_lme_reference`
  (ijson events,
  only the question fields kept);
* ``reference``: ``json.load`` of the same file (what a plain reader would do);
* ``imports``: the package's import alone, so the reading's own share is visible.

Prints each child's peak resident set size (``ru_maxrss`` of that child from ``os.wait4``,
kilobytes on Linux; ``benchmarks/_common.py``), its reading time, and the ratio streamed /
reference, both measured in this run. Target: streamed peak RSS at most 300 MB on the 265 MB
file (the official ``_m`` file is 2.7 GB: memory must not grow with the haystacks). Not a
test: the figure depends on the machine. POSIX only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from _common import run_measured

TARGET_MB = 300.0
TYPES = (
    ("single-session-user", 70),
    ("single-session-assistant", 56),
    ("single-session-preference", 30),
    ("multi-session", 133),
    ("temporal-reasoning", 133),
    ("knowledge-update", 78),
)
WORDS = "the a memory chat assistant user trip dinner book garden project meeting bike".split()

CHILD = {
    "imports": (
        "import sys; "
        "from locomo_exp.benchmarks.longmemeval.reference import read_lme_reference as r; "
        "print('import', 'only')"
    ),
    "streamed": (
        "import sys; "
        "from locomo_exp.benchmarks.longmemeval.reference import read_lme_reference as r; "
        "x = r(sys.argv[1]); print(len(x.questions), x.variant)"
    ),
    "reference": (
        "import json, sys; x = json.load(open(sys.argv[1], encoding='utf-8')); "
        "print(len(x), 'json.load')"
    ),
}


def write_dataset(path: Path, target_mb: float, questions: int, seed: int = 0) -> None:
    """Write ``questions`` items whose haystacks fill about ``target_mb`` megabytes."""
    rng = random.Random(seed)
    per_question = target_mb * 1e6 / questions
    sessions, turns = 50, 10
    turn_chars = max(20, int(per_question / (sessions * turns)) - 40)
    kinds = [name for name, n in TYPES for _ in range(n)]
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for index in range(questions):
            text = " ".join(rng.choice(WORDS) for _ in range(turn_chars // 6 + 1))[:turn_chars]
            session = [
                {"role": "user" if t % 2 == 0 else "assistant", "content": text}
                for t in range(turns)
            ]
            item = {
                "question_id": f"q{index:04d}" + ("_abs" if index % 17 == 0 else ""),
                "question_type": kinds[index % len(kinds)],
                "question": f"What did I say about item {index}?",
                "answer": index if index % 19 == 0 else f"answer {index}",
                "question_date": "2023/05/30 (Tue) 23:40",
                "haystack_session_ids": [f"s{index}_{s}" for s in range(sessions)],
                "haystack_dates": ["2023/05/20 (Sat) 02:21"] * sessions,
                "haystack_sessions": [session] * sessions,
                "answer_session_ids": [f"s{index}_0"],
            }
            handle.write(("," if index else "") + json.dumps(item))
        handle.write("]\n")


def measure(kind: str, path: Path) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds of its work, child's output) of one fresh child reading ``path``."""
    script = (
        "import sys, time; t = time.perf_counter(); "
        + CHILD[kind].replace("print(", "out = (")
        + "; print(*out, time.perf_counter() - t)"
    )
    run = run_measured([sys.executable, "-c", script, str(path)])
    if run.returncode != 0:
        raise RuntimeError(f"{kind} child failed: {run.stderr[-2000:]}")
    *label, seconds = run.stdout.split()
    return run.peak_rss_mb, float(seconds), " ".join(label)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=265.0)
    parser.add_argument("--questions", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "longmemeval_s_generated.json"
        started = time.perf_counter()
        write_dataset(data, args.mb, args.questions)
        size_mb = data.stat().st_size / 1e6
        print(f"generated {size_mb:.1f} MB ({args.questions} questions) in "
              f"{time.perf_counter() - started:.1f} s")
        results = {kind: measure(kind, data) for kind in CHILD}
    for kind, (rss, seconds, label) in results.items():
        print(f"{kind:>9}: peak RSS {rss:8.1f} MB, {seconds:6.2f} s ({label})")
    streamed, reference = results["streamed"][0], results["reference"][0]
    print(f"reading itself (streamed - imports): {streamed - results['imports'][0]:.1f} MB")
    print(f"ratio streamed / json.load peak RSS: {streamed / reference:.3f}")
    verdict = "met" if streamed <= TARGET_MB else "NOT met"
    print(f"target peak RSS <= {TARGET_MB:.0f} MB on a {size_mb:.0f} MB file: {verdict}")
    return 0 if streamed <= TARGET_MB else 1


if __name__ == "__main__":
    raise SystemExit(main())
