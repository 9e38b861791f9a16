"""Switching between ``judge.mode=batch`` and ``realtime`` on one cache never pays twice.

Calls paid are counted on the fake API: realtime requests received plus batch requests
that ended ``succeeded`` (canceled, expired and errored requests are not billed). In
every order the job's calls are paid exactly once: paid == needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropicServer, RecordedRequest, Reply, make_judge_config, rubric
from judge_helpers import numbered_records

from locomo_exp.config import JudgeBatchConfig, JudgeMode
from locomo_exp.judge import CallsStop, CallsStopped, JudgeBatchPending, run_judge

QUESTIONS = 20
NEEDED = QUESTIONS  # one run each
STOP_AT = 7
"""A realtime run interrupted after this many calls."""


def _batch_options(**overrides: Any) -> JudgeBatchConfig:
    return JudgeBatchConfig(poll_interval_s=0.001, max_poll_interval_s=0.001, **overrides)


def _run(server: FakeAnthropicServer, tmp_path: Path, mode: JudgeMode, **overrides: Any) -> Any:
    batch = overrides.pop("batch", _batch_options())
    cfg = make_judge_config(
        server, tmp_path, runs=1, mode=mode, batch=batch, max_concurrency=1, **overrides
    )
    return run_judge(numbered_records(QUESTIONS), cfg, start_dir=tmp_path, category_names={})


def _paid(server: FakeAnthropicServer) -> int:
    succeeded = sum(
        result.get("type") == "succeeded"
        for batch in server.batches.values()
        for result in batch.results.values()
    )
    return len(server.messages_requests()) + succeeded


def _batch_left_pending(server: FakeAnthropicServer, tmp_path: Path) -> None:
    server.batch_processing_s = 3600.0  # in progress until the realtime run's polls end it
    with pytest.raises(JudgeBatchPending):
        _run(server, tmp_path, JudgeMode.batch, batch=_batch_options(wait=False))


def _realtime_interrupted(server: FakeAnthropicServer, tmp_path: Path) -> int:
    stop = CallsStop()

    def respond(request: RecordedRequest) -> Reply:
        if len(server.messages_requests()) >= STOP_AT:
            stop.set("interrupted for the test")
        return rubric(80)

    server.responder = respond
    cfg = make_judge_config(server, tmp_path, runs=1, max_concurrency=1)
    with pytest.raises(CallsStopped) as stopped:
        run_judge(
            numbered_records(QUESTIONS), cfg, start_dir=tmp_path, category_names={},
            calls_stop=stop,
        )
    server.responder = lambda request: rubric(80)
    return stopped.value.calls_made


def test_batch_then_realtime_waits_for_the_batch_and_pays_nothing_again(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _batch_left_pending(fake_anthropic, tmp_path)
    assert len(fake_anthropic.messages_requests()) == 1  # the canary
    assert fake_anthropic.batch_requests_submitted() == NEEDED - 1
    (batch_id,) = fake_anthropic.batches

    fake_anthropic.end_batches_after_polls = 2  # ends while the realtime run polls it
    caplog.set_level("INFO")
    result = _run(fake_anthropic, tmp_path, JudgeMode.realtime)

    assert len(fake_anthropic.messages_requests()) == 1  # no realtime call added
    assert _paid(fake_anthropic) == NEEDED
    assert result.summary["counts"]["valid"] == NEEDED
    assert result.summary["counts"]["calls_made"] == 0
    assert (
        f"19 calls of this realtime run are in 1 batch submitted by judge.mode=batch and "
        f"still processing (19 in batch {batch_id}); waiting for them"
    ) in caplog.text


def test_batch_then_realtime_with_wait_false_stops_pending_and_sends_nothing(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    _batch_left_pending(fake_anthropic, tmp_path)
    with pytest.raises(JudgeBatchPending) as pending:
        _run(fake_anthropic, tmp_path, JudgeMode.realtime, batch=_batch_options(wait=False))
    assert pending.value.requests_pending == NEEDED - 1
    assert len(fake_anthropic.messages_requests()) == 1


def test_batch_then_realtime_abandon_cancels_first_and_pays_each_call_once(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    _batch_left_pending(fake_anthropic, tmp_path)
    (batch_id,) = fake_anthropic.batches
    result = _run(fake_anthropic, tmp_path, JudgeMode.realtime, batch=_batch_options(abandon=True))

    cancels = [r for r in fake_anthropic.requests if r.path.endswith("/cancel")]
    assert [r.path for r in cancels] == [f"/v1/messages/batches/{batch_id}/cancel"]
    assert fake_anthropic.batches[batch_id].canceled
    assert len(fake_anthropic.messages_requests()) == 1 + (NEEDED - 1)  # canary + realtime
    assert _paid(fake_anthropic) == NEEDED
    assert result.summary["counts"]["valid"] == NEEDED


def test_realtime_interrupted_then_batch_submits_only_the_rest(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    made = _realtime_interrupted(fake_anthropic, tmp_path)
    assert made == STOP_AT
    fake_anthropic.batch_processing_s = 0.0
    result = _run(fake_anthropic, tmp_path, JudgeMode.batch)

    assert fake_anthropic.batch_requests_submitted() == NEEDED - STOP_AT - 1  # and a canary
    assert _paid(fake_anthropic) == NEEDED
    assert result.summary["counts"]["valid"] == NEEDED


def test_both_interrupted_then_realtime_pays_each_call_once(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    _realtime_interrupted(fake_anthropic, tmp_path)  # STOP_AT calls paid
    _batch_left_pending(fake_anthropic, tmp_path)  # a canary and the rest submitted
    assert fake_anthropic.batch_requests_submitted() == NEEDED - STOP_AT - 1
    fake_anthropic.end_batches_after_polls = 2
    result = _run(fake_anthropic, tmp_path, JudgeMode.realtime)

    assert len(fake_anthropic.messages_requests()) == STOP_AT + 1
    assert _paid(fake_anthropic) == NEEDED
    assert result.summary["counts"]["valid"] == NEEDED
