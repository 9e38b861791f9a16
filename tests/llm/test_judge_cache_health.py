"""The judge cache never loses a paid reply quietly (issue 18 §3).

Checked before the first call (opened, written, read back, free space); a write failure
during the run stops new calls at once with one line counting the replies not stored;
``merge`` checks every source first and writes through a temporary file; a panel the
judging would refuse is refused before the first call.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config, rubric
from judge_helpers import make_records

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.judge import run_judge
from locomo_exp.llm.cache import CacheKey, JudgeCache, health, merge_caches
from locomo_exp.llm.cache.health import CacheWriteFailed, reply_bytes
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.messages import JudgeReply
from locomo_exp.trust.job import plan_trust


def _run(records, cfg, tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_judge(records, cfg, start_dir=tmp_path, category_names=DEFAULT_CATEGORY_NAMES)


def _key(run: int) -> CacheKey:
    return CacheKey(
        model="m", api_version="v", temperature=0.5, protocol="rubric", prompt_version="rubric-v1",
        max_tokens=256, structured_output=True, question="q", ground_truth="g",
        prediction="p", category=1, run_index=run,
    )


def _filled(path: Path, n: int) -> Path:
    with JudgeCache(path) as cache:
        for run in range(n):
            cache.put(_key(run), JudgeReply("x" * 400 + str(run), "end_turn", 10, 2), question_id="q")
    return path


# -- before the first call ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        pytest.param("truncate", "judge.cache_path=", id="truncated"),
        pytest.param("garble", "judge.cache_path=", id="corrupt-pages"),
    ],
)
def test_a_damaged_cache_is_one_line_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, damage: str, says: str
) -> None:
    path = _filled(tmp_path / "judge_cache.sqlite", 300)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 3])
    else:  # keep the header, overwrite the pages after the first
        path.write_bytes(data[:4096] + b"\x5a" * (len(data) - 4096))
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1)
    with pytest.raises(JudgeError) as refused:
        _run(make_records(4), cfg, tmp_path)
    message = str(refused.value)
    assert message.startswith(f"{says}{path}") and "\n" not in message
    assert fake_anthropic.messages_requests() == []


def test_an_unwritable_cache_location_is_one_line_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1)
    cfg.cache_path = "/proc/locomo_exp_no_such_dir/judge_cache.sqlite"  # not writable, even as root
    with pytest.raises(JudgeError) as refused:
        _run(make_records(4), cfg, tmp_path)
    assert str(refused.value).startswith(
        "judge.cache_path=/proc/locomo_exp_no_such_dir/judge_cache.sqlite cannot be used as the "
        "judge cache: "
    )
    assert fake_anthropic.messages_requests() == []


def test_too_little_free_space_for_the_new_replies_is_refused_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = make_records(5)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    needed = sum(
        reply_bytes([r.question, r.ground_truth or "", r.prediction], cfg.max_tokens)
        for r in records
        for _ in range(2)
    )
    usage = type("Usage", (), {"total": 10**9, "used": 10**9, "free": needed - 1})
    monkeypatch.setattr(health.shutil, "disk_usage", lambda path: usage)
    with pytest.raises(JudgeError) as refused:
        _run(records, cfg, tmp_path)
    assert str(refused.value) == (
        f"judge.cache_path={tmp_path / 'judge_cache.sqlite'}: its disk has "
        f"{(needed - 1) / 1e6:.1f} MB free, and the 10 replies this run will store need up to "
        f"{needed / 1e6:.1f} MB; free space or point judge.cache_path at another disk"
    )
    assert fake_anthropic.messages_requests() == []
    usage.free = needed  # exactly enough: the run goes ahead
    fake_anthropic.responder = lambda request: rubric(80)
    assert _run(records, cfg, tmp_path).summary["counts"]["valid"] == 10


def test_a_judged_run_opens_its_cache_once_for_the_check_the_estimate_and_the_calls(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[JudgeCache] = []
    closed: list[JudgeCache] = []
    real_init, real_close = JudgeCache.__init__, JudgeCache.close

    def counted_init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(self)
        real_init(self, *args, **kwargs)

    def counted_close(self):  # type: ignore[no-untyped-def]
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(JudgeCache, "__init__", counted_init)
    monkeypatch.setattr(JudgeCache, "close", counted_close)
    fake_anthropic.responder = lambda request: rubric(80)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    result = _run(make_records(5), cfg, tmp_path)  # a new cache file
    assert result.summary["counts"]["calls_made"] == 10
    assert len(opened) == 1 and closed == opened  # was 3: check, estimate, calls
    opened.clear(), closed.clear()
    again = _run(make_records(5), cfg, tmp_path)  # the file exists: the preflight checks it
    assert again.summary["counts"]["cache_hits"] == 10
    assert len(opened) == 2 and closed == opened  # preflight's check, then the run's one
    opened.clear(), closed.clear()
    usage = type("Usage", (), {"total": 10**9, "used": 10**9, "free": 0})
    monkeypatch.setattr(health.shutil, "disk_usage", lambda path: usage)
    with pytest.raises(JudgeError):
        _run(make_records(6), cfg, tmp_path)  # two new replies, no room: refused, closed
    assert len(opened) == 2 and closed == opened


def test_reply_bytes_is_the_documented_upper_estimate() -> None:
    # 2 x (1 + 2 + 3 bytes of text; "é" is two bytes in UTF-8) + 4 x 256 + 1024
    assert reply_bytes(["a", "bc", "dé"], 256) == 2 * 6 + 1024 + 1024


# -- during the run -------------------------------------------------------------------------


def test_a_cache_write_failure_stops_new_calls_at_once_with_one_line(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_anthropic.responder = lambda request: rubric(80)
    real = JudgeCache.insert_raw
    stored = {"n": 0}

    def insert_until_full(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if stored["n"] >= 1:
            raise sqlite3.OperationalError("database or disk is full")
        stored["n"] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(JudgeCache, "insert_raw", insert_until_full)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, max_concurrency=1)
    with pytest.raises(CacheWriteFailed) as stopped:
        _run(make_records(17), cfg, tmp_path)
    assert str(stopped.value) == (
        f"the judge cache {tmp_path / 'judge_cache.sqlite'} cannot store replies (database or "
        "disk is full): 1 paid reply could not be stored and no new call was started; free "
        "space or fix judge.cache_path, then re-run the same command to resume"
    )
    assert len(fake_anthropic.messages_requests()) == 2  # one stored, one lost, then none
    with sqlite3.connect(tmp_path / "judge_cache.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM judge_claims").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM judge_calls").fetchone() == (1,)


# -- merge ------------------------------------------------------------------------------------


def test_merge_refuses_a_corrupt_source_before_writing(tmp_path: Path) -> None:
    good = _filled(tmp_path / "good.sqlite", 3)
    bad = _filled(tmp_path / "bad.sqlite", 300)
    data = bad.read_bytes()
    bad.write_bytes(data[:4096] + b"\x5a" * (len(data) - 4096))
    out = _filled(tmp_path / "out.sqlite", 1)
    before = out.read_bytes()
    with pytest.raises(JudgeError) as refused:
        merge_caches(out, [good, bad])
    assert str(refused.value).startswith(f"judge cache merge: {bad} ")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.sqlite", "good.sqlite", "out.sqlite"]


def test_merge_into_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    good = _filled(tmp_path / "good.sqlite", 3)
    with pytest.raises(JudgeError) as refused:
        merge_caches(Path("/proc/locomo_exp_no_such_dir/out.sqlite"), [good])
    assert str(refused.value).startswith(
        "judge cache merge: cannot write /proc/locomo_exp_no_such_dir/out.sqlite: "
    )


def test_a_merge_that_fails_midway_leaves_the_output_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from locomo_exp.llm.cache import merge as merge_module

    a = _filled(tmp_path / "a.sqlite", 3)
    out = _filled(tmp_path / "out.sqlite", 1)
    before = out.read_bytes()

    def disk_full(conn, table):  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(merge_module, "_copy_table", disk_full)
    with pytest.raises(JudgeError) as refused:
        merge_caches(out, [a])
    assert str(refused.value) == (
        f"judge cache merge: cannot write {out}: database or disk is full; it is unchanged"
    )
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sqlite", "out.sqlite"]


# -- panel --------------------------------------------------------------------------------------


def test_a_panel_naming_one_model_twice_is_refused_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, panel=["haiku-4-5", "haiku-4-5"])
    with pytest.raises(JudgeError) as refused:
        plan_trust(make_records(4), cfg, start_dir=tmp_path)
    assert str(refused.value).startswith("judge.panel names the model claude-haiku-4-5")
    assert str(refused.value).endswith(
        "more than once (haiku-4-5, haiku-4-5): a panel needs distinct judge models"
    )
    assert fake_anthropic.messages_requests() == []
