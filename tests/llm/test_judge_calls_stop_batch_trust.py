"""A failed MLflow setup stops batch mode and the trust calls from spending, as it stops the pool.

The judge job's MLflow run is set up on a thread while its calls wait; its failure sets the
judge's ``CallsStop`` (``tests/llm/test_judge_calls_stop.py`` covers the realtime pool). Message
Batches (Anthropic), the OpenAI Batch API, the audit's controls and the panel check it too:
no batch is created, no control or panel call is sent after it. Batches already submitted
keep processing and are collected by the next run without being paid again, verdicts paid
for are cached, and the job ends with the same one line naming the calls made and left. A
re-run pays only for the rest: the fake servers count every request paid for.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, Composer
from fake_anthropic import (
    FakeAnthropicServer,
    RecordedRequest,
    Reply,
    make_judge_config,
    rubric,
)
from fake_openai import FakeOpenAIServer, openai_judge_config
from judge_helpers import make_records

from locomo_exp import tracking
from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.config import JudgeBatchConfig, JudgeMode
from locomo_exp.experiment import run_experiment
from locomo_exp.judge import CallsStop, CallsStopped, run_judge
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.tracking import store as store_module

N = 30
REASON = "the MLflow run could not be set up: store refused"
GUARD_S = 60.0
"""How long a held reply waits at most for the stop (a guard against a hang, not a timing)."""
FAST = {"poll_interval_s": 0.01, "max_poll_interval_s": 0.01}


def _line(made: int, left: int, total: int, in_batches: int = 0) -> str:
    batches = (
        f" and {in_batches} in batches already submitted (the same command collects them "
        "without paying again)"
        if in_batches
        else ""
    )
    return (
        f"judge stopped: {REASON}; {made} call{'s' if made != 1 else ''} made, {left} of {total} "
        f"left{batches}; the verdicts paid for are cached: once this is fixed, the same command "
        f"pays only for the {left} left"
    )


def _anthropic_batch(server: FakeAnthropicServer, tmp_path: Path, **batch: Any) -> Any:
    return make_judge_config(
        server, tmp_path / "cache", mode=JudgeMode.batch, runs=1, max_error_rate=1.0,
        batch=JudgeBatchConfig(**FAST, **batch),
    )


def _judge(records: list[Any], cfg: Any, tmp_path: Path, stop: CallsStop | None = None) -> Any:
    return run_judge(records, cfg, start_dir=tmp_path, category_names=DEFAULT_CATEGORY_NAMES,
                     calls_stop=stop)


def _paid(server: Any) -> int:
    """Requests paid for: realtime calls and requests in the batches the server accepted."""
    return len(server.messages_requests()) + server.batch_requests_submitted()


def _stop_at(stop: CallsStop, nth: int) -> Any:
    """A responder that sets ``stop`` when it answers its ``nth`` request (counted from 1)."""
    seen = [0]

    def respond(request: RecordedRequest) -> Reply:
        seen[0] += 1
        if seen[0] == nth:
            stop.set(REASON)
        return rubric(80)

    return respond


def test_a_stop_during_the_canary_submits_no_batch_and_a_rerun_pays_for_the_rest(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(N)
    stop = CallsStop()
    fake_anthropic.responder = _stop_at(stop, 1)  # the canary's reply comes back, then stop
    cfg = _anthropic_batch(fake_anthropic, tmp_path)
    with pytest.raises(CallsStopped) as stopped:
        _judge(records, cfg, tmp_path, stop)
    assert str(stopped.value) == _line(1, N - 1, N)
    assert fake_anthropic.batch_create_requests() == []  # nothing submitted after the stop
    assert _paid(fake_anthropic) == 1
    with JudgeCache(cfg.cache_path) as cache:
        assert cache.count() == 1  # the canary's verdict is kept

    fake_anthropic.responder = lambda request: rubric(80)
    result = _judge(records, cfg, tmp_path)
    assert result.summary["counts"]["valid"] == N
    assert _paid(fake_anthropic) == N  # the re-run paid only for the 29 left


def test_a_stop_between_batches_submits_no_more_and_the_rerun_collects_the_submitted_one(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    records = make_records(N)
    stop = CallsStop()
    # request 1 is the canary; 2-11 are the first batch's, answered when it is created
    fake_anthropic.responder = _stop_at(stop, 2)
    fake_anthropic.batch_processing_s = 3600.0  # still processing when the job stops
    cfg = _anthropic_batch(fake_anthropic, tmp_path, max_requests=10)
    with pytest.raises(CallsStopped) as stopped:
        _judge(records, cfg, tmp_path, stop)
    assert [len(c.body["requests"]) for c in fake_anthropic.batch_create_requests()] == [10]
    (submitted,) = fake_anthropic.batches
    assert str(stopped.value) == _line(11, N - 11, N, in_batches=10)
    assert (stopped.value.calls_made, stopped.value.calls_left) == (11, 19)

    fake_anthropic.responder = lambda request: rubric(80)
    fake_anthropic.end_batches()
    fake_anthropic.batch_processing_s = 0.0
    result = _judge(records, cfg, tmp_path)
    assert result.summary["counts"]["valid"] == N
    assert result.summary["batch"]["resumed_batch_ids"] == [submitted]  # not paid again
    assert _paid(fake_anthropic) == N


def test_an_openai_batch_is_not_submitted_after_the_stop(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    records = make_records(N)
    stop = CallsStop()
    fake_openai.responder = _stop_at(stop, 1)
    cfg = openai_judge_config(fake_openai, tmp_path / "cache", runs=1, mode="batch",
                              max_error_rate=1.0, batch=FAST)
    with pytest.raises(CallsStopped) as stopped:
        _judge(records, cfg, tmp_path, stop)
    assert str(stopped.value) == _line(1, N - 1, N)
    assert fake_openai.batch_create_requests() == []
    assert _paid(fake_openai) == 1

    fake_openai.responder = lambda request: rubric(80)
    assert _judge(records, cfg, tmp_path).summary["counts"]["valid"] == N
    assert _paid(fake_openai) == N


# -- the whole job: the MLflow thread fails while the audit's controls are judged -------------

QUESTIONS_JUDGED = 16
"""The example's questions in the judge's default categories 1-4."""
AUDIT_N = 2
PANEL = "[haiku-4-5,sonnet-4-6]"
"""The main judge (sonnet-4-6) is a member: its calls are the answers', from the cache."""


