"""``judge.mode=batch``: the real SDK against the fake Message Batches API.

Same scores as realtime, results joined by ``custom_id`` whatever their order, one cache
for both modes, per-request outcomes (errored / expired / canceled), submit-and-return
(``judge.batch.wait=false``), adoption of a batch whose create call timed out, and
limits on batch size.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import (
    FakeAnthropicServer,
    RecordedRequest,
    Reply,
    dropped,
    error,
    make_judge_config,
    rubric,
    text,
)
from judge_helpers import make_records

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.config import JudgeBatchConfig, JudgeConfig, JudgeMode
from locomo_exp.judge import (
    JudgeBatchPending,
    JudgeError,
    JudgeFatalAPIError,
    JudgeRunResult,
    preflight_judge,
    run_judge,
)
from locomo_exp.llm.batch_plan import BATCH_BODY_OVERHEAD_BYTES, split_batches
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.results import QARecord
from locomo_exp.tracking import judge_metrics, judge_params, judge_tags

QUESTION_RE = re.compile(r"What did Ann do in week (\d+)\?")


def question_number(request: RecordedRequest) -> int:
    match = QUESTION_RE.search(request.prompt)
    assert match, request.prompt[:200]
    return int(match.group(1))


def expected_score(i: int) -> int:
    return (i * 37) % 101


def verdicts(request: RecordedRequest) -> Reply:
    """The same fake judge for both modes: a score per question, some unparseable
    replies and some server errors (an errored entry in a batch)."""
    i = question_number(request)
    if i % 29 == 5:
        return text("I would rather not give a score.")
    if i % 31 == 7:
        return error(500, "Internal server error", "api_error")
    return rubric(expected_score(i))


def batch_config(server: FakeAnthropicServer, cache_dir: Path, **overrides: Any) -> JudgeConfig:
    batch = JudgeBatchConfig(
        poll_interval_s=0.02, max_poll_interval_s=0.1, **overrides.pop("batch", {})
    )
    return make_judge_config(server, cache_dir, mode=JudgeMode.batch, batch=batch, **overrides)


def run(records: list[QARecord], cfg: JudgeConfig, tmp_path: Path) -> JudgeRunResult:
    return run_judge(records, cfg, start_dir=tmp_path, category_names=DEFAULT_CATEGORY_NAMES)


def per_question(result: JudgeRunResult) -> dict[str, Any]:
    return {
        qid: (
            agg.mean_score,
            agg.std_dev,
            agg.run_count,
            [(r.run, r.outcome, r.score) for r in agg.runs],
        )
        for qid, agg in result.per_question.items()
    }


# -- equivalence with realtime -------------------------------------------------------------


def test_batch_run_gives_exactly_the_scores_of_a_realtime_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = verdicts
    records = make_records(300)
    realtime = run(
        records,
        make_judge_config(
            fake_anthropic, tmp_path / "rt", runs=2, max_concurrency=16, max_error_rate=1.0
        ),
        tmp_path,
    )
    fake_anthropic.clear()

    cfg = batch_config(
        fake_anthropic, tmp_path / "b", runs=2, max_error_rate=1.0, batch={"max_requests": 250}
    )
    batch = run(records, cfg, tmp_path)

    assert per_question(batch) == per_question(realtime)
    assert batch.summary["j"] == realtime.summary["j"]
    for outcome in ("valid", "parse_failure", "api_error"):
        assert batch.summary["counts"][outcome] == realtime.summary["counts"][outcome]
    assert batch.summary["counts"]["parse_failure"] > 0
    assert batch.summary["counts"]["api_error"] > 0

    # 600 calls: one realtime canary, 599 in three batches of at most 250.
    creates = fake_anthropic.batch_create_requests()
    assert [len(c.body["requests"]) for c in creates] == [250, 250, 99]
    assert len(fake_anthropic.messages_requests()) == 1
    assert batch.summary["mode"] == "batch"
    info = batch.summary["batch"]
    assert info["batch_ids"] == sorted(fake_anthropic.batches, key=lambda b: int(b.split("_")[-1]))
    assert info["requests_submitted"] == 599
    assert info["results"]["errored"] == batch.summary["counts"]["api_error"]
    assert info["errored_types"] == {"api_error": batch.summary["counts"]["api_error"]}
    assert judge_params(batch.summary)["judge.batch_ids"] == ",".join(info["batch_ids"])
    # mode and batch ids are params (judge.mode from the config), not repeated as tags (issue 30 §4)
    assert judge_tags(batch.summary) == {}
    assert judge_metrics(batch.summary, {})["judge/batch_count"] == 3
    assert judge_metrics(batch.summary, {})["judge/batch_errored"] == batch.summary["counts"]["api_error"]
    assert judge_tags(realtime.summary) == {}
    assert judge_tags(realtime.summary, dry_run=True) == {"judge.dry_run": "true"}

    # Batch tokens cost half: the same tokens, the canary at list price.
    assert batch.summary["tokens"]["input"] == realtime.summary["tokens"]["input"]
    replies = realtime.summary["counts"]["valid"] + realtime.summary["counts"]["parse_failure"]
    per_call = realtime.summary["estimated_cost_usd"] / replies
    assert batch.summary["estimated_cost_usd"] == pytest.approx(
        per_call + 0.5 * per_call * (replies - 1)
    )


def test_results_shuffled_by_the_server_land_on_the_right_questions(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda request: rubric(expected_score(question_number(request)))
    fake_anthropic.batch_shuffle_seed = 7
    records = make_records(60)
    result = run(records, batch_config(fake_anthropic, tmp_path, runs=3), tmp_path)

    for i, record in enumerate(records):
        agg = result.per_question[record.question_id]
        assert agg.individual_scores == [expected_score(i)] * 3, record.question_id
    (batch,) = fake_anthropic.batches.values()
    submitted = batch.custom_ids
    served = [
        line.split('"custom_id": "')[1][:64]
        for line in fake_anthropic.render(
            fake_anthropic._batch_results(
                RecordedRequest(
                    "GET", f"/v1/messages/batches/{batch.batch_id}/results", {}, None, 0
                )
            ),
            RecordedRequest("GET", "", {}, None, 0),
        )
        .decode()
        .splitlines()
    ]
    assert sorted(served) == sorted(submitted) and served != submitted
    assert all(re.fullmatch(r"[0-9a-f]{64}", c) for c in submitted)
    # Each custom_id is the cache key of the call it carried.
    with sqlite3.connect(tmp_path / "judge_cache.sqlite") as conn:
        rows = dict(conn.execute("SELECT key, question_id FROM judge_calls").fetchall())
    for item, custom_id in zip(fake_anthropic.batch_items, submitted, strict=True):
        assert rows[custom_id] == f"conv-1:{question_number(item)}"


# -- never paying twice --------------------------------------------------------------------


def test_mixed_realtime_and_batch_use_of_one_cache_makes_no_duplicate_request(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda request: rubric(expected_score(question_number(request)))
    records = make_records(40)
    realtime_cfg = make_judge_config(fake_anthropic, tmp_path, runs=2)
    run(records[:15], realtime_cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 30

    fake_anthropic.clear()
    batch = run(records, batch_config(fake_anthropic, tmp_path, runs=2), tmp_path)
    sent = len(fake_anthropic.messages_requests()) + fake_anthropic.batch_requests_submitted()
    assert sent == 50  # the 25 questions realtime did not judge, 2 runs each
    assert batch.summary["counts"]["cache_hits"] == 30
    assert batch.summary["counts"]["valid"] == 80

    fake_anthropic.clear()
    again = run(records, realtime_cfg, tmp_path)
    assert fake_anthropic.messages_requests() == []
    assert again.summary["counts"]["cache_hits"] == 80
    assert per_question(again) == per_question(batch)
    # Cached batch replies keep their batch price.
    assert again.summary["estimated_cost_usd_including_cached"] == pytest.approx(
        batch.summary["estimated_cost_usd_including_cached"]
    )


def test_wait_false_submits_and_returns_pending_and_a_later_call_collects(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.responder = lambda request: rubric(expected_score(question_number(request)))
    fake_anthropic.batch_processing_s = 3600.0  # ended on demand below
    records = make_records(20)
    cfg = batch_config(fake_anthropic, tmp_path, runs=2, batch={"wait": False})

    with pytest.raises(JudgeBatchPending) as first:
        run(records, cfg, tmp_path)
    (batch_id,) = fake_anthropic.batches
    assert first.value.batch_ids == [batch_id]
    assert first.value.submitted_batch_ids == [batch_id]
    assert first.value.requests_pending == 39 and first.value.requests_total == 40
    assert "same command again" in str(first.value)
    assert not isinstance(first.value, ValueError)  # not an error for the CLI

    with pytest.raises(JudgeBatchPending) as second:  # still processing: nothing new
        run(records, cfg, tmp_path)
    assert second.value.submitted_batch_ids == []
    assert len(fake_anthropic.batch_create_requests()) == 1

    fake_anthropic.end_batches()
    result = run(records, cfg, tmp_path)
    assert len(fake_anthropic.batch_create_requests()) == 1
    assert len(fake_anthropic.messages_requests()) == 1  # the canary of the first call
    assert result.summary["counts"]["valid"] == 40
    assert result.summary["counts"]["calls_made"] == 0
    assert result.summary["batch"]["resumed_batch_ids"] == [batch_id]
    assert judge_params(result.summary)["judge.batch_ids"] == batch_id


def test_a_create_call_that_timed_out_after_reaching_the_api_is_adopted_not_resubmitted(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    create = fake_anthropic.routes[("POST", "/v1/messages/batches")]

    def slow_create(request: RecordedRequest) -> Reply:
        reply = create(request)
        reply.delay_s = 1.0  # the batch exists, but the reply comes after the timeout
        return reply

    fake_anthropic.routes[("POST", "/v1/messages/batches")] = slow_create
    cfg = batch_config(fake_anthropic, tmp_path, runs=2, batch={"create_timeout_s": 0.3})
    result = run(make_records(10), cfg, tmp_path)

    assert len(fake_anthropic.batch_create_requests()) == 1
    assert result.summary["counts"]["valid"] == 20
    assert result.summary["batch"]["batch_ids"] == list(fake_anthropic.batches)


def test_a_create_call_that_never_reached_the_api_is_submitted_again_by_the_next_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    create = fake_anthropic.routes[("POST", "/v1/messages/batches")]
    fake_anthropic.routes[("POST", "/v1/messages/batches")] = lambda request: dropped()
    cfg = batch_config(fake_anthropic, tmp_path, runs=2, max_retries=1)
    with pytest.raises(JudgeError, match="Run the same command again"):
        run(make_records(10), cfg, tmp_path)
    assert fake_anthropic.batches == {}

    fake_anthropic.routes[("POST", "/v1/messages/batches")] = create
    result = run(make_records(10), cfg, tmp_path)
    assert result.summary["counts"]["valid"] == 20
    # The first run's canary is cached; this run's canary is one more realtime call.
    assert result.summary["batch"]["requests_submitted"] == 18
    assert len(fake_anthropic.messages_requests()) == 2
    assert len(fake_anthropic.batches) == 1


# -- per-request outcomes ------------------------------------------------------------------


def test_errored_entries_are_api_errors_with_their_type_and_are_retried_next_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    def flaky(request: RecordedRequest) -> Reply:
        i = question_number(request)
        if i in (3, 4):
            return error(529, "Overloaded", "overloaded_error")
        return rubric(50)

    fake_anthropic.responder = flaky
    cfg = batch_config(fake_anthropic, tmp_path, runs=1, max_error_rate=0.5)
    result = run(make_records(10), cfg, tmp_path)
    errors = {qid: agg.runs[0].error for qid, agg in result.per_question.items() if agg.api_errors}
    assert set(errors) == {"conv-1:3", "conv-1:4"}
    assert all(e.startswith("batch_errored overloaded_error: Overloaded") for e in errors.values())
    assert result.summary["batch"]["errored_types"] == {"overloaded_error": 2}
    assert result.summary["counts"]["api_error"] == 2
    assert not result.error_rate_exceeded

    fake_anthropic.responder = lambda request: rubric(50)
    fake_anthropic.clear()
    again = run(make_records(10), cfg, tmp_path)
    assert fake_anthropic.batch_requests_submitted() + len(fake_anthropic.messages_requests()) == (
        10 - 1 + 2  # first batch (the canary was realtime) + the two errored, again
    )
    assert again.summary["counts"]["valid"] == 10


def test_expired_requests_are_counted_and_submitted_again_by_the_next_run(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.expire_in_next_batch = 5
    cfg = batch_config(fake_anthropic, tmp_path, runs=2)
    result = run(make_records(10), cfg, tmp_path)
    assert result.summary["batch"]["results"]["expired"] == 5
    assert judge_metrics(result.summary, {})["judge/batch_expired"] == 5
    assert result.summary["counts"]["api_error"] == 5
    assert result.error_rate_exceeded  # judge.max_error_rate=0: the job must not pass
    expired = [r for agg in result.per_question.values() for r in agg.runs if r.score is None]
    assert all(r.error.startswith("batch_expired") for r in expired)

    again = run(make_records(10), cfg, tmp_path)
    # The 5 expired calls again: one as this run's realtime canary, 4 in a new batch.
    assert [len(c.body["requests"]) for c in fake_anthropic.batch_create_requests()] == [19, 4]
    assert len(fake_anthropic.messages_requests()) == 2
    assert again.summary["counts"]["valid"] == 20
    assert again.summary["counts"]["cache_hits"] == 15


def test_a_canceled_batch_is_reported_and_its_requests_resubmitted(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    fake_anthropic.batch_processing_s = 30.0
    cfg = batch_config(fake_anthropic, tmp_path, runs=1, batch={"wait": False, "canary": False})
    with pytest.raises(JudgeBatchPending) as pending:
        run(make_records(6), cfg, tmp_path)
    fake_anthropic.cancel_batch(pending.value.batch_ids[0])

    result = run(make_records(6), cfg, tmp_path)
    assert result.summary["batch"]["results"]["canceled"] == 6
    assert result.summary["counts"]["api_error"] == 6

    fake_anthropic.batch_processing_s = 0.0
    again = run(make_records(6), cfg, tmp_path)
    assert again.summary["counts"]["valid"] == 6
    assert len(fake_anthropic.batch_create_requests()) == 2


# -- config, temperature, validation -------------------------------------------------------


@pytest.mark.parametrize(
    ("temperature", "version", "params_temperature"),
    [
        pytest.param(0.5, "2023-06-01", 0.5, id="temperature-0.5-on-2023-06-01"),
        pytest.param(None, None, None, id="temperature-null-sends-none"),
    ],
)
def test_temperature_goes_in_each_requests_params_with_the_version_that_accepts_it(
    fake_anthropic: FakeAnthropicServer,
    tmp_path: Path,
    temperature: float | None,
    version: str | None,
    params_temperature: float | None,
) -> None:
    from locomo_exp.llm.providers.anthropic import SDK_DEFAULT_API_VERSION

    cfg = batch_config(fake_anthropic, tmp_path, runs=2, temperature=temperature)
    result = run(make_records(3), cfg, tmp_path)
    assert result.summary["counts"]["valid"] == 6
    (create,) = fake_anthropic.batch_create_requests()
    assert create.headers["anthropic-version"] == (version or SDK_DEFAULT_API_VERSION)
    for entry in create.body["requests"]:
        params = entry["params"]
        assert params.get("temperature") == params_temperature
        assert ("temperature" in params) == (temperature is not None)
        assert params["model"] == "claude-sonnet-4-6" and params["max_tokens"] == 256
        assert params["output_config"]["format"]["type"] == "json_schema"


def test_an_unknown_model_stops_at_the_canary_before_any_batch_is_submitted(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    cfg = batch_config(fake_anthropic, tmp_path, model="claude-sonnet-4-0-retired", runs=2)
    with pytest.raises(JudgeFatalAPIError, match="judge.model"):
        run(make_records(10), cfg, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 1
    assert fake_anthropic.batch_create_requests() == []


def test_a_temperature_rejected_on_batch_create_stops_the_job(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    from locomo_exp.llm.providers.anthropic import TEMPERATURE_API_VERSION

    fake_anthropic.routes[("POST", "/v1/messages/batches")] = lambda request: error(
        400,
        "requests.0.params.temperature: Extra inputs are not permitted",
        "invalid_request_error",
    )
    cfg = batch_config(fake_anthropic, tmp_path, runs=2, batch={"canary": False})
    with pytest.raises(JudgeFatalAPIError, match="judge.temperature=null"):
        run(make_records(4), cfg, tmp_path)
    assert fake_anthropic.batch_create_requests()[0].headers["anthropic-version"] == (
        TEMPERATURE_API_VERSION
    )
    with JudgeCache(tmp_path / "judge_cache.sqlite") as cache:
        statuses = cache.connection.execute("SELECT status FROM judge_batches").fetchall()
    assert statuses == [("failed",)]


def test_batch_mode_needs_the_cache_and_sane_batch_options(tmp_path: Path) -> None:
    bad = JudgeConfig(
        mode=JudgeMode.batch,
        cache=False,
        dry_run=True,
        batch=JudgeBatchConfig(poll_interval_s=0, max_requests=200_000, price_factor=2.0),
    )
    with pytest.raises(JudgeError) as excinfo:
        preflight_judge(bad, [])
    message = str(excinfo.value)
    for needle in (
        "judge.cache=true",
        "poll_interval_s",
        "judge.batch.max_requests",
        "price_factor",
    ):
        assert needle in message
    preflight_judge(JudgeConfig(mode=JudgeMode.batch, dry_run=True), [])  # accepted now


def test_dry_run_in_batch_mode_estimates_at_batch_prices(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(10)
    realtime = run(records, make_judge_config(fake_anthropic, tmp_path, dry_run=True), tmp_path)
    batch = run(records, batch_config(fake_anthropic, tmp_path, dry_run=True), tmp_path)
    assert batch.dry_run_estimate is not None and realtime.dry_run_estimate is not None
    assert batch.dry_run_estimate["estimated_cost_usd"] == pytest.approx(
        0.5 * realtime.dry_run_estimate["estimated_cost_usd"]
    )
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(
    ("sizes", "max_requests", "max_bytes", "expected"),
    [
        pytest.param([10] * 5, 2, 10**6, [(0, 2), (2, 4), (4, 5)], id="by-request-count"),
        pytest.param(
            [100, 100, 100],
            10,
            BATCH_BODY_OVERHEAD_BYTES + 2 * 101,
            [(0, 2), (2, 3)],
            id="by-bytes-with-separators",
        ),
        pytest.param([], 10, 10**6, [], id="nothing"),
    ],
)
def test_split_batches_respects_the_request_and_byte_limits(
    sizes: list[int], max_requests: int, max_bytes: int, expected: list[tuple[int, int]]
) -> None:
    assert split_batches(sizes, max_requests=max_requests, max_bytes=max_bytes) == expected


def test_a_single_request_over_the_byte_limit_is_an_error() -> None:
    with pytest.raises(JudgeError, match="max_bytes"):
        split_batches([5000], max_requests=10, max_bytes=4096)
