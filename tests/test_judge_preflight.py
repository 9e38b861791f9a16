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


def _corrupt_cache(tmp_path: Path) -> Path:
    """A cache cut after 300 bytes with garbage appended: the header is SQLite's, the rest not."""
    good = tmp_path / "good.sqlite"
    JudgeCache(good).close()
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(good.read_bytes()[:300] + b"garbage\n")
    return corrupt


def test_a_corrupt_cache_is_one_line_in_preflight_and_no_new_file_is_made(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    corrupt = _corrupt_cache(tmp_path)
    cfg = make_judge_config(fake_anthropic, tmp_path, cache_path=str(corrupt))
    with pytest.raises(JudgeError) as info:
        preflight_judge(cfg, [], start_dir=tmp_path)
    assert str(info.value) == (
        f"judge.cache_path={corrupt} cannot be used as the judge cache: database disk image "
        "is malformed"
    )
    new = tmp_path / "sub" / "new.sqlite"  # a missing file is created by the first call only
    preflight_judge(make_judge_config(fake_anthropic, tmp_path, cache_path=str(new)), [],
                    start_dir=tmp_path)
    assert not (tmp_path / "sub").exists()
    assert fake_anthropic.messages_requests() == []


def test_a_corrupt_cache_stops_the_job_before_its_run_directory_is_written(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    # trial 5, finding 12: the corrupt cache was found after the run directory was written
    # (an INCOMPLETE run), and the command with a fixed cache path was then refused as "a
    # different command"; a dry run with it ended in a raw sqlite3 traceback
    from conftest import EXAMPLE, run_job

    from locomo_exp.config import ScorerName

    corrupt = _corrupt_cache(tmp_path)
    for dry_run in (True, False):
        cfg = make_judge_config(fake_anthropic, tmp_path, cache_path=str(corrupt), runs=1,
                                dry_run=dry_run)
        with pytest.raises(JudgeError, match="cannot be used as the judge cache"):
            run_job(tmp_path, scorer=ScorerName.judge, judge=cfg, path=EXAMPLE)
        assert list((tmp_path / "out").glob("*")) == []  # made empty by the writable check
    assert fake_anthropic.messages_requests() == []
    fixed = make_judge_config(fake_anthropic, tmp_path, cache_path=str(tmp_path / "c.sqlite"), runs=1)
    run_job(tmp_path, scorer=ScorerName.judge, judge=fixed, path=EXAMPLE)
    assert (tmp_path / "out" / "summary.json").is_file()


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


@pytest.mark.slow
def test_the_cli_refuses_a_corrupt_cache_and_then_runs_the_fixed_command_in_the_same_dir(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    from conftest import run_cli

    corrupt = _corrupt_cache(tmp_path)
    common = ("scorer=judge", "judge.runs=1", "tracking=none", "hydra.run.dir=outputs/run")
    bad = run_cli(*common, f"judge.cache_path={corrupt}", cwd=tmp_path, server=fake_anthropic,
                  timeout=180)
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [(
        f"error: judge.cache_path={corrupt} cannot be used as the judge cache: database disk "
        "image is malformed"
    )]
    assert not (tmp_path / "outputs").exists()
    fixed = run_cli(*common, "judge.cache_path=fixed.sqlite", cwd=tmp_path, server=fake_anthropic,
                    timeout=180)
    assert fixed.returncode == 0, fixed.stderr  # not "an unfinished run of a different command"
    assert (tmp_path / "outputs" / "run" / "summary.json").is_file()
