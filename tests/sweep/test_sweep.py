"""Sweeps: ``python -m locomo_exp -m ...`` with one MLflow parent run and a child per job.

Fast unit tests pin the value formatting, the sweep plan and the summary rendering. The
slow ones run real multiruns in subprocesses (basic launcher and joblib) against the fake
Messages API on the 20-answer example (``scorer=both judge.runs=2``: 16 judged
questions, 32 calls a job), and read the result back from the SQLite store and through a
real ``mlflow server``'s REST API.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CONF_DIR, EXAMPLE, PROJECT_ROOT, clean_env
from fake_anthropic import FakeAnthropicServer, RecordedRequest, rubric
from omegaconf import OmegaConf

from locomo_exp import sweep
from locomo_exp.tracking import clean_float_text, format_param

EXPERIMENT = "locomo_exp"
CALLS_PER_JOB = 16 * 2  # categories 1-4 of the example x judge.runs=2
TEMPERATURES = ("0.0", "0.5", "1.0")


# ----------------------------------------------------------------------------- unit


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("0.7000000000000001", "0.7", id="range-noise-up"),
        pytest.param("0.8999999999999999", "0.9", id="range-noise-down"),
        pytest.param("0.30000000000000004", "0.3", id="sum-noise"),
        pytest.param("0.50", "0.50", id="typed-zero-kept"),
        pytest.param("1e-3", "1e-3", id="exponent-kept"),
        pytest.param("0.333333333333333", "0.333333333333333", id="15-digits-kept"),
        pytest.param("claude-sonnet-4-6", "claude-sonnet-4-6", id="string"),
    ],
)
def test_float_noise_is_cleaned_and_typed_values_are_kept(text: str, shown: str) -> None:
    assert clean_float_text(text) == shown
    assert sweep.display_value(text) == shown


def test_params_use_the_same_clean_float_stringification() -> None:
    assert format_param(0.1 + 0.2) == "0.3"
    assert format_param(0.5) == "0.5"
    assert format_param(1.0) == "1.0"


def _master(*task: str, params: Any = None) -> Any:
    return OmegaConf.create(
        {
            "hydra": {
                "overrides": {"task": list(task)},
                "sweeper": {"_target_": sweep.BASIC_SWEEPER, "params": params},
            }
        }
    )


def test_plan_expands_jobs_in_launch_order_and_names_the_sweep_as_typed() -> None:
    plan = sweep.plan_sweep(_master("scorer=both", "judge.temperature=0.0,0.5", "judge.model=a,b"))

    assert plan.swept_keys == ["judge.temperature", "judge.model"]
    assert plan.fixed_overrides == ["scorer=both"]
    assert plan.name == "sweep judge.temperature=0.0,0.5 judge.model=a,b"
    assert plan.jobs is not None and len(plan.jobs) == 4
    assert [sweep.swept_values(job, plan.swept_keys) for job in plan.jobs] == [
        {"judge.temperature": "0.0", "judge.model": "a"},
        {"judge.temperature": "0.0", "judge.model": "b"},
        {"judge.temperature": "0.5", "judge.model": "a"},
        {"judge.temperature": "0.5", "judge.model": "b"},
    ]


def test_range_sweep_values_are_shown_without_float_noise() -> None:
    plan = sweep.plan_sweep(_master("judge.temperature=range(0,1,0.1)"))

    assert plan.jobs is not None
    labels = [sweep.job_label(sweep.swept_values(j, plan.swept_keys)) for j in plan.jobs]
    assert "judge.temperature=0.7" in labels  # Hydra computes 0.7000000000000001
    assert all(len(label) <= len("judge.temperature=0.0") for label in labels)


def _row(job: int, temperature: str, status: str = sweep.COMPLETED, **values: Any) -> dict:
    record = sweep.JobRecord(
        job=job,
        overrides=[f"judge.temperature={temperature}"],
        swept={"judge.temperature": temperature},
        run_name=f"judge.temperature={temperature}",
        status=status,
        output_dir="/x",
        error=None if status == sweep.COMPLETED else "the API returned 404",
        f1_variant="locomo",
    )
    summary = None
    if status == sweep.COMPLETED:
        summary = {
            "counts": {"overall": 20},
            "metrics": {"f1": {"overall": {"mean": values.get("f1", 0.5)}}},
            "judge": {
                "j": {"overall": {"mean": values.get("j", 70.0), "std_across_runs": 1.5}},
                "counts": {"parse_failure": 1, "api_error": 0},
                "tokens": {"input": 100, "output": 10},
                "estimated_cost_usd": 0.001,
            },
        }
    return sweep.summary_row(record, summary)


def test_summary_lists_every_job_and_the_failed_ones_with_their_error() -> None:
    context = sweep.SweepContext(
        name="sweep judge.temperature=0.0,0.5",
        sweep_dir="/s",
        swept_keys=["judge.temperature"],
        swept_overrides=["judge.temperature=0.0,0.5"],
    )
    rows = [_row(0, "0.0"), _row(1, "0.5", status=sweep.FAILED)]

    summary = sweep.build_sweep_summary(context, rows)
    markdown = sweep.render_sweep_summary(summary)

    assert summary["n_jobs"] == 2 and summary["n_failed"] == 1
    assert summary["failed_jobs"] == [
        {"job": 1, "swept": {"judge.temperature": "0.5"}, "error": "the API returned 404"}
    ]
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert len(table) == 3  # header + one row per job
    assert "| 0 | 0.0 | COMPLETED | 50.00 |" in table[1]
    assert "70.00 ± 1.50" in table[1]
    assert "| 1 | 0.5 | FAILED |" in table[2]
    assert "- job 1 (judge.temperature=0.5): the API returned 404" in markdown


def test_plot_needs_exactly_one_numeric_axis(tmp_path: Path) -> None:
    context = sweep.SweepContext("s", str(tmp_path), ["judge.temperature"], [])
    summary = sweep.build_sweep_summary(context, [_row(0, "0.0", j=60.0), _row(1, "0.5", j=80.0)])
    assert sweep.plot_sweep(summary, tmp_path / "plot.png") == tmp_path / "plot.png"
    assert (tmp_path / "plot.png").stat().st_size > 0

    summary["swept_keys"] = ["judge.model"]
    for row in summary["rows"]:
        row["swept"] = {"judge.model": "claude-sonnet-4-6"}
    assert sweep.plot_sweep(summary, tmp_path / "none.png") is None


# ----------------------------------------------------------------------------- subprocess


def _env(server: FakeAnthropicServer) -> dict[str, str]:
    pythonpath = os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    return clean_env(server, PYTHONPATH=pythonpath)


def _sweep(
    server: FakeAnthropicServer, tmp: Path, *overrides: str, timeout: float = 600
) -> tuple[subprocess.CompletedProcess[str], str, Path]:
    """Run ``python -m locomo_exp -m`` on the example; return (process, store URI, sweep dir)."""
    store = f"sqlite:///{tmp / 'mlflow.db'}"
    sweep_dir = tmp / "sweep"
    args = [
        "scorer=both",
        "judge.runs=2",
        "judge.progress=false",
        "judge.audit.n=0",  # counts below are the answers' calls
        f"judge.cache_path={tmp / 'judge_cache.sqlite'}",
        "data=file",
        f"data.path={EXAMPLE}",
        f"tracking.uri={store}",
        f"hydra.sweep.dir={sweep_dir}",
        *overrides,
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "-m", *args],
        check=False,
        cwd=tmp,
        env=_env(server),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc, store, sweep_dir


def _score_by_temperature(request: RecordedRequest) -> Any:
    # a child's J tells which temperature its requests carried: 50 + 40 * temperature
    return rubric(round(50 + 40 * float(request.body.get("temperature", 0.0))))


@pytest.fixture(scope="module")
def server() -> Iterator[FakeAnthropicServer]:
    """One fake Messages API for the module (tests clear it before use)."""
    fake = FakeAnthropicServer().start()
    try:
        yield fake
    finally:
        fake.stop()


def _runs(store: str) -> tuple[Any, list[Any]]:
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=store)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    return client, client.search_runs([experiment.experiment_id], max_results=100)


def _check_temperature_sweep(
    proc: subprocess.CompletedProcess[str],
    store: str,
    sweep_dir: Path,
    requests: list[RecordedRequest],
) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]

    # the server saw each temperature exactly on one job's calls
    temperatures = Counter(r.body["temperature"] for r in requests)
    assert temperatures == {0.0: CALLS_PER_JOB, 0.5: CALLS_PER_JOB, 1.0: CALLS_PER_JOB}

    client, runs = _runs(store)
    parents = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("sweep.role") == "child"]
    assert len(runs) == 4 and len(parents) == 1 and len(children) == 3
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert parent.info.run_name == "sweep judge.temperature=0.0,0.5,1.0"
    assert parent.data.tags["sweep.keys"] == "judge.temperature"
    assert parent.data.tags["sweep.n_failed"] == "0"
    # the parent carries the swept key as a param and, per swept value, the headline metrics
    assert parent.data.params == {"judge.temperature": "0.0, 0.5, 1.0"}
    assert {
        name: value for name, value in parent.data.metrics.items() if name.endswith("/j_overall")
    } == {"sweep/T:0.0/j_overall": 50.0, "sweep/T:0.5/j_overall": 70.0, "sweep/T:1.0/j_overall": 90.0}
    experiment = client.get_experiment(parent.info.experiment_id)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"

    by_temperature = {c.data.tags["judge.temperature"]: c for c in children}
    assert sorted(by_temperature) == sorted(TEMPERATURES)
    for text, child in by_temperature.items():
        assert child.info.status == "FINISHED"
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.info.run_name == f"T={text} · sonnet-4-6 · both"  # swept value first
        assert child.info.experiment_id == parent.info.experiment_id
        assert child.data.params["judge.temperature"] == text
        assert child.data.metrics["j/overall"] == pytest.approx(50 + 40 * float(text))
        assert child.data.metrics["judge/calls_made"] == CALLS_PER_JOB
        # judged categories are 1-4: j/overall_1_4 is J overall; F1 in percent like J
        assert child.data.metrics["j/overall_1_4"] == child.data.metrics["j/overall"]
        assert parent.data.metrics[f"sweep/T:{text}/f1_overall"] == pytest.approx(
            child.data.metrics["f1/overall"]
        )
        assert "locomo_exp.log" in {a.path for a in client.list_artifacts(child.info.run_id)}
    # the compare view lines children up: same metric names, same param keys
    assert len({frozenset(c.data.metrics) for c in children}) == 1
    assert len({frozenset(c.data.params) for c in children}) == 1

    summary = json.loads((sweep_dir / sweep.SUMMARY_JSON).read_text())
    assert [row["swept"]["judge.temperature"] for row in summary["rows"]] == list(TEMPERATURES)
    assert [row["status"] for row in summary["rows"]] == [sweep.COMPLETED] * 3
    assert [row["j_overall"] for row in summary["rows"]] == [50.0, 70.0, 90.0]
    for row, child in zip(summary["rows"], sorted(children, key=lambda c: c.data.tags["judge.temperature"]), strict=True):
        assert child.data.metrics["f1/overall"] == pytest.approx(100 * row["f1"]["overall"])
    assert all(row["input_tokens"] and row["estimated_cost_usd"] for row in summary["rows"])
    markdown = (sweep_dir / sweep.SUMMARY_MD).read_text()
    assert sum(line.startswith("| ") for line in markdown.splitlines()) == 1 + 3
    # each job vs the first (sweep.baseline default): J of every question differs by 20 / 40
    assert summary["baseline"] == {
        "job": 0,
        "label": "judge.temperature=0.0",
        "method": "95% percentile intervals, paired bootstrap resampling conversations (clusters) "
        "and questions: 2000 resamples, seed 0 (each row's stream from the seed, metric and group); "
        "a row's headline interval is the conversation one when it has at least 5 conversations, "
        "else the question-level one",
    }
    assert "vs_baseline" not in summary["rows"][0]
    for row, diff in zip(summary["rows"][1:], (20.0, 40.0), strict=True):
        j = row["vs_baseline"]["j"]
        # the example is one conversation: no cluster interval (issue 18 §2), the interval and
        # verdict are the question-level paired ones (every difference equal: [diff, diff])
        assert (j["diff"], j["ci"], j["verdict"]) == (
            pytest.approx(diff), [pytest.approx(diff), pytest.approx(diff)], "A higher"
        )
        assert j["interval_method"] == "question-level paired bootstrap"
        assert j["note"].startswith("1 conversation: a conversation-cluster interval needs at least 5")
    assert "| J Δ vs base | J 95% CI | J verdict |" in markdown
    assert "| +20.00 | [+20.00, +20.00] (questions) | higher |" in markdown
    assert (sweep_dir / sweep.SUMMARY_PLOT).is_file()
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {sweep.SUMMARY_JSON, sweep.SUMMARY_MD, sweep.SUMMARY_PLOT} <= artifacts
    assert "sweep_summary_table.json" in artifacts  # mlflow.log_table of the summary
    # the plot is also an MLflow image: the parent's chart views show it (issue 30 §4)
    images = [a.path for a in client.list_artifacts(parent.info.run_id, "images")]
    assert sorted(Path(p).suffix for p in images) == [".png", ".webp"], images
    assert all(Path(p).name.startswith("sweep_plot+step+0+") for p in images), images


@pytest.fixture(scope="module")
def basic_sweep(
    server: FakeAnthropicServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[subprocess.CompletedProcess[str], str, Path, list[RecordedRequest]]:
    """Three temperatures with Hydra's basic launcher (run once, read by two tests)."""
    server.clear()
    server.responder = _score_by_temperature
    proc, store, sweep_dir = _sweep(
        server, tmp_path_factory.mktemp("basic"), "judge.temperature=0.0,0.5,1.0"
    )
    return proc, store, sweep_dir, server.messages_requests()


