"""Checks before any call: cache path, empty model, over-long prompts (preflight and dry run)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fake_anthropic import FakeAnthropicServer, make_judge_config

from locomo_exp.config import JudgeConfig
from locomo_exp.judge import JudgeError, preflight_judge, run_judge
from locomo_exp.judge.preflight import check_config, estimate_prompt_tokens, overlong_prompts
from locomo_exp.judge.protocols import protocol_spec
from locomo_exp.llm.cache import JudgeCache
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


GREY_CHARS = 2500
"""A prediction whose rubric prompt is ~1,300 tokens at 3.5 characters per token but at most
~900 at 5: over judge.max_prompt_tokens=1000 by the estimate, not clearly over it."""


def test_a_prompt_estimated_over_the_limit_but_not_clearly_is_warned_about_and_judged(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=1000, runs=1)
    records = _records(long_prediction_chars=GREY_CHARS)
    found = overlong_prompts(records, cfg)
    assert [qid for qid, _ in found] == ["q-long"]
    assert found[0][1] > 1000
    with caplog.at_level(logging.WARNING, logger="locomo_exp.judge"):
        preflight_judge(cfg, records)
    assert f"1 prompt(s) estimated above judge.max_prompt_tokens=1000: q-long (~{found[0][1]} tokens)" in caplog.text
    result = run_judge(records, cfg, start_dir=tmp_path)  # the API may accept it: it is sent
    assert len(fake_anthropic.messages_requests()) == 2
    assert result.per_question["q-long"].mean_score == 80.0  # the fake's reply


def test_a_prompt_clearly_over_the_limit_is_refused_before_any_call_naming_file_and_record(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=1000, runs=1)
    records = _records(long_prediction_chars=4000)
    spec = protocol_spec(cfg)
    chars = len(spec.system_prompt) + len(spec.build_record_prompt(records[1]))
    estimate = int(math.ceil(chars / 3.5)) + 20
    with pytest.raises(JudgeError) as info:
        preflight_judge(cfg, records, source="answers.json")
    assert str(info.value) == (
        "answers.json: 1 judge prompt(s) too long for model claude-sonnet-4-6: question_id "
        f"q-long (record #1): {chars} characters, ~{estimate} tokens at 3.5 characters per "
        f"token, at least {chars // 5}; over judge.max_prompt_tokens=1000 even at 5 characters "
        "per token, so the API would refuse them; no call was made. Shorten those answers, "
        "remove those records or leave their categories out of judge.categories"
    )
    for dry_run in (False, True):  # a dry run says so too: the paid run would be refused
        with pytest.raises(JudgeError, match="question_id q-long .* no call was made"):
            run_judge(records, replace(cfg, dry_run=dry_run), start_dir=tmp_path)
    assert fake_anthropic.messages_requests() == []


def test_a_job_with_a_prompt_too_long_for_the_model_writes_nothing_and_names_the_file(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    from conftest import run_job

    from locomo_exp.config import ScorerName

    answers = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    answers[3]["predicted_answer"] = "word " * 250_000  # 1.25M characters: > 200k tokens at 5
    path = tmp_path / "long.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1)  # Claude: 200,000 tokens
    with pytest.raises(JudgeError) as info:
        run_job(tmp_path, scorer=ScorerName.judge, judge=cfg, path=path)
    message = str(info.value)
    assert message.startswith(f"{path}: 1 judge prompt(s) too long for model claude-sonnet-4-6")
    assert ": question_id ex-1-q04 (record #4): 125" in message
    assert "over the model's context window judge.model_info.context_tokens=200000" in message
    assert "\n" not in message
    assert fake_anthropic.messages_requests() == []
    assert list((tmp_path / "out").glob("*")) == []


def test_dry_run_estimate_lists_and_prices_prompts_estimated_over_the_limit(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    """A prompt in the grey zone is sent (the API may take it): priced, never $0."""
    from locomo_exp.llm.models import model_price
    from locomo_exp.llm.spend import cost_usd

    cfg = make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=1000, dry_run=True, runs=2)
    with_long = run_judge(_records(long_prediction_chars=GREY_CHARS), cfg, start_dir=tmp_path)
    short = run_judge(_records(), cfg, start_dir=tmp_path)
    estimate, alone = with_long.dry_run_estimate, short.dry_run_estimate
    assert estimate is not None and alone is not None
    assert estimate["prompts_over_max_prompt_tokens"] == ["q-long"]
    assert "calls_not_priced_too_long" not in estimate
    assert estimate["calls_to_make"] == 4
    spec = protocol_spec(cfg)
    q0, long = (estimate_prompt_tokens(spec.system_prompt, spec.build_record_prompt(r))
                for r in _records(long_prediction_chars=GREY_CHARS))
    assert long > 1000
    assert alone["estimated_input_tokens"] == 2 * q0
    assert estimate["estimated_input_tokens"] == 2 * q0 + 2 * long  # priced, not dropped
    assert estimate["estimated_cost_usd"] == pytest.approx(
        cost_usd(model_price(cfg), estimate["estimated_input_tokens"],
                 estimate["estimated_output_tokens"]))
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


# -- cost before and after the calls (trial 5 #8, #16) -------------------------------------


def test_a_paid_run_says_its_estimate_before_the_first_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    with caplog.at_level(logging.INFO, logger="locomo_exp.judge"):
        run_judge(_records(), cfg, start_dir=tmp_path)
    line = next(r.getMessage() for r in caplog.records if "about to make" in r.getMessage())
    assert line.startswith("judge: about to make 2 calls (0 of 2 cached), est. $")
    assert "at the model's list price (custom endpoint judge.base_url: it may not apply)" in line
    first_call = next(i for i, r in enumerate(caplog.records) if "about to make" in r.getMessage())
    assert all("judge 2/2" not in r.getMessage() for r in caplog.records[:first_call])


def test_a_spend_cap_below_the_estimate_refuses_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2, max_cost_usd=0.000001)
    with pytest.raises(JudgeError) as refused:
        run_judge(_records(), cfg, start_dir=tmp_path)
    estimate = run_judge(_records(), make_judge_config(
        fake_anthropic, tmp_path, runs=2, dry_run=True), start_dir=tmp_path).dry_run_estimate
    assert estimate is not None
    assert str(refused.value).startswith(
        f"judge.max_cost_usd=1e-06: the 2 calls to make are estimated at "
        f"${estimate['estimated_cost_usd']:.4f} at the model's list price (custom endpoint "
        "judge.base_url: it may not apply), above the cap; no call was made")
    assert fake_anthropic.messages_requests() == []
    roomy = make_judge_config(fake_anthropic, tmp_path, runs=2, max_cost_usd=5.0)
    assert run_judge(_records(), roomy, start_dir=tmp_path).summary["counts"]["calls_made"] == 2
    # everything cached now: nothing to pay, the cap is not in the way
    assert run_judge(_records(), cfg, start_dir=tmp_path).summary["counts"]["cache_hits"] == 2


def test_a_run_over_its_spend_cap_writes_nothing(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, typed_config, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    from locomo_exp.experiment import run_experiment

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake")
    cfg = typed_config(
        "scorer=both", "data=example", "tracking=none", "judge.runs=3",
        f"judge.base_url={fake_anthropic.url}", f"judge.cache_path={tmp_path}/c.sqlite",
        "judge.max_cost_usd=0.01",
    )
    # the whole job's estimate: the 16 answers x 3 runs and the audit's 9 controls (issue 27 §1)
    with pytest.raises(
        JudgeError, match=r"^judge.max_cost_usd=0.01: the 57 calls to make \(48 answer, 9 audit\) "
    ):
        run_experiment(cfg, tmp_path / "out", tmp_path)
    out = tmp_path / "out"
    assert not out.exists() or not list(out.iterdir())  # no report, no scores: nothing
    assert fake_anthropic.messages_requests() == []


def test_the_spend_cap_stops_new_calls_once_the_paid_cost_reaches_it(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An estimate below the cap, replies dearer than estimated: the pool stops at the cap."""
    from fake_server import Reply

    from locomo_exp.llm.models import model_price
    from locomo_exp.llm.stop import CallsStopped

    fake_anthropic.responder = lambda request: Reply(input_tokens=100_000)  # ~250x the estimate
    records = [QARecord(f"q{k}", f"When did {k} happen?", "May 2023", "In May 2023", 1)
               for k in range(6)]
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2, max_cost_usd=0.05)
    price = model_price(cfg)
    assert price is not None
    one_call = (100_000 * price["input"] + 24 * price["output"]) / 1e6
    assert one_call > 0.05
    with pytest.raises(CallsStopped) as stopped:
        run_judge(records, cfg, start_dir=tmp_path)
    assert stopped.value.calls_made == 1  # the first call goes alone; it reached the cap
    assert stopped.value.calls_left == 11 and stopped.value.calls_total == 12
    assert str(stopped.value).startswith(
        f"judge stopped: spend cap $0.05 reached after ${one_call:.4f} paid (1 answer call); "
        "1 call made, 11 of 12 left")
    fake_anthropic.responder = lambda request: Reply()
    assert len(fake_anthropic.messages_requests()) == 1
    # the paid call is cached: a higher cap pays only for the 11 left
    roomy = make_judge_config(fake_anthropic, tmp_path, runs=2, max_cost_usd=10.0)
    assert run_judge(records, roomy, start_dir=tmp_path).summary["counts"]["cache_hits"] == 1
    assert len(fake_anthropic.messages_requests()) == 12


