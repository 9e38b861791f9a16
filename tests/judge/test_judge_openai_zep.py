"""Issue 16 §3: Zep's 1,540 answers judged by ``judge=gpt-4o-mini`` with a template, through
the CLI, against a fake Chat Completions / Batch API replaying Zep's stored ``grade``.

Zep's published J (zep-papers README): 74.11 / 66.04 / 67.71 / 79.79, overall 75.13.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT
from fake_anthropic import Reply, text
from fake_openai import FAKE_OPENAI_KEY, FakeOpenAIServer, oa_rate_limited, oa_server_error

pytestmark = pytest.mark.slow

DISTINCT_ANSWERS = 1536
"""Zep's 1,540 answers hold 4 exact repeats (one cache key each, judged once)."""

PUBLISHED = {"1": 74.11, "2": 66.04, "3": 67.71, "4": 79.79, "overall": 75.13}

USER = """\
Question: {question}
Reference answer: {gold_answer}
Generated answer: {generated_answer}
Is the generated answer right? Reply with a JSON object whose key "label" is CORRECT or WRONG.
"""

TEMPLATE = (
    "name: test-zep-replay\n"
    'version: "1"\n'
    "user: |\n" + "".join(f"  {line}\n" for line in USER.splitlines()) + (
        "fields: {generated_answer: predicted_answer}\n"
        "response_format: json_object\n"
        "json_key: label\n"
        "labels: {CORRECT: 100, WRONG: 0}\n"
        "escape_untrusted: false\n"
        "temperature: 0\n"
        "max_tokens: 32\n"
    )
)


def _expected_prompts(grades_path: Path) -> dict[str, bool]:
    """The user message of each answer, filled here by hand, -> Zep's stored grade."""
    data = json.loads(grades_path.read_text())
    out: dict[str, bool] = {}
    for rows in data.values():
        for row in rows:
            filled = USER.format(
                question=row["question"],
                gold_answer=str(row["golden_answer"]),
                generated_answer=row["answer"],
            )
            out[filled] = bool(row["grade"])
    return out


def _replay(prompts: dict[str, bool]):  # type: ignore[no-untyped-def]
    def respond(request) -> Reply:  # type: ignore[no-untyped-def]
        grade = prompts[request.prompt]  # KeyError -> 500 would show as a retry/api error
        return text(json.dumps({"label": "CORRECT" if grade else "WRONG"}))

    return respond


def _command(grades: Path, tmp_path: Path, run: str, *extra: str) -> list[str]:
    template = tmp_path / "zep_template.yaml"
    template.write_text(TEMPLATE, encoding="utf-8")
    return [
        sys.executable, "-m", "locomo_exp", "scorer=judge", "judge=gpt-4o-mini",
        "judge.protocol=template", f"judge.template={template}", "judge.runs=1",
        f"data.path={grades}", "tracking=none", "judge.progress=false", "judge.audit.n=0",
        f"judge.cache_path={tmp_path}/cache.sqlite", f"hydra.run.dir={tmp_path}/{run}", *extra,
    ]


def _rerun_in(cmd: list[str], run_dir: Path) -> list[str]:
    """The same command writing to another run directory."""
    return [a if not a.startswith("hydra.run.dir=") else f"hydra.run.dir={run_dir}" for a in cmd]


def _env(server: FakeOpenAIServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "OPENAI_"))}
    env.update(OPENAI_API_KEY=FAKE_OPENAI_KEY, OPENAI_BASE_URL=server.base_url)
    return env


def _run(cmd: list[str], server: FakeOpenAIServer) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=PROJECT_ROOT, env=_env(server), capture_output=True, text=True, timeout=600
    )


def _j(tmp_path: Path, run: str) -> dict[str, float]:
    summary = json.loads((tmp_path / run / "summary.json").read_text())
    groups = summary["judge"]["j"]
    return {k: round(groups[k]["mean"], 2) for k in PUBLISHED}


def test_zep_replay_through_gpt_4o_mini_template_gives_the_published_j(
    fake_openai: FakeOpenAIServer, shared_data: Path, tmp_path: Path
) -> None:
    grades = shared_data / "predictions" / "zep_locomo_grades.json"
    prompts = _expected_prompts(grades)
    fake_openai.responder = _replay(prompts)
    first = _run(_command(grades, tmp_path, "rt"), fake_openai)
    assert first.returncode == 0, first.stderr[-3000:]
    assert _j(tmp_path, "rt") == PUBLISHED
    requests = fake_openai.messages_requests()
    assert len(requests) == DISTINCT_ANSWERS
    assert {r.prompt for r in requests} == set(prompts)  # byte-equal user messages
    assert {r.body["model"] for r in requests} == {"gpt-4o-mini-2024-07-18"}
    assert {r.body["temperature"] for r in requests} == {0}
    assert {r.body["response_format"]["type"] for r in requests} == {"json_object"}
    summary = json.loads((tmp_path / "rt" / "summary.json").read_text())["judge"]
    assert (summary["provider"], summary["model_snapshot"]) == ("openai", "gpt-4o-mini-2024-07-18")
    assert FAKE_OPENAI_KEY not in first.stdout + first.stderr

    # the same in batch mode (own cache) -> the same J; then an identical run makes 0 requests
    fake_openai.clear()
    (tmp_path / "b").mkdir()
    batch = _command(grades, tmp_path / "b", "batch", "judge.mode=batch",
                     "judge.batch.poll_interval_s=0.05", "judge.batch.max_poll_interval_s=0.05")
    second = _run(batch, fake_openai)
    assert second.returncode == 0, second.stderr[-3000:]
    assert _j(tmp_path / "b", "batch") == PUBLISHED
    assert len(fake_openai.batch_create_requests()) == 1
    assert fake_openai.batch_requests_submitted() == DISTINCT_ANSWERS - 1  # + 1 realtime canary
    fake_openai.clear()
    third = _run(_rerun_in(batch, tmp_path / "b" / "again"), fake_openai)
    assert third.returncode == 0, third.stderr[-3000:]
    assert fake_openai.requests == []


