"""Checks before any call: cache path, empty model, over-long prompts (preflight and dry run)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropicServer, make_judge_config

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import JudgeError, preflight_judge, run_judge
from locomo_exp.judge.cache import JudgeCache
from locomo_exp.judge.preflight import check_config, estimate_prompt_tokens, overlong_prompts
from locomo_exp.results import QARecord


def _records(long_prediction_chars: int = 0) -> list[QARecord]:
    records = [QARecord("q0", "When?", "May 2023", "In May 2023", 1)]
    if long_prediction_chars:
        records.append(QARecord("q-long", "What?", "paint", "x" * long_prediction_chars, 2))
    return records


def test_cache_path_that_is_a_directory_is_one_line_naming_it(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, cache_path=str(tmp_path))
    with pytest.raises(JudgeError) as info:
        run_judge(_records(), cfg, start_dir=tmp_path)
    message = str(info.value)
    assert message == (
        f"judge.cache_path={tmp_path} is a directory; give a file path, "
        f"e.g. judge.cache_path={tmp_path / 'judge_cache.sqlite'}"
    )
    assert "\n" not in message
    assert fake_anthropic.messages_requests() == []


def test_cache_path_that_is_not_a_database_is_one_line_naming_it(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    not_db = tmp_path / "notes.txt"
    not_db.write_text("my notes, not a cache\n")
    cfg = make_judge_config(fake_anthropic, tmp_path, cache_path=str(not_db))
    with pytest.raises(JudgeError) as info:
        preflight_judge(cfg, _records(), start_dir=tmp_path)
    assert str(info.value) == (
        f"judge.cache_path={not_db} is not a judge cache (not an SQLite database); "
        "point judge.cache_path at a new or existing cache file"
    )
    with pytest.raises(JudgeError, match="is not a judge cache"):
        JudgeCache(not_db)
    assert not_db.read_text() == "my notes, not a cache\n"  # left untouched


def test_existing_cache_and_empty_file_are_accepted(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    JudgeCache(tmp_path / "ok.sqlite").close()
    (tmp_path / "empty.sqlite").write_bytes(b"")
    for name in ("ok.sqlite", "empty.sqlite", "new.sqlite"):
        cfg = make_judge_config(fake_anthropic, tmp_path, cache_path=str(tmp_path / name))
        preflight_judge(cfg, _records(), start_dir=tmp_path)


def test_empty_model_is_one_clear_line(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, model="  ")
    with pytest.raises(JudgeError) as info:
        preflight_judge(cfg, _records())
    assert str(info.value) == (
        "invalid judge configuration: judge.model is empty; set judge.model to a model id, "
        "e.g. judge.model=claude-sonnet-4-6"
    )


def test_prompt_token_estimate_is_chars_over_3_5_plus_20() -> None:
    assert estimate_prompt_tokens("s" * 7, "p" * 700) == 202 + 20
    assert estimate_prompt_tokens("", "p") == 1 + 20


def test_overlong_prompt_is_flagged_in_preflight_naming_the_question(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=1000)
    records = _records(long_prediction_chars=4000)
    found = overlong_prompts(records, cfg)
    assert [qid for qid, _ in found] == ["q-long"]
    assert found[0][1] > 1000
    with caplog.at_level(logging.WARNING, logger="locomo_exp.judge"):
        preflight_judge(cfg, records)
    assert f"1 prompt(s) estimated above judge.max_prompt_tokens=1000: q-long (~{found[0][1]} tokens)" in caplog.text


def test_dry_run_estimate_lists_overlong_prompts(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=1000, dry_run=True, runs=2)
    result = run_judge(_records(long_prediction_chars=4000), cfg, start_dir=tmp_path)
    assert result.dry_run_estimate is not None
    assert result.dry_run_estimate["prompts_over_max_prompt_tokens"] == ["q-long"]
    assert fake_anthropic.messages_requests() == []


@pytest.mark.parametrize("url", ["not-a-url", "ftp://host", "http://"])
def test_a_malformed_base_url_is_one_line_before_any_call(url: str) -> None:
    # from a new user's trial: "not-a-url" was retried 4 times, then blamed on the error rate
    with pytest.raises(JudgeError, match=r"judge.base_url=.* is not an http\(s\) URL"):
        check_config(JudgeConfig(base_url=url))
