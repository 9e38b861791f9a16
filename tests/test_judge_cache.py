"""The judge cache: WAL mode, first writer wins, concurrent writers, path resolution."""

from __future__ import annotations

import threading
from pathlib import Path

from locomo_exp.judge.cache import CacheKey, JudgeCache, resolve_cache_path
from locomo_exp.judge.client import JudgeReply


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
