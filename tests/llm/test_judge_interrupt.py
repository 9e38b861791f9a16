"""Ctrl-C / SIGTERM during judging: one line, no traceback, MLflow run KILLED, calls in
flight cached, and a re-run pays (almost) nothing twice."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import mlflow
import pytest
from conftest import clean_env
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer
from judge_helpers import query_cache_file

pytestmark = pytest.mark.slow

RUNS = 5
JUDGED = 16  # the example's 20 answers, 16 in categories 1-4
LINE_RE = re.compile(r"^interrupted: (\d+) calls cached; re-run the same command to resume$")


def _command(tmp_path: Path, server: FakeAnthropicServer, run_dir: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "locomo_exp",
        "scorer=judge",
        f"judge.runs={RUNS}",
        "judge.max_concurrency=8",
        f"judge.base_url={server.url}",
        f"judge.cache_path={tmp_path}/judge_cache.sqlite",
        f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
        "judge.progress=false",
        "judge.audit.n=0",
        f"hydra.run.dir={tmp_path}/{run_dir}",
    ]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_mid_run_caches_calls_in_flight_and_ends_the_run_killed(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, signum: int
) -> None:
    fake_anthropic.latency_s = 0.3
    proc = subprocess.Popen(
        _command(tmp_path, fake_anthropic, "run1"),
        cwd=tmp_path,
        env=clean_env(ANTHROPIC_API_KEY=FAKE_API_KEY),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(fake_anthropic.messages_requests()) < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=300)
    fake_anthropic.wait_idle()

    assert proc.returncode == 128 + signum, stderr[-3000:]
    assert "Traceback" not in stdout + stderr
    # MLflow announces the creation of a new store on stderr; everything else is ours
    lines = [
        line for line in stderr.strip().splitlines() if "INFO mlflow.store.db.utils" not in line
    ]
    assert len(lines) == 1, stderr
    match = LINE_RE.match(lines[0])
    assert match, lines[0]
    cached = int(match.group(1))
    db = tmp_path / "judge_cache.sqlite"
    assert query_cache_file(db, "SELECT COUNT(*) FROM judge_calls") == [(cached,)]
    first_requests = len(fake_anthropic.messages_requests())
    assert cached == first_requests  # every call sent was waited for and cached
    assert 20 <= cached < JUDGED * RUNS

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    [experiment] = [e for e in client.search_experiments() if e.name == "locomo_exp"]
    [run] = client.search_runs([experiment.experiment_id])
    assert run.info.status == "KILLED"

    # re-run: only what was not cached is paid for
    fake_anthropic.latency_s = 0.0
    again = subprocess.run(
        _command(tmp_path, fake_anthropic, "run2"),
        cwd=tmp_path,
        env=clean_env(ANTHROPIC_API_KEY=FAKE_API_KEY),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    prompts = Counter(r.prompt for r in fake_anthropic.messages_requests())
    assert len(prompts) == JUDGED
    duplicates = sum(count - RUNS for count in prompts.values())
    print(f"duplicate paid calls after {signal.Signals(signum).name}: {duplicates}")
    assert duplicates <= 2