@pytest.mark.slow
def test_basic_launcher_sweep_has_one_parent_and_a_child_per_temperature(basic_sweep) -> None:
    _check_temperature_sweep(*basic_sweep)


@pytest.mark.slow
def test_joblib_sweep_has_one_parent_and_a_child_per_temperature(
    server: FakeAnthropicServer, tmp_path: Path
) -> None:
    server.clear()
    server.responder = _score_by_temperature

    proc, store, sweep_dir = _sweep(
        server,
        tmp_path,
        "judge.temperature=0.0,0.5,1.0",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
    )

    _check_temperature_sweep(proc, store, sweep_dir, server.messages_requests())
    assert "Joblib.Parallel(n_jobs=2" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_submitit_local_launcher_runs_each_job_as_its_own_child_run(
    server: FakeAnthropicServer, tmp_path: Path
) -> None:
    """``hydra/launcher=submitit_local``: the SLURM launcher's local executor (no cluster).

    Each job runs in a process submitit starts; the jobs find the parent run through
    ``sweep_context.json`` exactly as on SLURM nodes sharing the sweep directory.
    """
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    server.clear()
    server.responder = _score_by_temperature

    proc, store, sweep_dir = _sweep(
        server,
        tmp_path,
        "judge.temperature=0.0,1.0",
        "hydra/launcher=submitit_local",
        "hydra.launcher.timeout_min=10",
        timeout=400,
    )

    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Submitit 'local' sweep output dir" in proc.stdout + proc.stderr
    assert (sweep_dir / ".submitit").is_dir()  # submitit's own job folders
    temperatures = Counter(r.body["temperature"] for r in server.messages_requests())
    assert temperatures == {0.0: CALLS_PER_JOB, 1.0: CALLS_PER_JOB}
    _, runs = _runs(store)
    [parent] = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    children = {r.info.run_name: r for r in runs if r.data.tags.get("sweep.role") == "child"}
    assert sorted(children) == ["T=0.0 · sonnet-4-6 · both", "T=1.0 · sonnet-4-6 · both"]
    assert {c.data.tags["mlflow.parentRunId"] for c in children.values()} == {parent.info.run_id}
    assert children["T=1.0 · sonnet-4-6 · both"].data.metrics["j/overall"] == 90.0
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["sweep.launcher"] == "LocalLauncher"
    assert parent.data.metrics["sweep/T:0.0/j_overall"] == 50.0


