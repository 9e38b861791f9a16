"""End to end: ``python -m locomo_exp scorer=both`` judges Zep's 1,540 published answers
through the real SDK against the fake Messages API, logs J to MLflow, and a re-run is free."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import mlflow
import numpy as np
import pytest
from conftest import clean_env, run_cli
from fake_anthropic import FAKE_API_KEY, rubric

pytestmark = pytest.mark.slow

DISTINCT_ANSWERS = 1536
"""Zep's 1,540 answers hold 4 exact repeats (same question, gold answer, prediction and
category): same cache key, so their calls are made once and shared."""


def _verdict(request) -> object:
    # deterministic, varied scores: 0-100 from the prompt's length
    return rubric(len(request.prompt) % 101)


def test_scorer_both_judges_zep_answers_and_logs_j(fake_anthropic, shared_data: Path, tmp_path: Path) -> None:
    fake_anthropic.responder = _verdict
    grades = shared_data / "predictions" / "zep_locomo_grades.json"
    store = f"sqlite:///{tmp_path}/mlflow.db"
    common = [
        "scorer=both", "judge.runs=3", "data=zep", f"data.path={grades}",
        f"tracking.uri={store}", f"judge.cache_path={tmp_path}/judge_cache.sqlite", "judge.progress=false",
        "judge.audit.n=0",  # the calls counted below are the answers' (audit: tests/trust/test_trust_job.py)
    ]
    first = run_cli(*[*common, f"hydra.run.dir={tmp_path}/run1"], cwd=tmp_path, server=fake_anthropic)
    assert first.returncode == 0, first.stderr[-3000:]
    requests = fake_anthropic.messages_requests()
    prompts = Counter(r.prompt for r in requests)  # the prompt is a function of the key
    assert len(prompts) == DISTINCT_ANSWERS and set(prompts.values()) == {3}
    assert len(requests) == DISTINCT_ANSWERS * 3
    assert {r.body["model"] for r in requests} == {"claude-sonnet-4-6"}
    assert {r.body["temperature"] for r in requests} == {0.5}
    assert {r.body["max_tokens"] for r in requests} == {256}
    assert {r.headers["anthropic-version"] for r in requests} == {"2023-06-01"}
    assert "fake-key" not in first.stdout + first.stderr

    rows = [json.loads(line) for line in (tmp_path / "run1" / "scores.jsonl").read_text().splitlines()]
    j_means = [row["j_mean"] for row in rows]
    assert len(j_means) == 1540 and all(m is not None for m in j_means)
    assert "J" in first.stdout  # the console table has a J column

    client = mlflow.MlflowClient(tracking_uri=store)
    [run] = client.search_runs(client.get_experiment_by_name("locomo_exp").experiment_id)
    metrics = run.data.metrics
    assert run.info.status == "FINISHED"
    assert metrics["j/overall"] == pytest.approx(float(np.mean(j_means)))
    assert metrics["judge/api_errors"] == 0
    assert metrics["judge/parse_failures"] == 0
    assert metrics["judge/calls_made"] == DISTINCT_ANSWERS * 3
    assert "j/overall_std_across_runs" in metrics and "j/cat1_multi_hop" in metrics
    assert "f1/overall" in metrics
    assert run.data.params["judge.temperature"] == "0.5"
    report = (tmp_path / "run1" / "report.md").read_text()
    assert "## LLM-as-a-Judge J" in report and "Judge reliability" in report

    # the API key is nowhere: outputs, Hydra's saved configs, the MLflow store and artifacts, the cache
    leaked = [path for path in tmp_path.rglob("*") if path.is_file() and FAKE_API_KEY.encode() in path.read_bytes()]
    assert leaked == []
    assert (tmp_path / "run1" / ".hydra" / "config.yaml").exists()

    # the same job again: every call is in the durable cache, none is made
    fake_anthropic.clear()
    second = run_cli(*[*common, f"hydra.run.dir={tmp_path}/run2"], cwd=tmp_path, server=fake_anthropic)
    assert second.returncode == 0, second.stderr[-3000:]
    assert fake_anthropic.messages_requests() == []
    rows2 = [json.loads(line) for line in (tmp_path / "run2" / "scores.jsonl").read_text().splitlines()]
    assert [row["j_mean"] for row in rows2] == j_means


def test_judge_404_stops_the_job_with_a_failed_run(fake_anthropic, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/mlflow.db"
    result = run_cli(
        "scorer=judge", "judge.model=claude-retired-model-1", "judge.runs=2", f"tracking.uri={store}",
        f"judge.cache_path={tmp_path}/c.sqlite", f"hydra.run.dir={tmp_path}/out", "judge.progress=false",
        cwd=tmp_path, server=fake_anthropic,
    )
    assert result.returncode != 0
    assert "claude-retired-model-1" in result.stderr
    assert len(fake_anthropic.messages_requests()) == 1
    client = mlflow.MlflowClient(tracking_uri=store)
    [run] = client.search_runs(client.get_experiment_by_name("locomo_exp").experiment_id)
    assert run.info.status == "FAILED"
    assert "claude-retired-model-1" in run.data.tags["error"]


def test_missing_api_key_fails_before_any_call(fake_anthropic, tmp_path: Path) -> None:
    result = run_cli(
        "scorer=judge", "tracking=none", f"hydra.run.dir={tmp_path}/out",
        cwd=tmp_path, env=clean_env(ANTHROPIC_BASE_URL=fake_anthropic.url),  # no key
    )
    assert result.returncode != 0
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert fake_anthropic.messages_requests() == []


def test_batch_wait_false_submits_and_exits_then_the_same_command_collects(fake_anthropic, tmp_path: Path) -> None:
    fake_anthropic.responder = _verdict
    fake_anthropic.batch_processing_s = 3600.0  # still processing until ended below
    store = f"sqlite:///{tmp_path}/mlflow.db"
    common = ["scorer=both", "judge.mode=batch", "judge.batch.wait=false", "judge.runs=2",
              "judge.batch.poll_interval_s=0.2", f"tracking.uri={store}",
              f"judge.cache_path={tmp_path}/judge_cache.sqlite", "judge.progress=false",
              "judge.audit.n=0"]  # with wait=false the audit's batch would need one more run
    first = run_cli(*[*common, f"hydra.run.dir={tmp_path}/first"], cwd=tmp_path, server=fake_anthropic)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "same command again" in first.stdout
    assert len(fake_anthropic.batch_create_requests()) == 1
    assert (tmp_path / "first" / "scores.jsonl").exists()  # F1 outputs are written meanwhile
    client = mlflow.MlflowClient(tracking_uri=store)
    experiment = client.get_experiment_by_name("locomo_exp").experiment_id
    [pending] = client.search_runs(experiment)
    assert pending.data.tags["judge.batch_status"] == "pending"
    assert pending.data.params["judge.mode"] == "batch" and "judge.mode" not in pending.data.tags
    assert "f1/overall" in pending.data.metrics and "j/overall" not in pending.data.metrics

    fake_anthropic.end_batches()
    second = run_cli(*[*common, f"hydra.run.dir={tmp_path}/second"], cwd=tmp_path, server=fake_anthropic)
    assert second.returncode == 0, second.stderr[-3000:]
    assert len(fake_anthropic.batch_create_requests()) == 1  # nothing submitted twice
    collected = [r for r in client.search_runs(experiment) if r.info.run_id != pending.info.run_id]
    [done] = collected
    # mode and batch ids are params, not repeated as tags (issue 30 §4)
    assert done.data.params["judge.mode"] == "batch" and "judge.mode" not in done.data.tags
    assert done.data.params["judge.batch_ids"] and "judge.batch_ids" not in done.data.tags
    assert done.data.metrics["judge/api_errors"] == 0
    rows = [json.loads(line) for line in (tmp_path / "second" / "scores.jsonl").read_text().splitlines()]
    assert sum(row.get("j_mean") is not None for row in rows) == 16  # categories 1-4 of the example
