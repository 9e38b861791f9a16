"""A judge job's MLflow run set up on a thread while its calls wait: same run, same errors.

The run is created on a background thread and made active on the job's thread, through
the same steps as a run made at once; a store that cannot be used is one line from
``wait()`` and is handed at once to ``on_failure`` (the judge then stops its calls:
``tests/llm/test_judge_calls_stop.py``); a job's own error wins over the store's. Stores are
SQLite files in ``tmp_path``.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import Composer
from fake_anthropic import FakeAnthropicServer, rubric

from locomo_exp import tracking
from locomo_exp.experiment import run_experiment
from locomo_exp.tracking.pending import PendingRun


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite store for the module (creating one costs seconds of schema migrations)."""
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'mlflow.db'}"


def _client(uri: str) -> Any:
    import mlflow

    return mlflow.MlflowClient(tracking_uri=uri)


def test_the_run_is_created_on_a_thread_with_its_params_and_ends_finished(store: str) -> None:
    threads: list[str] = []
    with tracking.deferred_mlflow_run(
        tracking.RunSpec(
            tracking_uri=store, experiment="deferred", run_name="r", tags={"t": "1"},
            params={"judge.model": "m", "runs": "2"},
        ),
        then=lambda: threads.append(threading.current_thread().name),
    ) as pending:
        pending.start()
        pending.start()  # once
        run = pending.wait()
        assert pending.wait() is run

    assert threads == ["mlflow-run"]
    got = _client(store).get_run(run.info.run_id)
    assert got.info.status == "FINISHED"
    assert got.info.run_name == "r"
    assert got.data.params == {"judge.model": "m", "runs": "2"}
    assert got.data.tags["t"] == "1" and got.data.tags["mlflow.source.type"] == "LOCAL"


def test_a_body_that_never_asks_still_gets_its_run(store: str) -> None:
    with tracking.deferred_mlflow_run(tracking.RunSpec(store, "lazy", "r")):
        pass
    experiment = _client(store).get_experiment_by_name("lazy")
    (run,) = _client(store).search_runs([experiment.experiment_id])
    assert run.info.status == "FINISHED"


@pytest.mark.parametrize(
    ("error", "status"), [(RuntimeError("boom"), "FAILED"), (KeyboardInterrupt(), "KILLED")]
)
def test_a_failing_body_ends_the_run_failed_or_killed(
    store: str, error: BaseException, status: str
) -> None:
    with pytest.raises(type(error)):
        with tracking.deferred_mlflow_run(tracking.RunSpec(store, "failing", status)) as pending:
            pending.start()
            raise error
    experiment = _client(store).get_experiment_by_name("failing")
    (run,) = _client(store).search_runs(
        [experiment.experiment_id], filter_string=f"attributes.run_name = '{status}'"
    )
    assert run.info.status == status
    assert run.data.tags["error"] == f"{type(error).__name__}: {error}"


def test_a_store_that_cannot_be_used_is_one_line_from_wait() -> None:
    with pytest.raises(tracking.TrackingStoreError) as refused:
        with tracking.deferred_mlflow_run(tracking.RunSpec("foo://x", "e", "r")) as pending:
            pending.start()
            pending.wait()
    message = str(refused.value)
    assert message.startswith("tracking.uri=foo://x: MLflow cannot use this store (")
    assert "\n" not in message


def test_the_jobs_own_error_wins_over_the_stores(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), pytest.raises(RuntimeError, match="the judge failed"):
        with tracking.deferred_mlflow_run(tracking.RunSpec("foo://x", "e", "r")) as pending:
            pending.start()
            raise RuntimeError("the judge failed")
    (line,) = [r.getMessage() for r in caplog.records if "MLflow run not recorded" in r.getMessage()]
    assert "tracking.uri=foo://x: MLflow cannot use this store" in line


def test_a_failing_warm_up_is_ignored(store: str) -> None:
    def warm_up() -> None:
        raise ImportError("no such module")

    pending = PendingRun(lambda: "not-a-run", store, warm_up)
    pending.start()
    assert pending._thread is not None
    pending._thread.join()
    assert pending._error is None and pending._run_id == "not-a-run"


def test_a_store_failure_is_handed_to_on_failure_on_the_thread(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the judge stops its calls there (tests/llm/test_judge_calls_stop.py); an error the store's
    # failure caused is the job's one line, so the store's is not logged a second time
    told: list[tuple[str, str]] = []

    def on_failure(error: BaseException) -> None:
        told.append((threading.current_thread().name, str(error)))

    with caplog.at_level(logging.WARNING), pytest.raises(RuntimeError, match="stopped") as raised:
        with tracking.deferred_mlflow_run(
            tracking.RunSpec("foo://x", "e", "r"), on_failure=on_failure
        ) as pending:
            pending.start()
            assert pending._thread is not None
            pending._thread.join()
            raise RuntimeError("stopped") from pending._error
    ((thread, message),) = told
    assert thread == "mlflow-run"
    assert message.startswith("tracking.uri=foo://x: MLflow cannot use this store (")
    assert str(raised.value.__cause__) == message
    assert not [r for r in caplog.records if "MLflow run not recorded" in r.getMessage()]


def test_the_normal_run_logs_its_params_through_the_same_steps(store: str) -> None:
    with tracking.mlflow_run(
        tracking.RunSpec(store, "normal", "n", params={"judge.model": "m"})
    ) as run:
        pass
    got = _client(store).get_run(run.info.run_id)
    assert (got.info.status, got.data.params) == ("FINISHED", {"judge.model": "m"})
    assert got.data.tags["mlflow.source.type"] == "LOCAL"


@pytest.mark.parametrize("long_lived", [False, True])
def test_only_the_clis_own_job_freezes_the_heap(
    tmp_path: Path,
    typed_config: Composer,
    fake_anthropic: FakeAnthropicServer,
    store: str,
    monkeypatch: pytest.MonkeyPatch,
    long_lived: bool,
) -> None:
    # python -m locomo_exp: at the first call and after the MLflow thread's imports;
    # in-process callers (tests, sweeps) never: frozen garbage would stay until exit
    import gc

    frozen: list[str] = []
    monkeypatch.setattr(
        gc, "freeze", lambda: frozen.append(threading.current_thread().name)
    )
    fake_anthropic.responder = lambda request: rubric(80)
    cfg = typed_config(
        f"tracking.uri={store}", "tracking.experiment=frozen", "scorer=judge", "judge.runs=1",
        "judge.progress=false", "judge.audit.n=0", f"judge.base_url={fake_anthropic.url}",
        f"judge.cache_path={tmp_path / 'cache.sqlite'}",
    )
    run_experiment(cfg, tmp_path / "out", tmp_path, long_lived=long_lived)
    assert frozen == (["MainThread", "mlflow-run"] if long_lived else [])
