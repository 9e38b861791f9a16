"""A sweep job that fails after paying shows what it paid, never "—" (issue 27 §1, fourth bullet).

Two jobs of one sweep against the fake Messages API, billed at ``BIG`` input tokens per reply:
the first runs under a high cap, the second meets a cap of 2.5 calls' worth and stops after
2 paid calls (``judge.max_concurrency=1`` makes the call it stops at exact). Its tokens, cost
and calls are in its ``sweep_job.json``, in ``sweep_summary.json`` / ``.md`` and on the MLflow
parent (a metric, the table and the description).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, PROJECT_ROOT, Composer, clean_env
from fake_anthropic import FakeAnthropicServer, Reply

from locomo_exp import sweep
from locomo_exp.llm.models import model_price
from locomo_exp.sweep.job_files import JobRecord
from locomo_exp.sweep.summary import build_sweep_summary, render_sweep_summary, summary_row
from locomo_exp.tracking import parent_metrics, sweep_description

BIG = 42_000
"""Input tokens billed per reply (the fake's replies bill 24 output tokens)."""


@pytest.mark.slow
def test_a_job_stopped_at_the_cap_shows_its_paid_cost_in_the_sweep_summary_and_parent(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    import mlflow

    fake_anthropic.responder = lambda request: Reply(input_tokens=BIG)
    price = model_price(typed_config("scorer=judge").judge)
    assert price is not None
    one = (BIG * price["input"] + 24 * price["output"]) / 1e6  # USD of one reply
    low = round(2.5 * one, 4)
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    sweep_dir = tmp_path / "sweep"
    pythonpath = os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "-m", "scorer=judge", "judge.runs=1",
         "judge.max_concurrency=1", "judge.progress=false", "judge.audit.n=0", "judge.cache=false",
         f"data.path={EXAMPLE}", f"tracking.uri={store}", f"hydra.sweep.dir={sweep_dir}",
         f"judge.max_cost_usd=100,{low}"],
        cwd=tmp_path, env=clean_env(fake_anthropic, PYTHONPATH=pythonpath),
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == sweep.EXIT_JOB_FAILED, proc.stderr[-3000:]
    assert len(fake_anthropic.messages_requests()) == 16 + 2  # job 0 whole, job 1 two calls

    paid = {"calls": 2, "input_tokens": 2 * BIG, "output_tokens": 48}
    [record_file] = [p for p in sweep_dir.rglob("sweep_job.json")
                     if json.loads(p.read_text())["job"] == 1]
    recorded = json.loads(record_file.read_text())["paid"]
    assert recorded == {**paid, "cost_usd": pytest.approx(2 * one)}

    summary = json.loads((sweep_dir / sweep.SUMMARY_JSON).read_text())
    done, failed = summary["rows"]
    assert (done["status"], failed["status"]) == (sweep.COMPLETED, sweep.FAILED)
    assert done["input_tokens"] == 16 * BIG
    assert (failed["input_tokens"], failed["output_tokens"]) == (2 * BIG, 48)
    assert failed["estimated_cost_usd"] == pytest.approx(2 * one, abs=1e-4)
    assert failed["run_status"] == "FAILED after 2 paid calls"
    assert summary["failed_jobs"][0]["paid"]["calls"] == 2

    words = f"${2 * one:.4f} paid for 2 calls ({2 * BIG} input, 48 output tokens)"
    markdown = (sweep_dir / sweep.SUMMARY_MD).read_text()
    [row] = [line for line in markdown.splitlines() if line.startswith("| 1 |")]
    assert "| FAILED after 2 paid calls |" in row
    assert f"| {2 * BIG} | 48 | {2 * one:.4f} |" in row
    assert f"- job 1 (judge.max_cost_usd={low}) ({words}): judge stopped: spend cap" in markdown

    client = mlflow.MlflowClient(tracking_uri=store)
    experiment = client.get_experiment_by_name("locomo_exp")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    [parent] = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    costs = {k: v for k, v in parent.data.metrics.items() if k.endswith("/estimated_cost_usd")}
    assert sorted(costs.values()) == [pytest.approx(2 * one, abs=1e-4),
                                      pytest.approx(16 * one, abs=1e-4)]
    assert f"FAILED ({words})" in parent.data.tags["mlflow.note.content"]


def _failed_row(paid: dict[str, object] | None) -> dict[str, object]:
    record = JobRecord(job=1, overrides=["judge.max_cost_usd=0.3"], swept={"judge.max_cost_usd": "0.3"},
                       run_name="judge.max_cost_usd=0.3", status=sweep.FAILED, output_dir="/x",
                       error="judge stopped: spend cap $0.30 reached", paid=paid)
    return summary_row(record, None)


def test_a_failed_job_whose_replies_carried_no_usage_reads_unknown_not_a_dash_or_zero() -> None:
    row = _failed_row({"calls": 3, "input_tokens": None, "output_tokens": None, "cost_usd": None})
    context = sweep.SweepContext(name="s", sweep_dir="/s", swept_keys=["judge.max_cost_usd"],
                                 swept_overrides=["judge.max_cost_usd=0.3"])
    summary = build_sweep_summary(context, [row])
    markdown = render_sweep_summary(summary)
    [line] = [line for line in markdown.splitlines() if line.startswith("| 1 |")]
    assert "| FAILED after 3 paid calls |" in line and "| unknown | unknown | unknown |" in line
    assert "(cost unknown paid for 3 calls (tokens unknown))" in markdown
    assert parent_metrics([row]) == {}  # no number to log: unknown is not 0
    assert "FAILED (cost unknown paid for 3 calls (tokens unknown))" in sweep_description(
        {**summary, "baseline": {}})


def test_a_failed_job_that_paid_nothing_keeps_the_dashes() -> None:
    row = _failed_row(None)
    assert row["estimated_cost_usd"] is None and row["run_status"] == sweep.FAILED


def test_a_job_stopped_by_the_judge_error_rate_carries_what_it_paid(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    from locomo_exp.experiment import JudgeErrorRateExceeded, run_experiment
    from locomo_exp.judge.spend import paid_of

    fake_anthropic.responder = lambda request: Reply(text="no verdict here", input_tokens=BIG)
    cfg = typed_config("scorer=judge", "judge.runs=1", "judge.progress=false", "judge.audit.n=0",
                       "tracking=none", f"judge.base_url={fake_anthropic.url}",
                       f"judge.cache_path={tmp_path / 'c.sqlite'}", f"data.path={EXAMPLE}")
    with pytest.raises(JudgeErrorRateExceeded) as failed:
        run_experiment(cfg, tmp_path / "out", tmp_path)
    paid = paid_of(failed.value)
    calls = len(fake_anthropic.messages_requests())  # each reply retried once: all billed
    assert paid is not None and paid.calls == calls > 0
    assert paid.input_tokens == calls * BIG
    price = model_price(cfg.judge)
    assert price is not None
    assert paid.cost_usd == pytest.approx(
        (calls * BIG * price["input"] + (paid.output_tokens or 0) * price["output"]) / 1e6)