def _job(tmp_path: Path, url: str) -> tuple[str, ...]:
    return (
        "scorer=judge", "judge.runs=1", "judge.max_concurrency=1", "judge.progress=false",
        f"judge.audit.n={AUDIT_N}", "judge.audit.max_share=null", f"judge.panel={PANEL}",
        f"judge.base_url={url}", f"judge.cache_path={tmp_path / 'cache.sqlite'}",
        f"data.path={EXAMPLE}",
    )


def test_a_failed_mlflow_setup_during_the_audit_stops_the_controls_and_the_panel(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failing = threading.Event()  # the first control's request has arrived: the store fails now
    told = threading.Event()  # the judge was told to stop

    def respond(request: RecordedRequest) -> Reply:
        if len(fake_anthropic.messages_requests()) == QUESTIONS_JUDGED + 1:  # the first control
            failing.set()
            told.wait(GUARD_S)
        return rubric(80)

    def refuse(spec: tracking.RunSpec) -> str:
        failing.wait(GUARD_S)
        raise tracking.TrackingStoreError(spec.tracking_uri, RuntimeError("store refused"))

    set_stop, create_run = CallsStop.set, store_module.create_run

    def set_and_tell(self: CallsStop, reason: str, error: BaseException | None = None) -> None:
        set_stop(self, reason, error)
        told.set()

    fake_anthropic.responder = respond
    monkeypatch.setattr(store_module, "create_run", refuse)
    monkeypatch.setattr(CallsStop, "set", set_and_tell)
    refused = f"sqlite:///{tmp_path / 'refused.db'}"
    bad = typed_config(f"tracking.uri={refused}", *_job(tmp_path, fake_anthropic.url))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(bad, tmp_path / "bad", tmp_path)

    paid = len(fake_anthropic.messages_requests())
    assert paid == QUESTIONS_JUDGED + 1, str(stopped.value)  # the answers and the one control in flight
    error = stopped.value
    audit_calls = error.calls_total - QUESTIONS_JUDGED - QUESTIONS_JUDGED  # minus answers, haiku
    assert audit_calls > 1
    assert (error.calls_made, error.calls_left) == (paid, error.calls_total - paid)
    assert str(error) == (
        f"judge stopped: the MLflow run could not be set up: tracking.uri={refused}: MLflow "
        "cannot use this store (store refused); fix tracking.uri or use tracking=none; "
        f"{paid} calls made, {error.calls_total - paid} of {error.calls_total} left; the "
        "verdicts paid for are cached: once this is fixed, the same command pays only for "
        f"the {error.calls_total - paid} left"
    )

    monkeypatch.setattr(store_module, "create_run", create_run)
    monkeypatch.setattr(CallsStop, "set", set_stop)
    fake_anthropic.responder = lambda request: rubric(80)
    good = typed_config("tracking.experiment=resumed", *_job(tmp_path, fake_anthropic.url))
    run_experiment(good, tmp_path / "good", tmp_path)
    # the re-run paid only for the rest: the other controls and the panel's calls
    assert len(fake_anthropic.messages_requests()) == error.calls_total
