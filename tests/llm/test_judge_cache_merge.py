"""``python -m locomo_exp.llm.cache merge``: per-job caches merged into one, idempotently;
the claims protocol holds its live owners in an object, not a module global."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from locomo_exp.llm.cache import (
    BatchLedger,
    CacheKey,
    CallClaims,
    ClaimOwners,
    JudgeCache,
    LedgerRequest,
    merge_caches,
)
from locomo_exp.llm.cache.__main__ import main
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.messages import JudgeReply


def key(run: int, question: str = "q") -> CacheKey:
    return CacheKey(
        model="m", api_version="v", temperature=0.5, protocol="rubric", prompt_version="rubric-v1",
        max_tokens=256, structured_output=True, question=question, ground_truth="g",
        prediction="p", category=1, run_index=run,
    )


def job_cache(path: Path, runs: range, text: str = "ok", *, batch: bool = False) -> Path:
    with JudgeCache(path) as cache:
        for run in runs:
            cache.put(key(run), JudgeReply(f"{text} {run}", "end_turn", 10, 2), question_id="q")
        if batch:
            ledger = BatchLedger(cache)
            request = LedgerRequest(key(99).digest(), key(99).digest(), key(99).fields_json(), "q", 99)
            [sub], _ = ledger.claim([[request]], api_version="v")
            ledger.set_batch_id(sub.submission_id, "msgbatch_1", 1.0)
    return path


def rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def test_merge_copies_calls_and_ledgers_and_a_second_merge_adds_nothing(tmp_path: Path) -> None:
    a = job_cache(tmp_path / "a.sqlite", range(0, 3), batch=True)
    b = job_cache(tmp_path / "b.sqlite", range(2, 5), text="other")  # run 2 in both, another reply
    out = tmp_path / "out" / "merged.sqlite"

    first = merge_caches(out, [a, b])
    assert first.added == {
        str(a): {"judge_calls": 3, "judge_batches": 1, "judge_batch_requests": 1},
        str(b): {"judge_calls": 2, "judge_batches": 0, "judge_batch_requests": 0},
    }
    assert first.conflicts == {str(a): 0, str(b): 1}
    with JudgeCache(out) as merged:
        assert merged.count() == 5
        assert merged.get(key(2).digest()).text == "ok 2"  # first source wins, as in one file
        assert merged.get(key(4).digest()).text == "other 4"
        assert [s.batch_id for s in BatchLedger(merged).submissions()] == ["msgbatch_1"]
        assert BatchLedger(merged).in_flight([key(99).digest()]) != {}

    again = merge_caches(out, [a, b])
    assert again.calls_added == 0
    assert all(set(c.values()) == {0} for c in again.added.values())
    assert rows(out, "SELECT COUNT(*) FROM judge_calls") == [(5,)]
    assert rows(a, "SELECT COUNT(*) FROM judge_calls") == [(3,)]  # sources untouched


def test_merge_command_line_prints_counts_and_rejects_a_missing_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = job_cache(tmp_path / "a.sqlite", range(2))
    out = tmp_path / "merged.sqlite"
    assert main(["merge", str(out), str(a)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{a}: 2 call(s), 0 batch(es) added; 0 already stored with another reply (kept)",
        f"{out}: 2 call(s) added in total",
    ]
    missing = tmp_path / "nope.sqlite"
    assert main(["merge", str(out), str(a), str(missing)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: judge cache merge: {missing} does not exist or is not a file"
    )


def test_merge_refuses_a_non_sqlite_source_and_the_output_as_a_source(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    out = job_cache(tmp_path / "out.sqlite", range(1))
    with pytest.raises(JudgeError) as raised:
        merge_caches(out, [text, out])
    assert str(raised.value) == (
        f"judge cache merge: {text} is not a judge cache (not an SQLite database); "
        f"judge cache merge: {out} is the output file; give it only once, as OUT"
    )


def test_claims_of_an_owner_missing_from_its_registry_are_taken_over(tmp_path: Path) -> None:
    """Same pid, separate registries: the other registry's owner counts as gone."""
    path = tmp_path / "c.sqlite"
    with JudgeCache(path) as c1, JudgeCache(path) as c2:
        shared = ClaimOwners()
        a = CallClaims(c1, stale_after_s=600, owners=shared)
        b = CallClaims(c2, stale_after_s=600, owners=shared)
        assert a.acquire(key(0).digest()).acquired
        assert b.acquire(key(0).digest()).holder is not None  # same registry: alive
        c = CallClaims(c2, stale_after_s=600, owners=ClaimOwners())
        assert c.acquire(key(0).digest()).took_over is not None
        for claims in (a, b, c):
            claims.close()
    assert ClaimOwners.for_process() is ClaimOwners.for_process()
