"""The judge cache: WAL mode, first writer wins, concurrent writers, path resolution, and
claims on calls in flight (concurrent jobs judging the same answers never pay twice)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, error, make_judge_config, server_error

from locomo_exp.judge import run_judge
from locomo_exp.llm.cache import (
    HOSTNAME,
    CacheKey,
    CallClaims,
    JudgeCache,
    pid_alive,
    resolve_cache_path,
)
from locomo_exp.llm.errors import JudgeFatalAPIError
from locomo_exp.llm.messages import JudgeReply
from locomo_exp.results import QARecord


def key(run: int, question: str = "q") -> CacheKey:
    return CacheKey(
        model="m",
        api_version="v",
        temperature=0.5,
        protocol="rubric",
        prompt_version="rubric-v1",
        max_tokens=256,
        structured_output=True,
        question=question,
        ground_truth="g",
        prediction="p",
        category=1,
        run_index=run,
    )


def test_cache_uses_wal_and_stores_raw_reply_and_tokens(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "sub" / "c.sqlite") as cache:
        assert cache._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        cache.put(key(0), JudgeReply("raw text", "max_tokens", 11, 22, "m-1"), question_id="q0")
        stored = cache.get_many([key(0).digest(), key(1).digest()])
    assert list(stored) == [key(0).digest()]
    assert stored[key(0).digest()] == JudgeReply("raw text", "max_tokens", 11, 22, "m-1")


def test_first_writer_of_a_key_wins(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        cache.put(key(0), JudgeReply("first", "end_turn"))
        cache.put(key(0), JudgeReply("second", "end_turn"))
        assert cache.get_many([key(0).digest()])[key(0).digest()].text == "first"
        assert cache.count() == 1


def test_concurrent_writers_on_one_file_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    JudgeCache(path).close()
    errors: list[BaseException] = []

    def write(worker: int) -> None:
        try:
            with JudgeCache(path) as cache:  # own connection, as another process would have
                for run in range(150):
                    cache.put(key(run, question=f"q{run % 50}"), JudgeReply(f"w{worker}", None))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with JudgeCache(path) as cache:
        assert cache.count() == 150


def test_relative_cache_path_resolves_against_start_dir_and_expands_home(tmp_path: Path) -> None:
    assert resolve_cache_path("a/b.sqlite", tmp_path) == (tmp_path / "a" / "b.sqlite").resolve()
    assert (
        resolve_cache_path(str(tmp_path / "abs.sqlite"), Path("/elsewhere"))
        == (tmp_path / "abs.sqlite").resolve()
    )
    assert not str(resolve_cache_path("~/x.sqlite", tmp_path)).startswith("~")


# ----------------------------------------------------------------------------- claims


def records(n: int = 10) -> list[QARecord]:
    return [
        QARecord(f"q{i}", f"Question number {i}?", f"gold {i}", f"prediction {i}", 1 + i % 4)
        for i in range(n)
    ]


def claim_rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT key, owner, pid FROM judge_claims").fetchall()


def plant_claims(db: Path, digests: list[str], pid: int, heartbeat_at: float) -> None:
    """Claims as another owner (``pid`` on this host) would have left them."""
    JudgeCache(db).close()  # create the tables
    with sqlite3.connect(db) as conn:
        conn.executemany(
            "INSERT INTO judge_claims (key, owner, pid, host, claimed_at, heartbeat_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (d, f"{HOSTNAME}:{pid}:other", pid, HOSTNAME, heartbeat_at, heartbeat_at)
                for d in digests
            ],
        )


def digests_of(cfg, recs: list[QARecord]) -> list[str]:
    from locomo_exp.judge.calls import build_call_specs
    from locomo_exp.llm.providers.anthropic import api_version_for

    return [s.digest for s in build_call_specs(recs, cfg, api_version=api_version_for(0.5))]


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid no longer exists
    return proc.pid


def test_claims_hand_a_call_to_one_owner_and_its_reply_to_the_others(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    digest = key(0).digest()
    with JudgeCache(path) as c1, JudgeCache(path) as c2:
        a = CallClaims(c1, stale_after_s=600)
        b = CallClaims(c2, stale_after_s=600)
        assert a.acquire(digest).acquired
        held = b.acquire(digest)
        assert not held.acquired and held.reply is None and held.holder is not None
        a.release(digest)  # the call failed: free for the other owner
        assert b.acquire(digest).acquired
        assert a.acquire(digest).holder is not None
        b.complete(key(0), JudgeReply("done", "end_turn"), question_id="q")
        assert a.acquire(digest).reply == JudgeReply("done", "end_turn")
        assert claim_rows(path) == []  # stored and released in one transaction
        a.close()
        b.close()


def test_a_claim_of_a_dead_or_silent_owner_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    now = time.time()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])  # exits; not reaped yet
    deadline = time.monotonic() + 10
    while pid_alive(zombie.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pid_alive(os.getpid())
    assert not pid_alive(zombie.pid)  # a zombie will never finish its call
    zombie.wait()
    assert not pid_alive(dead_pid())

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        plant_claims(path, [key(0).digest()], dead_pid(), now)
        plant_claims(path, [key(1).digest()], sleeper.pid, now)  # alive, fresh heartbeat
        plant_claims(path, [key(2).digest()], sleeper.pid, now - 100)  # alive, silent
        plant_claims(path, [key(3).digest()], os.getpid(), now)  # this pid, a pool now gone
        with JudgeCache(path) as cache, CallClaims(cache, stale_after_s=60) as claims:
            taken = claims.acquire(key(0).digest())
            assert taken.acquired and taken.took_over is not None
            assert claims.acquire(key(1).digest()).holder == f"pid {sleeper.pid} on {HOSTNAME}"
            assert claims.acquire(key(2).digest()).acquired
            assert claims.acquire(key(3).digest()).acquired
            assert claims.takeovers == 3
    finally:
        sleeper.kill()
        sleeper.wait()


def test_two_jobs_judging_the_same_answers_at_once_send_each_call_once(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Two pools (threads, each with its own connection, as two processes would have)."""
    fake_anthropic.latency_s = 0.05
    recs = records(10)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=3, max_concurrency=4)
    start = threading.Barrier(2)
    summaries: list[dict] = []
    errors: list[BaseException] = []

    def job() -> None:
        try:
            start.wait()
            summaries.append(run_judge(recs, cfg, start_dir=tmp_path, category_names={}).summary)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=job) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    sent = len(fake_anthropic.messages_requests())
    assert sent == 30  # 10 answers x 3 runs, each sent by one of the two jobs only
    assert sum(s["counts"]["calls_made"] for s in summaries) == 30
    for summary in summaries:
        assert summary["counts"]["valid"] == 30
        assert summary["counts"]["calls_made"] + summary["counts"]["cache_hits"] == 30
    with JudgeCache(tmp_path / "judge_cache.sqlite") as cache:
        assert cache.count() == 30
    assert claim_rows(tmp_path / "judge_cache.sqlite") == []


def test_claims_left_by_a_killed_process_are_taken_over_at_once(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    recs = records(4)
    # a fresh heartbeat and an hour-long timeout: only the dead pid tells they are stale
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2, claim_timeout_s=3600)
    db = tmp_path / "judge_cache.sqlite"
    plant_claims(db, digests_of(cfg, recs), dead_pid(), time.time())
    result = run_judge(recs, cfg, start_dir=tmp_path, category_names={})
    assert result.summary["counts"]["calls_made"] == 8
    assert len(fake_anthropic.messages_requests()) == 8
    assert claim_rows(db) == []


def test_a_call_claimed_by_a_live_process_is_waited_for_not_sent(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    recs = records(1)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    db = tmp_path / "judge_cache.sqlite"
    specs_digests = digests_of(cfg, recs)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        plant_claims(db, specs_digests[:1], sleeper.pid, time.time())

        def other_process_finishes() -> None:  # what the claim's owner does 0.3 s later
            time.sleep(0.3)
            with JudgeCache(db) as cache:
                reply = JudgeReply('{"score": 42, "explanation": "x"}', "end_turn", 10, 5)
                cache.insert_raw(specs_digests[0], "{}", "q0", 0, reply)
                cache.connection.execute("DELETE FROM judge_claims")

        helper = threading.Thread(target=other_process_finishes)
        helper.start()
        result = run_judge(recs, cfg, start_dir=tmp_path, category_names={})
        helper.join()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert len(fake_anthropic.messages_requests()) == 1  # run 1 only; run 0 was waited for
    assert result.summary["counts"]["calls_made"] == 1
    assert result.summary["counts"]["cache_hits"] == 1
    assert [r.score for r in result.per_question["q0"].runs] == [42, 80]


def test_a_failed_call_releases_its_claim(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    db = tmp_path / "judge_cache.sqlite"
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, max_retries=1, max_error_rate=1.0)
    fake_anthropic.script(server_error(), server_error())  # retries exhausted: an API error
    result = run_judge(records(1), cfg, start_dir=tmp_path, category_names={})
    assert result.summary["counts"]["api_error"] == 1
    assert claim_rows(db) == []
    fake_anthropic.script(error(404, "model: claude-x", "not_found_error"))
    with pytest.raises(JudgeFatalAPIError):
        run_judge(records(2), cfg, start_dir=tmp_path, category_names={})
    assert claim_rows(db) == []