def test_preflight_hands_over_each_prompt_so_the_call_specs_are_byte_identical(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from locomo_exp.judge.calls import build_call_specs

    cfg = make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=100_000, runs=2)
    records = _records(long_prediction_chars=300)
    spec = protocol_spec(cfg)
    prompts = preflight_judge(cfg, records)
    assert prompts == {r.question_id: spec.build_record_prompt(r) for r in records}
    built = build_call_specs(records, cfg, api_version="2023-06-01")
    handed = build_call_specs(records, cfg, api_version="2023-06-01", prompts=prompts)
    assert handed == built  # same requests, same cache keys and digests
    assert [s.request.prompt for s in handed] == [prompts["q0"]] * 2 + [prompts["q-long"]] * 2
    # a record the preflight did not build is built by the specs (no KeyError, same text)
    partial = build_call_specs(records, cfg, api_version="2023-06-01", prompts={"q0": prompts["q0"]})
    assert partial == built


def test_run_judge_builds_each_prompt_once(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = replace(make_judge_config(fake_anthropic, tmp_path, max_prompt_tokens=100_000, runs=1),
                  dry_run=True)
    spec_type = type(protocol_spec(cfg))
    built: list[str] = []
    original = spec_type.build_record_prompt

    def counting(self: object, record: QARecord) -> str:
        built.append(record.question_id)
        return original(self, record)  # type: ignore[arg-type]

    monkeypatch.setattr(spec_type, "build_record_prompt", counting)
    result = run_judge(_records(long_prediction_chars=300), cfg, start_dir=tmp_path)
    assert result.dry_run_estimate is not None
    assert result.dry_run_estimate["calls_total"] == 2
    assert sorted(built) == ["q-long", "q0"]  # was 3 times each: two size checks and the specs
