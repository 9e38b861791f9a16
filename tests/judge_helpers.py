"""Shared helpers of the judge tests: synthetic records and a judging worker process."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT_ROOT, clean_env
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer

from locomo_exp.results import QARecord


def make_records(n: int, categories: tuple[int, ...] = (1, 2, 3, 4)) -> list[QARecord]:
    """``n`` distinct answered questions ("What did Ann do in week <i>?"), categories cycled."""
    return [
        QARecord(
            question_id=f"conv-1:{i}",
            question=f"What did Ann do in week {i}?",
            ground_truth=f"She painted picture {i}",
            prediction=f"Ann painted picture number {i}",
            category=categories[i % len(categories)],
        )
        for i in range(n)
    ]


def numbered_records(n: int) -> list[QARecord]:
    """The records the worker scripts judge: ``q<i>`` with categories 1-4 cycled."""
    return [
        QARecord(f"q{i}", f"Question number {i}?", f"gold {i}", f"prediction {i}", 1 + i % 4)
        for i in range(n)
    ]


def start_worker(
    script_text: str, server: FakeAnthropicServer, work_dir: Path, questions: int, runs: int
) -> subprocess.Popen:
    """Run ``script_text`` in a new Python process: argv = url, work dir, questions, runs."""
    script = work_dir / "worker.py"
    script.write_text(script_text)
    env = clean_env(ANTHROPIC_API_KEY=FAKE_API_KEY, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.Popen(
        [sys.executable, str(script), server.url, str(work_dir), str(questions), str(runs)],
        env=env,
        cwd=str(work_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def query_cache_file(db: Path, sql: str) -> list[tuple]:
    """Rows of ``sql`` on a judge cache file another process may still be creating ([] until then)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []
