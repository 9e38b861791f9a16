"""``python -m locomo_exp.llm.cache merge OUT.sqlite A.sqlite ...`` (see :mod:`.merge`)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from locomo_exp.llm.cache.merge import merge_caches
from locomo_exp.llm.errors import JudgeError


def main(argv: list[str] | None = None) -> int:
    """Run the cache command line; returns the exit code (0 ok, 2 bad input)."""
    parser = argparse.ArgumentParser(
        prog="python -m locomo_exp.llm.cache", description="Judge cache tools."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    merge = commands.add_parser(
        "merge", help="merge per-job cache files into one (idempotent; sources are read only)"
    )
    merge.add_argument("output", type=Path, help="merged cache file (created if missing)")
    merge.add_argument("sources", type=Path, nargs="+", help="per-job cache files")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        report = merge_caches(args.output, args.sources)
    except JudgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for source, counts in report.added.items():
        print(
            f"{source}: {counts['judge_calls']} call(s), {counts['judge_batches']} batch(es) "
            f"added; {report.conflicts[source]} already stored with another reply (kept)"
        )
    print(f"{report.output}: {report.calls_added} call(s) added in total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
