"""Peak memory (RSS) of an F1-only job on a large generated results file.

Usage (from the project root)::

    .venv/bin/python benchmarks/memory_peak.py [--records 100000] [--bootstrap-samples 1000]

Generates ``--records`` questions in the ``qa_results`` layout (the example's answers,
repeated with unique ids, cycling the five categories) in a temporary directory, runs
``python -m locomo_exp data=file ... tracking=none`` in a subprocess, and prints the
child's peak resident set size (``ru_maxrss`` of that child, from ``os.wait4``; kilobytes
on Linux; ``benchmarks/_common.py``). Aim: at most 1.2 GB for 100,000 records. Not a test:
the figure depends on the machine and the library versions. POSIX only (``os.wait4``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from _common import REPO, run_measured

EXAMPLE = REPO / "locomo_exp" / "example" / "qa_results.json"
TARGET_MB = 1200.0


def write_records(path: Path, n: int) -> None:
    """Write ``n`` qa_results records built from the example's 20 answers."""
    template = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[\n")
        for index in range(n):
            record = dict(template[index % len(template)])
            record["question_id"] = f"q{index:07d}"
            record["conversation_id"] = f"conv{index // 200:05d}"
            record["category"] = index % 5 + 1
            handle.write(json.dumps(record) + (",\n" if index < n - 1 else "\n"))
        handle.write("]\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "qa_results.json"
        write_records(data, args.records)
        size_mb = data.stat().st_size / 1e6
        command = [
            sys.executable,
            "-m",
            "locomo_exp",
            "data=file",
            f"data.path={data}",
            "data.format=qa_results",
            "tracking=none",
            f"report.bootstrap_samples={args.bootstrap_samples}",
            f"hydra.run.dir={Path(tmp) / 'out'}",
        ]
        run = run_measured(command, cwd=tmp)
        if run.returncode != 0:
            print(run.stderr[-3000:], file=sys.stderr)
            return run.returncode
    peak_mb, seconds = run.peak_rss_mb, run.seconds
    verdict = "within" if peak_mb <= TARGET_MB else "ABOVE"
    print(
        f"{args.records:,} records ({size_mb:.1f} MB file), bootstrap {args.bootstrap_samples:,} "
        f"samples: peak RSS {peak_mb:,.0f} MB ({verdict} the {TARGET_MB:,.0f} MB aim), "
        f"{seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