@pytest.mark.slow
def test_an_invalid_swept_value_stops_the_sweep_before_any_job_or_call(
    server: FakeAnthropicServer, tmp_path: Path
) -> None:
    server.clear()

    proc, _, sweep_dir = _sweep(server, tmp_path, "judge.temperature=0.5,1.5")

    assert proc.returncode == sweep.EXIT_INVALID_SWEEP
    assert "the sweep was not started" in proc.stderr
    assert "job 1 (judge.temperature=1.5)" in proc.stderr and "outside [0, 1]" in proc.stderr
    assert "job 0" not in proc.stderr
    assert "Traceback" not in proc.stderr
    assert server.requests == []
    assert not (tmp_path / "mlflow.db").exists()
    assert not sweep_dir.exists()


@pytest.mark.slow
def test_a_job_with_a_fatal_api_error_fails_alone_and_is_listed(
    server: FakeAnthropicServer, tmp_path: Path
) -> None:
    server.clear()
    server.responder = _score_by_temperature

    proc, store, sweep_dir = _sweep(
        server, tmp_path, "judge.model=claude-sonnet-4-6,claude-nonexistent-9"
    )

    assert proc.returncode == sweep.EXIT_JOB_FAILED
    assert "1 of 2 sweep jobs failed: 1 (judge.model=claude-nonexistent-9)" in proc.stderr
    models = Counter(r.body["model"] for r in server.messages_requests())
    assert models == {"claude-sonnet-4-6": CALLS_PER_JOB, "claude-nonexistent-9": 1}  # canary

    _, runs = _runs(store)
    status = {r.data.tags.get("judge.model"): r.info.status for r in runs}
    assert status == {
        None: "FAILED",  # the parent: a sweep with a failed job
        "claude-sonnet-4-6": "FINISHED",
        "claude-nonexistent-9": "FAILED",
    }
    summary = json.loads((sweep_dir / sweep.SUMMARY_JSON).read_text())
    assert [row["status"] for row in summary["rows"]] == [sweep.COMPLETED, sweep.FAILED]
    assert summary["failed_jobs"][0]["swept"] == {"judge.model": "claude-nonexistent-9"}
    assert "404" in summary["failed_jobs"][0]["error"]
    assert "## Failed jobs" in (sweep_dir / sweep.SUMMARY_MD).read_text()


