"""A judge job whose MLflow run cannot be set up stops paying for calls at once.

The run is set up on a thread while the judge's calls wait on the network
(``tracking/pending.py``); its failure sets the judge's ``CallsStop``. The pool then starts
no new call, lets those in flight finish (at most ``judge.max_concurrency``), keeps every
verdict paid for in the judge cache, and the job ends with one line naming the store's
problem and the calls made and left. A re-run against a working store pays only for the
calls left.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from conftest import EXAMPLE, Composer, run_cli
from fake_anthropic import FakeAnthropicServer, RecordedRequest, Reply, rubric

from locomo_exp import tracking
from locomo_exp.experiment import run_experiment
from locomo_exp.judge import CallsStop, CallsStopped
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.tracking import store as store_module

QUESTIONS_JUDGED = 16
"""The example's questions in the judge's default categories 1-4 (4 each)."""
RUNS = 5
CONCURRENCY = 4
TOTAL_CALLS = QUESTIONS_JUDGED * RUNS
FAIL_AT = 10
"""The store fails once the fake API has received this many requests."""
GUARD_S = 60.0
"""How long a held reply waits at most for the stop (a guard against a hang, not a timing)."""


def _judge(tmp_path: Path, url: str) -> tuple[str, ...]:
    return (
        "scorer=judge", f"judge.runs={RUNS}", f"judge.max_concurrency={CONCURRENCY}",
        "judge.progress=false", "judge.audit.n=0", f"judge.base_url={url}",
        f"judge.cache_path={tmp_path / 'cache.sqlite'}",
    )


def test_calls_stop_keeps_its_first_reason_and_error() -> None:
    stop = CallsStop()
    assert not stop.is_set and stop.reason == "" and stop.error is None
    first = RuntimeError("store refused")
    stop.set("the store refused", first)
    stop.set("later", RuntimeError("later"))
    assert stop.is_set and stop.reason == "the store refused" and stop.error is first


def test_calls_stopped_is_one_line_with_the_calls_made_and_left() -> None:
    error = CallsStopped("the MLflow run could not be set up: x", calls_made=12,
                         calls_left=68, calls_total=80)
    assert str(error) == (
        "judge stopped: the MLflow run could not be set up: x; 12 calls made, 68 of 80 left; "
        "the verdicts paid for are cached: once this is fixed, the same command pays only "
        "for the 68 left"
    )


def test_a_failed_mlflow_setup_stops_the_calls_and_a_rerun_pays_only_for_the_rest(
    tmp_path: Path,
    typed_config: Composer,
    fake_anthropic: FakeAnthropicServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failing = threading.Event()  # the FAIL_AT-th request has arrived: the store fails now
    told = threading.Event()  # the pool was told to stop
    seen_at_failure: list[int] = []

    def respond(request: RecordedRequest) -> Reply:
        if len(fake_anthropic.messages_requests()) >= FAIL_AT:  # this one included
            failing.set()
            told.wait(GUARD_S)  # calls in flight stay in flight until the pool is told
        return rubric(80)

    def refuse(spec: tracking.RunSpec) -> str:
        failing.wait(GUARD_S)
        seen_at_failure.append(len(fake_anthropic.messages_requests()))
        raise tracking.TrackingStoreError(spec.tracking_uri, RuntimeError("store refused"))

    set_stop, create_run = CallsStop.set, store_module.create_run

    def set_and_tell(self: CallsStop, reason: str, error: BaseException | None = None) -> None:
        set_stop(self, reason, error)
        told.set()

    fake_anthropic.responder = respond
    monkeypatch.setattr(store_module, "create_run", refuse)
    monkeypatch.setattr(CallsStop, "set", set_and_tell)
    refused = f"sqlite:///{tmp_path / 'refused.db'}"  # passes the pre-flight, fails at run time
    bad = typed_config(f"tracking.uri={refused}", *_judge(tmp_path, fake_anthropic.url))
    with pytest.raises(CallsStopped) as stopped:
        run_experiment(bad, tmp_path / "bad", tmp_path)

    paid = len(fake_anthropic.messages_requests())
    (at_failure,) = seen_at_failure
    assert FAIL_AT <= at_failure < FAIL_AT + CONCURRENCY  # the others were held in flight
    assert 0 <= paid - at_failure < CONCURRENCY  # only the calls in flight, none started after
    message = str(stopped.value)
    assert "\n" not in message
    assert message == (
        f"judge stopped: the MLflow run could not be set up: tracking.uri={refused}: MLflow "
        "cannot use this store (store refused); fix tracking.uri or use tracking=none; "
        f"{paid} calls made, {TOTAL_CALLS - paid} of {TOTAL_CALLS} left; the verdicts paid "
        f"for are cached: once this is fixed, the same command pays only for the "
        f"{TOTAL_CALLS - paid} left"
    )
    assert (stopped.value.calls_made, stopped.value.calls_left) == (paid, TOTAL_CALLS - paid)
    with JudgeCache(tmp_path / "cache.sqlite") as cache:
        assert cache.count() == paid  # every verdict paid for is kept
    summary = json.loads((tmp_path / "bad" / "summary.json").read_text())
    assert summary["status"]["judge"] == f"failed: {message}"

    monkeypatch.setattr(store_module, "create_run", create_run)  # the test's own store
    monkeypatch.setattr(CallsStop, "set", set_stop)
    fake_anthropic.responder = lambda request: rubric(80)
    good = typed_config("tracking.experiment=resumed", *_judge(tmp_path, fake_anthropic.url))
    result = run_experiment(good, tmp_path / "good", tmp_path)
    assert len(fake_anthropic.messages_requests()) - paid == TOTAL_CALLS - paid
    counts = result.summary["judge"]["counts"]
    assert (counts["cache_hits"], counts["calls_made"]) == (paid, TOTAL_CALLS - paid)
    with JudgeCache(tmp_path / "cache.sqlite") as cache:
        assert cache.count() == TOTAL_CALLS


def _foreign_store(path: Path) -> str:
    """An SQLite file that is a database but not one MLflow can use (unknown migration)."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        conn.execute("INSERT INTO alembic_version VALUES ('ffffffffffff')")
    return f"sqlite:///{path}"


@pytest.mark.slow
def test_the_command_ends_with_one_line_naming_the_store_and_the_calls(
    tmp_path: Path, fake_anthropic: FakeAnthropicServer
) -> None:
    # A real store failure in a real process: MLflow refuses the database when it opens it,
    # seconds into the calls; at 0.3 s per reply the 10 x 16 calls would take 24 s.
    fake_anthropic.latency_s = 0.3
    fake_anthropic.responder = lambda request: rubric(80)
    uri = _foreign_store(tmp_path / "foreign.db")
    done = run_cli(
        f"data.path={EXAMPLE}", f"tracking.uri={uri}", "hydra.run.dir=out",
        "scorer=judge", "judge.runs=10", "judge.max_concurrency=2",
        "judge.progress=false", "judge.audit.n=0", f"judge.cache_path={tmp_path / 'c.sqlite'}",
        cwd=tmp_path, server=fake_anthropic,
    )
    paid = len(fake_anthropic.messages_requests())
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    (line,) = lines
    assert line.startswith(
        f"error: judge stopped: the MLflow run could not be set up: tracking.uri={uri}: MLflow "
        "cannot use this store (Can't locate revision identified by 'ffffffffffff'); "
    )
    assert f"; {paid} calls made, {160 - paid} of 160 left;" in line
    assert paid < 160
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        assert cache.count() == paid
