"""A batch judge run killed with SIGKILL while its batch is processing, started again with
the same config: it polls the recorded batch, submits nothing new and completes."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config
from judge_helpers import numbered_records, query_cache_file, start_worker

from locomo_exp.config import JudgeBatchConfig, JudgeMode
from locomo_exp.judge import run_judge
from locomo_exp.results import QARecord

QUESTIONS = 30
RUNS = 3

WORKER = """
import sys
from pathlib import Path
from locomo_exp.config import JudgeBatchConfig, JudgeConfig, JudgeMode
from locomo_exp.judge import run_judge
from locomo_exp.results import QARecord

url, cache_dir = sys.argv[1], Path(sys.argv[2])
records = [
    QARecord(f"q{i}", f"Question number {i}?", f"gold {i}", f"prediction {i}", 1 + i % 4)
    for i in range(int(sys.argv[3]))
]
cfg = JudgeConfig(base_url=url, cache_path=str(cache_dir / "judge_cache.sqlite"),
                  runs=int(sys.argv[4]), progress=False, mode=JudgeMode.batch,
                  batch=JudgeBatchConfig(poll_interval_s=0.05, max_poll_interval_s=0.1))
run_judge(records, cfg, start_dir=cache_dir, category_names={})
print("FINISHED")
"""


def records() -> list[QARecord]:
    return numbered_records(QUESTIONS)


def recorded_batches(db: Path) -> list[tuple[str, str]]:
    return query_cache_file(db, "SELECT batch_id, status FROM judge_batches WHERE batch_id IS NOT NULL")


@pytest.mark.slow
def test_run_killed_while_the_batch_processes_resumes_polling_and_submits_nothing_new(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.batch_processing_s = 3600.0  # processing until ended on demand
    db = tmp_path / "judge_cache.sqlite"
    proc = start_worker(WORKER, fake_anthropic, tmp_path, QUESTIONS, RUNS)
    try:
        deadline = time.monotonic() + 20
        # Killed once the batch id is recorded and the worker has polled it at least once.
        while not (
            recorded_batches(db)
            and any(r.path.startswith("/v1/messages/batches/") for r in fake_anthropic.requests)
        ):
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "worker submitted no batch"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert b"FINISHED" not in out
    fake_anthropic.wait_idle()
    ((batch_id, status),) = recorded_batches(db)
    assert status == "in_progress"
    assert list(fake_anthropic.batches) == [batch_id]
    assert not fake_anthropic.batches[batch_id].results_downloads  # still processing

    fake_anthropic.clear()
    fake_anthropic.end_batches()
    cfg = make_judge_config(
        fake_anthropic,
        tmp_path,
        runs=RUNS,
        mode=JudgeMode.batch,
        batch=JudgeBatchConfig(poll_interval_s=0.05, max_poll_interval_s=0.1),
    )
    result = run_judge(records(), cfg, start_dir=tmp_path, category_names={})

    assert fake_anthropic.batch_create_requests() == []
    assert fake_anthropic.messages_requests() == []
    assert list(fake_anthropic.batches) == [batch_id]
    assert result.summary["counts"]["valid"] == QUESTIONS * RUNS
    assert result.summary["counts"]["cache_hits"] == 1  # the killed run's canary
    assert result.summary["counts"]["calls_made"] == 0
    assert result.summary["batch"]["resumed_batch_ids"] == [batch_id]
    assert result.summary["batch"]["requests_submitted"] == 0
    assert recorded_batches(db) == [(batch_id, "collected")]
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM judge_calls").fetchone()
    assert rows == (QUESTIONS * RUNS, QUESTIONS * RUNS)
