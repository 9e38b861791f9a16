"""Judge runs against the fake Messages API: multi-run statistics, retries, fatal errors,
concurrency, pacing, cache and dry run."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from fake_anthropic import (
    FAKE_API_KEY,
    FakeAnthropicServer,
    Reply,
    binary,
    dropped,
    error,
    make_judge_config,
    overloaded,
    rate_limited,
    rubric,
    server_error,
    text,
)
from judge_answer import judge_answer, judge_answer_multiple_runs
from judge_helpers import make_records

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.config import JudgeModelInfo
from locomo_exp.judge import (
    JudgeError,
    JudgeFatalAPIError,
    preflight_judge,
    run_judge,
)
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.llm.pool import RetryPolicy
from locomo_exp.results import QARecord
from locomo_exp.tracking import judge_metrics, judge_params


def run(records: list[QARecord], cfg, tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_judge(records, cfg, start_dir=tmp_path, category_names=DEFAULT_CATEGORY_NAMES)


# -- the seed's cases ---------------------------------------------------------------------


def test_ten_runs_give_mean_70_6_and_sample_std_1_5(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(*(rubric(s) for s in [70, 72, 68, 71, 73, 69, 70, 72, 71, 70]))
    agg = judge_answer_multiple_runs(
        "q", "gold", "pred", 1, num_runs=10, cfg=make_judge_config(fake_anthropic, tmp_path)
    )
    assert agg.run_count == 10
    assert agg.mean_score == pytest.approx(70.6)
    assert agg.std_dev == pytest.approx(1.5055453, abs=1e-6)  # ddof=1
    assert sorted(agg.individual_scores) == sorted([70, 72, 68, 71, 73, 69, 70, 72, 71, 70])


def test_malformed_json_is_unscored_with_a_reason_and_keeps_the_raw_reply(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(text("{score: 85, explanation: fine"))
    result = judge_answer("q", "a", "p", 4, cfg=make_judge_config(fake_anthropic, tmp_path))
    assert result.score is None
    assert result.outcome == "parse_failure"
    assert result.raw == "{score: 85, explanation: fine"
    assert result.error == "no complete JSON object with the expected field"
    row = result.to_json()
    assert row["score"] is None and row["error"] == result.error


def test_two_failing_runs_of_ten_leave_eight_and_warn_naming_the_question(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_anthropic.script(*([rubric(80)] * 4 + [text("not json")] * 2 + [rubric(60)] * 4))
    with caplog.at_level(logging.WARNING, logger="locomo_exp.judge"):
        agg = judge_answer_multiple_runs(
            "q",
            "a",
            "p",
            4,
            num_runs=10,
            question_id="conv-7:q42",
            cfg=make_judge_config(fake_anthropic, tmp_path),
        )
    assert agg.run_count == 8
    assert agg.mean_score == pytest.approx(70.0)
    assert agg.parse_failures == 2
    assert [r.score for r in agg.runs if r.outcome == "parse_failure"] == [None, None]
    assert "conv-7:q42" in caplog.text and "8 of 10" in caplog.text


def test_fewer_than_five_successful_runs_warns_that_the_mean_is_unreliable(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_anthropic.script(*([rubric(80)] * 4 + [text("?")] * 6))
    with caplog.at_level(logging.WARNING, logger="locomo_exp.judge"):
        agg = judge_answer_multiple_runs(
            "q", "a", "p", 4, question_id="q-few", cfg=make_judge_config(fake_anthropic, tmp_path)
        )
    assert agg.run_count == 4
    assert "q-few" in caplog.text and "fewer than 5" in caplog.text


# -- malformed replies end to end ------------------------------------------------------


@pytest.mark.parametrize(
    "reply, outcome, score",
    [
        pytest.param(
            text('```json\n{"score": 85, "explanation": "x"}\n```'), "valid", 85.0, id="fence"
        ),
        pytest.param(
            text('Sure.\n{"score": 85, "explanation": "x"}\nDone.'), "valid", 85.0, id="prose"
        ),
        pytest.param(rubric("85"), "valid", 85.0, id="string-score"),
        pytest.param(rubric("85/100"), "valid", 85.0, id="score-over-100"),
        pytest.param(text('{"score": 85} {"score": 85}'), "valid", 85.0, id="several-agreeing"),
        pytest.param(
            text('{"score": 85} {"score": 20}'), "parse_failure", None, id="several-disagreeing"
        ),
        pytest.param(
            text('{"score": 85, "explanation": "cut', "max_tokens"),
            "valid",
            85.0,
            id="truncated-ok",
        ),
        pytest.param(rubric(140), "parse_failure", None, id="out-of-range"),
        pytest.param(text("I cannot help with that."), "parse_failure", None, id="refusal-prose"),
    ],
)
def test_malformed_reply_kinds_through_the_real_sdk(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, reply: Reply, outcome: str, score: float
) -> None:
    fake_anthropic.script(reply)
    result = judge_answer("q", "a", "p", 4, cfg=make_judge_config(fake_anthropic, tmp_path))
    assert (result.outcome, result.score) == (outcome, score)


def test_binary_protocol_j_is_the_percentage_of_correct_labels(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda req: binary(
        "CORRECT" if "picture 0" in req.prompt else "WRONG"
    )
    cfg = make_judge_config(fake_anthropic, tmp_path, protocol="binary", runs=2)
    result = run(make_records(4, categories=(4,)), cfg, tmp_path)
    assert result.summary["j"]["overall"]["mean"] == pytest.approx(25.0)
    assert result.summary["protocol"] == "binary"
    assert result.summary["prompt_version"] == "binary-v1"
    assert '"label"' in fake_anthropic.messages_requests()[0].body["system"]


# -- retries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(rate_limited(0.01), id="429-retry-after"),
        pytest.param(overloaded(), id="529-overloaded"),
        pytest.param(server_error(), id="500"),
        pytest.param(error(503, "unavailable"), id="503"),
        pytest.param(dropped(), id="dropped-connection"),
        pytest.param(Reply(delay_s=3.0), id="timeout"),
    ],
)
def test_retryable_failure_is_retried_and_succeeds(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, failure: Reply
) -> None:
    fake_anthropic.script(failure, rubric(75))
    # a short timeout only where the timeout is the failure: on a loaded machine a 0.3 s
    # limit also cuts the scripted good reply (seen once in a new user's run)
    timeout_s = 0.8 if failure.delay_s else 10.0
    cfg = make_judge_config(fake_anthropic, tmp_path, timeout_s=timeout_s)
    result = judge_answer("q", "a", "p", 4, cfg=cfg)
    assert (result.outcome, result.score) == ("valid", 75.0)
    assert len(fake_anthropic.messages_requests()) == 2


def test_retry_waits_for_retry_after_not_the_shorter_backoff(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(rate_limited(0.3), rubric(75))
    judge_answer("q", "a", "p", 4, cfg=make_judge_config(fake_anthropic, tmp_path))
    first, second = fake_anthropic.messages_requests()
    assert second.received_at - first.received_at >= 0.29


def test_call_failing_after_all_retries_is_an_api_error_not_minus_one(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda req: overloaded()
    cfg = make_judge_config(fake_anthropic, tmp_path, max_retries=2, runs=1, max_error_rate=1.0)
    result = run(make_records(1), cfg, tmp_path)
    [outcome] = result.per_question["conv-1:0"].runs
    assert outcome.outcome == "api_error" and outcome.score is None
    assert "529" in outcome.error
    assert len(fake_anthropic.messages_requests()) == 3
    assert result.summary["counts"]["api_error"] == 1
    assert result.summary["counts"]["parse_failure"] == 0
    metrics = judge_metrics(result.summary, {})
    assert metrics["judge/api_errors"] == 1
    assert "j/overall" not in metrics  # no NaN reaches MLflow
    assert not result.error_rate_exceeded  # 1 of 1 <= 1.0
    assert result.question_json("conv-1:0")["j_runs"][0]["outcome"] == "api_error"


def test_error_rate_within_max_error_rate_is_not_exceeded(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(rubric(50), overloaded(), overloaded())
    cfg = make_judge_config(
        fake_anthropic, tmp_path, max_retries=1, runs=4, max_concurrency=1, max_error_rate=0.25
    )
    result = run(make_records(1), cfg, tmp_path)
    assert result.summary["counts"]["api_error"] == 1
    assert not result.error_rate_exceeded


def test_retry_policy_backs_off_exponentially_with_jitter_and_honours_retry_after() -> None:
    policy = RetryPolicy(initial_backoff_s=1.0, max_backoff_s=5.0, max_retry_after_s=30.0)
    assert policy.delay(0, None, rand=lambda: 0.0) == 1.0
    assert policy.delay(2, None, rand=lambda: 0.0) == 4.0
    assert policy.delay(5, None, rand=lambda: 0.0) == 5.0
    assert policy.delay(1, None, rand=lambda: 0.999) == pytest.approx(2.0 * 0.75, rel=1e-3)
    assert policy.delay(0, 12.0) == 12.0
    assert policy.delay(0, 99.0) == 30.0


# -- fatal errors ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
def test_unknown_model_404_stops_the_job_after_exactly_one_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(
        fake_anthropic, tmp_path, model="claude-sonnet-4-5-20250929", max_concurrency=16, runs=3
    )
    with pytest.raises(JudgeFatalAPIError, match="claude-sonnet-4-5-20250929") as info:
        run(make_records(20), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 1
    assert info.value.status_code == 404
    assert "retired" in str(info.value)
    assert "model: claude-sonnet-4-5-20250929" in str(info.value)  # the API's own message


def test_temperature_rejected_by_the_model_stops_and_says_set_temperature_null(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.temperature_rejecting_models.add("claude-sonnet-4-6")
    with pytest.raises(JudgeFatalAPIError, match=r"judge\.temperature=null") as info:
        run(make_records(5), make_judge_config(fake_anthropic, tmp_path), tmp_path)
    assert info.value.kind == "temperature_rejected"
    assert len(fake_anthropic.messages_requests()) == 1


def test_authentication_error_mid_run_stops_keeps_completed_calls_and_never_shows_the_key(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_anthropic.script(
        *[rubric(50)] * 5, error(401, "invalid x-api-key", "authentication_error")
    )
    cfg = make_judge_config(fake_anthropic, tmp_path, max_concurrency=1, runs=2)
    with (
        caplog.at_level(logging.DEBUG),
        pytest.raises(JudgeFatalAPIError, match="ANTHROPIC_API_KEY") as info,
    ):
        run(make_records(10), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 6
    assert FAKE_API_KEY not in str(info.value) and FAKE_API_KEY not in caplog.text
    with JudgeCache(tmp_path / "judge_cache.sqlite") as cache:
        assert cache.count() == 5
    fake_anthropic.clear()
    result = run(make_records(10), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 20 - 5
    assert result.summary["counts"]["cache_hits"] == 5


def test_fatal_error_in_the_pool_starts_no_new_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.latency_s = 0.02
    fake_anthropic.script(rubric(50), error(403, "no access", "permission_error"))
    cfg = make_judge_config(fake_anthropic, tmp_path, max_concurrency=4, runs=10)
    with pytest.raises(JudgeFatalAPIError, match="403"):
        run(make_records(10), cfg, tmp_path)
    # the canary, then at most one round of the pool's workers
    assert len(fake_anthropic.messages_requests()) <= 1 + 4 + 3


# -- preflight -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, message",
    [
        pytest.param({"temperature": 1.5}, "outside [0, 1]", id="temperature-above-1"),
        pytest.param({"temperature": -0.1}, "outside [0, 1]", id="temperature-negative"),
        pytest.param({"runs": 0}, "judge.runs=0", id="zero-runs"),
        pytest.param({"max_concurrency": 0}, "max_concurrency", id="zero-concurrency"),
        pytest.param(
            # judge=opus-4-7's model_info: the preset says the model rejects a temperature
            {"model": "claude-opus-4-7", "model_info": JudgeModelInfo("claude-opus-4-7", 5.0, 25.0, True, False)},
            "judge.temperature=null",
            id="opus-4-7-temperature",
        ),
        pytest.param(  # a model no preset describes, described by hand (judge.model_info.*)
            {"model": "claude-opus-5", "model_info": JudgeModelInfo(None, None, None, True, False)},
            "judge.temperature=null",
            id="opus-5-temperature",
        ),
        pytest.param({"categories": [1, 6]}, "categories 1-5", id="unknown-category"),
        pytest.param({"categories": []}, "categories 1-5", id="no-category"),
    ],
)
def test_preflight_rejects_bad_config_before_any_call(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, overrides: dict, message: str
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, **overrides)
    with pytest.raises(JudgeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        run(make_records(3), cfg, tmp_path)
    assert fake_anthropic.messages_requests() == []


def test_preflight_requires_the_api_key_unless_dry_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        preflight_judge(make_judge_config(fake_anthropic, tmp_path), make_records(2))
    preflight_judge(make_judge_config(fake_anthropic, tmp_path, dry_run=True), make_records(2))


def test_opus_4_7_without_temperature_passes_preflight(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    preflight_judge(
        make_judge_config(fake_anthropic, tmp_path, model="claude-opus-4-7", temperature=None),
        make_records(2),
    )


def test_duplicate_question_ids_are_rejected(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(2)
    with pytest.raises(JudgeError, match="duplicate"):
        preflight_judge(make_judge_config(fake_anthropic, tmp_path), records + records[:1])


# -- pool, pacing, categories ----------------------------------------------------------


def test_pool_never_exceeds_max_concurrency_and_uses_it(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.latency_s = 0.03
    cfg = make_judge_config(fake_anthropic, tmp_path, max_concurrency=5, runs=4)
    result = run(make_records(10), cfg, tmp_path)
    assert result.summary["counts"]["calls_made"] == 40
    assert fake_anthropic.max_in_flight == 5


def test_requests_per_minute_spaces_call_starts(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, requests_per_minute=600, runs=5)
    started = time.monotonic()
    run(make_records(1), cfg, tmp_path)
    assert time.monotonic() - started >= 0.39  # 5 calls at one per 0.1 s


def test_only_configured_categories_are_judged(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(10, categories=(1, 2, 3, 4, 5))
    result = run(records, make_judge_config(fake_anthropic, tmp_path, runs=1), tmp_path)
    assert len(fake_anthropic.messages_requests()) == 8
    assert result.question_json("conv-1:4") == {}  # category 5
    assert set(result.summary["j"]) == {"1", "2", "3", "4", "overall"}
    assert "j/cat4_single_hop" in judge_metrics(result.summary, DEFAULT_CATEGORY_NAMES)


def test_run_result_reports_versions_tokens_cost_and_question_json(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    result = run(make_records(4), cfg, tmp_path)
    summary = result.summary
    assert summary["prompt_version"] == "rubric-v1"
    assert summary["api_version"] == "2023-06-01"
    assert summary["temperature"] == 0.5 and summary["model"] == "claude-sonnet-4-6"
    assert summary["counts"] == {
        "valid": 8,
        "parse_failure": 0,
        "no_verdict": 0,
        "api_error": 0,
        "prompt_too_long": 0,
        "calls_made": 8,
        "cache_hits": 0,
        "runs_total": 8,
    }
    assert summary["tokens"]["input"] == 8 * 420 and summary["tokens"]["output"] == 8 * 24
    assert summary["estimated_cost_usd"] == pytest.approx((8 * 420 * 3 + 8 * 24 * 15) / 1e6)
    assert judge_params(result.summary) == {
        "judge.prompt_version": "rubric-v1",
        "judge.api_version": "2023-06-01",
        "judge.parser_version": "parse-v2",
        "judge.endpoint": fake_anthropic.url,
        "judge.endpoint_kind": "custom",
        "judge.model_snapshot": "claude-sonnet-4-6",
    }
    row = result.question_json("conv-1:0")
    assert row["j_mean"] == 80.0 and row["j_std"] == 0.0 and row["j_run_count"] == 2
    assert [r["run"] for r in row["j_runs"]] == [0, 1]
    assert row["j_runs"][0]["outcome"] == "valid" and row["j_runs"][0]["raw"]


# -- cache -----------------------------------------------------------------------------


def test_rerun_makes_zero_calls_and_gives_the_same_j(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    scores = iter(range(1000))
    fake_anthropic.responder = lambda req: rubric(next(scores) % 101)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=3)
    first = run(make_records(6), cfg, tmp_path)
    fake_anthropic.clear()
    second = run(make_records(6), cfg, tmp_path)
    assert fake_anthropic.messages_requests() == []
    assert second.summary["j"] == first.summary["j"]
    assert second.summary["counts"]["cache_hits"] == 18
    assert second.summary["counts"]["calls_made"] == 0
    assert second.summary["estimated_cost_usd"] == 0


def test_cache_key_changes_with_temperature_prompt_inputs_and_runs(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    run(make_records(2), cfg, tmp_path)
    fake_anthropic.clear()
    run(
        make_records(2),
        make_judge_config(fake_anthropic, tmp_path, runs=2, temperature=0.2),
        tmp_path,
    )
    assert len(fake_anthropic.messages_requests()) == 4
    fake_anthropic.clear()
    run(make_records(2), make_judge_config(fake_anthropic, tmp_path, runs=3), tmp_path)
    assert len(fake_anthropic.messages_requests()) == 2  # only run index 2 is new
    fake_anthropic.clear()
    changed = [
        QARecord(r.question_id, r.question, r.ground_truth, r.prediction + "!", r.category)
        for r in make_records(2)
    ]
    run(changed, cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 4


def test_cache_off_calls_again(fake_anthropic: FakeAnthropicServer, tmp_path: Path) -> None:
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, cache=False)
    run(make_records(2), cfg, tmp_path)
    run(make_records(2), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 4
    assert not (tmp_path / "judge_cache.sqlite").exists()


def test_relative_cache_path_is_resolved_against_start_dir(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "hydra_run_dir"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1, cache_path="cache/j.sqlite")
    result = run(make_records(1), cfg, tmp_path)
    assert (tmp_path / "cache" / "j.sqlite").exists()
    assert result.summary["cache_path"] == str((tmp_path / "cache" / "j.sqlite").resolve())
    assert not (elsewhere / "cache").exists()


def test_parse_failures_are_cached_and_reparsed_on_read(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.script(text("not json"))
    cfg = make_judge_config(fake_anthropic, tmp_path, runs=1)
    first = run(make_records(1), cfg, tmp_path)
    second = run(make_records(1), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 1
    assert (
        first.summary["counts"]["parse_failure"] == second.summary["counts"]["parse_failure"] == 1
    )
    assert second.per_question["conv-1:0"].runs[0].raw == "not json"


# -- dry run ---------------------------------------------------------------------------


def test_dry_run_makes_no_call_and_estimates_calls_tokens_and_cost(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    cfg = make_judge_config(fake_anthropic, tmp_path, dry_run=True, runs=10)
    result = run(make_records(20, categories=(1, 2, 3, 4, 5)), cfg, tmp_path)
    assert fake_anthropic.requests == []
    estimate = result.dry_run_estimate
    assert estimate is not None and result.summary["dry_run_estimate"] == estimate
    assert estimate["calls_to_make"] == 16 * 10
    assert estimate["estimated_input_tokens"] > 16 * 10 * 300
    assert 0 < estimate["estimated_cost_usd"] <= estimate["cost_upper_bound_usd"]
    assert result.summary["j"] == {} and result.per_question == {}
    assert judge_metrics(result.summary, {})["judge/dry_run_calls"] == 160


def test_dry_run_counts_cached_calls_as_free(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    run(make_records(4), make_judge_config(fake_anthropic, tmp_path, runs=2), tmp_path)
    estimate = run(
        make_records(4), make_judge_config(fake_anthropic, tmp_path, runs=3, dry_run=True), tmp_path
    ).dry_run_estimate
    assert estimate is not None
    assert (estimate["calls_total"], estimate["calls_cached"], estimate["calls_to_make"]) == (
        12,
        8,
        4,
    )