def test_zep_replay_with_30_percent_faults_loses_nothing_and_pays_nothing_twice(
    fake_openai: FakeOpenAIServer, shared_data: Path, tmp_path: Path
) -> None:
    grades = shared_data / "predictions" / "zep_locomo_grades.json"
    replay = _replay(_expected_prompts(grades))
    rng = random.Random(7)

    def faulty(request) -> Reply:  # type: ignore[no-untyped-def]
        roll = rng.random()
        if roll < 0.15:
            return oa_rate_limited(0.001)
        if roll < 0.30:
            return oa_server_error()
        return replay(request)

    fake_openai.responder = faulty
    done = _run(
        _command(grades, tmp_path, "rt", "judge.max_retries=20", "judge.retry_initial_backoff_s=0.001",
                 "judge.retry_max_backoff_s=0.01"),
        fake_openai,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert _j(tmp_path, "rt") == PUBLISHED
    faults = fake_openai.status_counts.get(429, 0) + fake_openai.status_counts.get(500, 0)
    assert fake_openai.status_counts[200] == DISTINCT_ANSWERS  # each answer paid once
    assert 0.2 < faults / (faults + DISTINCT_ANSWERS) < 0.4


def test_zep_replay_killed_with_sigkill_and_rerun_pays_at_most_needed_plus_concurrency(
    fake_openai: FakeOpenAIServer, shared_data: Path, tmp_path: Path
) -> None:
    grades = shared_data / "predictions" / "zep_locomo_grades.json"
    fake_openai.responder = _replay(_expected_prompts(grades))
    fake_openai.latency_s = 0.01
    concurrency = 32
    cmd = _command(grades, tmp_path, "killed", f"judge.max_concurrency={concurrency}")
    proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=_env(fake_openai),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(fake_openai.messages_requests()) < 400 and time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it was killed"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    fake_openai.wait_idle()
    paid_before = fake_openai.status_counts.get(200, 0)
    assert 400 <= paid_before < DISTINCT_ANSWERS
    rerun = _run(_rerun_in(cmd, tmp_path / "rerun"), fake_openai)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert _j(tmp_path, "rerun") == PUBLISHED
    paid = fake_openai.status_counts[200]
    print(f"paid calls: {paid} for {DISTINCT_ANSWERS} needed (killed after {paid_before})")
    assert paid <= DISTINCT_ANSWERS + concurrency


def test_outputs_name_provider_model_snapshot_and_endpoint_never_the_key(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    import mlflow

    db = tmp_path / "mlflow.db"
    out = tmp_path / "out"
    proc = _run(
        [sys.executable, "-m", "locomo_exp", "scorer=judge", "data=example", "judge=gpt-4o-mini",
         "judge.runs=1", "judge.min_successful_runs=1", "judge.audit.n=0", "judge.progress=false",
         f"judge.cache_path={tmp_path}/cache.sqlite", f"tracking.uri=sqlite:///{db}",
         f"hydra.run.dir={out}"],
        fake_openai,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (out / "report.md").read_text()
    assert (
        f"Judge API: `openai`, custom endpoint `{fake_openai.base_url}`; answered by "
        "`gpt-4o-mini-2024-07-18`." in report
    )
    assert "- Judge: gpt-4o-mini-2024-07-18, protocol rubric" in report
    assert f"- Judge API: openai, custom endpoint {fake_openai.base_url}" in report
    card = json.loads((out / "card.json").read_text())
    assert (card["judge"]["provider"], card["judge"]["endpoint_kind"]) == ("openai", "custom")
    mlflow.set_tracking_uri(f"sqlite:///{db}")
    (run,) = mlflow.search_runs(search_all_experiments=True, output_format="list")
    params = run.data.params
    assert params["judge.provider"] == "openai"
    assert params["judge.model"] == "gpt-4o-mini-2024-07-18"
    assert params["judge.model_snapshot"] == "gpt-4o-mini-2024-07-18"
    assert params["judge.endpoint"] == fake_openai.base_url
    for path in [*out.rglob("*"), db]:
        if path.is_file():
            assert FAKE_OPENAI_KEY.encode() not in path.read_bytes(), path