@pytest.mark.slow
def test_parallel_jobs_judging_the_same_answers_lose_no_call(
    server: FakeAnthropicServer, tmp_path: Path
) -> None:
    """Two joblib jobs judge identical calls (only ``f1.variant`` differs) in one cache.

    What the cache guarantees across processes: nothing is lost (every request sent is
    counted by the job that sent it, every job ends with all its runs valid, and the
    cache holds each call exactly once) and nothing is paid twice: each call is claimed
    in the cache before it is sent, so a call the other job has in flight is waited for
    and read from the cache, not sent again.
    """
    server.clear()
    server.responder = lambda request: rubric(75)

    proc, _, sweep_dir = _sweep(
        server,
        tmp_path,
        "f1.variant=locomo,squad",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
    )

    assert proc.returncode == 0, proc.stderr[-3000:]
    sent = len(server.messages_requests())
    judges = [
        json.loads(path.read_text())["judge"] for path in sorted(sweep_dir.glob("*/summary.json"))
    ]
    assert len(judges) == 2
    for judge in judges:
        assert judge["counts"]["valid"] == CALLS_PER_JOB
        assert judge["counts"]["calls_made"] + judge["counts"]["cache_hits"] == CALLS_PER_JOB
    assert sum(j["counts"]["calls_made"] for j in judges) == sent
    assert sent == CALLS_PER_JOB  # each distinct call sent once, by one of the two jobs
    with sqlite3.connect(tmp_path / "judge_cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0] == CALLS_PER_JOB
        assert db.execute("SELECT COUNT(*) FROM judge_claims").fetchone()[0] == 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _api(base: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture
def mlflow_server(basic_sweep) -> Iterator[str]:
    """A real ``mlflow server`` on 127.0.0.1 over the basic sweep's store; yields its URL."""
    store = basic_sweep[1]
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--backend-store-uri",
            store,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"mlflow server did not start: {stderr[-2000:]}")
            time.sleep(0.25)
        yield base
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.slow
def test_mlflow_server_rest_api_shows_the_sweep_as_logged(basic_sweep, mlflow_server: str) -> None:
    query = urllib.parse.urlencode({"experiment_name": EXPERIMENT})
    experiment = _api(mlflow_server, f"/api/2.0/mlflow/experiments/get-by-name?{query}")
    experiment_id = experiment["experiment"]["experiment_id"]

    found = _api(
        mlflow_server,
        "/api/2.0/mlflow/runs/search",
        {"experiment_ids": [experiment_id], "max_results": 100},
    )["runs"]

    def tags(run: dict) -> dict[str, str]:
        return {t["key"]: t["value"] for t in run["data"].get("tags", [])}

    def metrics(run: dict) -> dict[str, float]:
        return {m["key"]: m["value"] for m in run["data"].get("metrics", [])}

    assert len(found) == 4
    [parent] = [r for r in found if tags(r).get("sweep.role") == "parent"]
    children = [r for r in found if tags(r).get("sweep.role") == "child"]
    parent_id = parent["info"]["run_id"]
    assert parent["info"]["status"] == "FINISHED"
    assert tags(parent)["sweep.keys"] == "judge.temperature"
    assert {tags(c)["mlflow.parentRunId"] for c in children} == {parent_id}
    assert sorted(tags(c)["judge.temperature"] for c in children) == sorted(TEMPERATURES)
    assert sorted(c["info"]["run_name"] for c in children) == [
        f"T={t} · sonnet-4-6 · both" for t in TEMPERATURES
    ]
    # a model-training experiment (the UI's runs table, not the GenAI overview)
    experiment_tags = {t["key"]: t["value"] for t in experiment["experiment"]["tags"]}
    assert experiment_tags["mlflow.experimentKind"] == "custom_model_development"
    assert metrics(parent)["sweep/T:0.5/j_overall"] == 70.0
    assert {p["key"]: p["value"] for p in parent["data"]["params"]} == {
        "judge.temperature": "0.0, 0.5, 1.0"
    }
    for child in children:
        temperature = float(tags(child)["judge.temperature"])
        assert metrics(child)["j/overall"] == pytest.approx(50 + 40 * temperature)
        assert "f1/overall" in metrics(child)
        assert child["info"]["status"] == "FINISHED"

    # the same children through the filter the UI uses for "runs of this parent"
    nested = _api(
        mlflow_server,
        "/api/2.0/mlflow/runs/search",
        {
            "experiment_ids": [experiment_id],
            "filter": f"tags.mlflow.parentRunId = '{parent_id}'",
        },
    )["runs"]
    assert len(nested) == 3


def test_a_job_whose_judge_batches_are_pending_is_not_counted_as_failed(tmp_path: Path) -> None:
    from locomo_exp import sweep

    context = sweep.SweepContext(name="s", sweep_dir=str(tmp_path), swept_keys=["judge.temperature"],
                                 swept_overrides=["judge.temperature=0.0,0.5"])
    records = [
        sweep.JobRecord(job=0, overrides=["judge.temperature=0.0"], swept={"judge.temperature": "0.0"},
                        run_name="judge.temperature=0.0", status=sweep.PENDING, output_dir=str(tmp_path),
                        error="batches still processing; run the same command again"),
        sweep.JobRecord(job=1, overrides=["judge.temperature=0.5"], swept={"judge.temperature": "0.5"},
                        run_name="judge.temperature=0.5", status=sweep.FAILED, output_dir=str(tmp_path),
                        error="boom"),
    ]
    summary = sweep.build_sweep_summary(context, [sweep.summary_row(r, None) for r in records])
    assert (summary["n_failed"], summary["n_pending"]) == (1, 1)
    assert [f["job"] for f in summary["failed_jobs"]] == [1]
    assert "1 with judge batches still processing" in sweep.render_sweep_summary(summary)


def test_a_per_job_cache_path_resolves_with_the_job_number_before_any_job(tmp_path: Path) -> None:
    """``judge.cache_path=.../cache_${hydra:job.num}.sqlite`` (one cache file per SLURM job)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    from locomo_exp.config import register_configs

    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(CONF_DIR)
    ):
        master = compose(config_name="config", return_hydra_config=True)
        before = HydraConfig.instance().cfg
        cfg = sweep.compose_job(
            master, [f"judge.cache_path={tmp_path}/cache_${{hydra:job.num}}.sqlite"], job_num=3
        )
        assert HydraConfig.instance().cfg is before  # the launching process's config is back
    assert cfg.judge.cache_path == f"{tmp_path}/cache_3.sqlite"
