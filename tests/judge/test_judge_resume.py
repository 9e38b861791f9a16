"""Resuming a judge job killed with SIGKILL part-way: the second run makes exactly the calls
the first did not finish."""

from __future__ import annotations

import collections
import os
import signal
import time
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config
from judge_helpers import numbered_records, query_cache_file, start_worker

from locomo_exp.judge import run_judge
from locomo_exp.results import QARecord

QUESTIONS = 20
RUNS = 5
TOTAL = QUESTIONS * RUNS

WORKER = """
import sys
from pathlib import Path
from locomo_exp.config import JudgeConfig
from locomo_exp.judge import run_judge
from locomo_exp.results import QARecord

url, cache_dir = sys.argv[1], Path(sys.argv[2])
records = [
    QARecord(f"q{i}", f"Question number {i}?", f"gold {i}", f"prediction {i}", 1 + i % 4)
    for i in range(int(sys.argv[3]))
]
cfg = JudgeConfig(base_url=url, cache_path=str(cache_dir / "judge_cache.sqlite"),
                  runs=int(sys.argv[4]), max_concurrency=4, progress=False)
run_judge(records, cfg, start_dir=cache_dir, category_names={})
print("FINISHED")
"""


def records() -> list[QARecord]:
    return numbered_records(QUESTIONS)


def cached_rows(db: Path) -> list[tuple[str, int, int]]:
    return query_cache_file(db, "SELECT question_id, run_index, writer_pid FROM judge_calls")


@pytest.mark.slow
def test_run_killed_part_way_resumes_with_exactly_the_unfinished_calls(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.latency_s = 0.05
    db = tmp_path / "judge_cache.sqlite"
    proc = start_worker(WORKER, fake_anthropic, tmp_path, QUESTIONS, RUNS)
    try:
        deadline = time.monotonic() + 30
        while len(cached_rows(db)) < TOTAL * 0.3:
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "worker made no progress"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert b"FINISHED" not in out

    fake_anthropic.wait_idle()
    first_rows = cached_rows(db)
    done = len(first_rows)
    first_requests = len(fake_anthropic.messages_requests())
    assert 0 < done < TOTAL
    assert {pid for _, _, pid in first_rows} == {proc.pid}
    # Calls in flight at the kill were sent but never stored: at most one per worker.
    assert 0 <= first_requests - done <= 4

    fake_anthropic.clear()
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=RUNS, max_concurrency=4)
    result = run_judge(records(), cfg, start_dir=tmp_path, category_names={})

    second = fake_anthropic.messages_requests()
    assert len(second) == TOTAL - done
    assert result.summary["counts"]["cache_hits"] == done
    assert result.summary["counts"]["calls_made"] == TOTAL - done
    assert result.summary["counts"]["valid"] == TOTAL

    # Per question: the second run asked exactly for the runs the first did not store.
    stored_per_question = collections.Counter(qid for qid, _, _ in first_rows)
    asked_per_question = collections.Counter(
        next(
            r.question_id
            for r in records()
            if f"Question number {r.question_id[1:]}?" in req.prompt
        )
        for req in second
    )
    for record in records():
        qid = record.question_id
        assert asked_per_question[qid] == RUNS - stored_per_question[qid], qid
    final = cached_rows(db)
    assert len(final) == TOTAL
    assert len({(qid, run) for qid, run, _ in final}) == TOTAL
    assert set(first_rows) <= set(final)  # rows of the killed run are kept as they were
