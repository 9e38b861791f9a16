"""Per-question traces and flip tags read back through a real `mlflow server`'s REST API (issue 30).

One ``mlflow server`` (sqlite store and served artifacts under the module's temporary
directory, 127.0.0.1 only) for the module. Two LoCoMo jobs run in process against it with
``tracking.questions=true`` and ``scorer=both``: A is the shipped example with stored verdicts
(``llm_score``) added, B the same file with a few predictions and their verdicts changed; the
fake Anthropic judge gives each answer its stored verdict with a reason naming the question.
Then ``mode=compare`` of the two run directories tags the flips. Every check reads the server
through its MLflow 3 REST endpoints with urllib and JSON (``POST /api/3.0/mlflow/traces/search``,
``GET /api/3.0/mlflow/traces/get``, ``GET /api/3.0/mlflow/traces/<id>/assessments/<id>``),
never through MLflow's Python client, and compares them with the runs' ``scores.jsonl``,
``compare.json`` and counts made here from the two input files."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import AMBIENT_PREFIXES, CONF_DIR, EXAMPLE, clean_env
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer, JudgedItem, judged_item, rubric
from fake_server import RecordedRequest, Reply
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from locomo_exp.benchmarks.names import registry_name_problems
from locomo_exp.benchmarks.registry import protocols_in_use
from locomo_exp.compare import CompareConfig
from locomo_exp.compare.job import run_compare_job
from locomo_exp.config import register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment

HEALTH_ATTEMPTS = 300
HEALTH_POLL_S = 0.2  # bounded polling: at most 60 s for the server to answer /health
LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""urllib without the environment's proxies: every request goes to 127.0.0.1 itself."""

STORED_A = [0 if index % 3 == 0 else 1 for index in range(20)]
"""Run A's stored verdict per question of the example (1 = correct)."""
GAINED_IN_B = (0, 3)
"""Questions (indices) A got wrong and B right: B's prediction is the gold answer."""
LOST_IN_B = (1, 4, 7)
"""Questions A got right and B wrong: B answers "I don't know"."""


@dataclass
class Server:
    """A running ``mlflow server``: its address and its process."""

    url: str
    process: subprocess.Popen[bytes]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with LOCAL.open(url + "/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``mlflow server`` on a free port of 127.0.0.1; stopped (its process group) at the end."""
    root = tmp_path_factory.mktemp("mlflow_server")
    port = _free_port()
    command = [
        str(Path(sys.executable).with_name("mlflow")), "server", "--host", "127.0.0.1",
        "--port", str(port), "--workers", "1",
        "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination", str(root / "artifacts"),
    ]
    with (root / "server.log").open("wb") as out:
        # no job runner: one process to stop, no huey queue in /dev/shm
        env = clean_env(MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(HEALTH_ATTEMPTS):
            if process.poll() is not None or _answers(url):
                break
            time.sleep(HEALTH_POLL_S)
        log = (root / "server.log").read_text(errors="replace")
        assert process.poll() is None and _answers(url), f"mlflow server did not start:\n{log}"
        yield Server(url, process)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the server's process group (SIGTERM, then SIGKILL after 20 s), once it is gone too."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except ProcessLookupError:  # it had already ended (a failed start)
        process.wait()
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _post(server: Server, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        server.url + path, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    with LOCAL.open(request, timeout=30) as reply:
        return json.loads(reply.read())


def _get(server: Server, path: str) -> Any:
    with LOCAL.open(server.url + path, timeout=30) as reply:
        return json.loads(reply.read())


def _otlp(value: dict[str, Any]) -> Any:
    """An OTLP ``AnyValue`` in its JSON form as a Python value (a kvlist as a dict)."""
    [(kind, inner)] = value.items()
    if kind == "kvlist_value":
        return {item["key"]: _otlp(item["value"]) for item in inner.get("values", [])}
    if kind == "array_value":
        return [_otlp(item) for item in inner.get("values", [])]
    return inner


def _search(server: Server, experiment_id: str, filter_string: str) -> list[dict[str, Any]]:
    """Every trace info the server finds (``POST /api/3.0/mlflow/traces/search``, all pages)."""
    out: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        body: dict[str, Any] = {
            "locations": [{"type": "MLFLOW_EXPERIMENT",
                           "mlflow_experiment": {"experiment_id": experiment_id}}],
            "filter": filter_string, "max_results": 5,  # small pages: the paging is exercised
        }
        if token:
            body["page_token"] = token
        page = _post(server, "/api/3.0/mlflow/traces/search", body)
        out.extend(page.get("traces", []))
        token = page.get("next_page_token")
        if not token:
            return out


def _inputs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run A's and run B's records: the example with stored verdicts, B with a few changed."""
    records = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    a = [dict(record, llm_score=verdict) for record, verdict in zip(records, STORED_A, strict=True)]
    b = [dict(record) for record in a]
    for index in GAINED_IN_B:
        b[index].update(predicted_answer=b[index]["ground_truth"], llm_score=1)
    for index in LOST_IN_B:
        b[index].update(predicted_answer="I don't know", llm_score=0)
    return a, b


def _reason(question_id: str, correct: bool) -> str:
    return f"{question_id}: {'the gold answer' if correct else 'not the gold answer'}"


def _judge(inputs: dict[str, list[dict[str, Any]]]) -> Any:
    """The fake judge: each answer's verdict is its record's stored verdict, with a reason."""
    verdicts = {(r["question"], r["predicted_answer"]): (r["question_id"], bool(r["llm_score"]))
                for records in inputs.values() for r in records}

    def respond(request: RecordedRequest) -> Reply:
        item: JudgedItem = judged_item(request)
        question_id, correct = verdicts[(item.question, item.prediction)]
        return rubric(100 if correct else 0, _reason(question_id, correct))

    return respond


@dataclass
class Logged:
    """The two logged runs and their comparison, as the jobs left them."""

    judge_model: str
    runs: dict[str, Any]  # "a" / "b" -> run_experiment's result
    inputs: dict[str, list[dict[str, Any]]]
    scores: dict[str, list[dict[str, Any]]]  # each run's scores.jsonl rows
    compare: dict[str, Any]  # compare.json


@pytest.fixture(scope="module")
def logged(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Logged]:
    """Jobs A and B (``tracking.questions=true``) and their compare, logged to ``server``."""
    root = tmp_path_factory.mktemp("jobs")
    a, b = _inputs()
    inputs = {"a": a, "b": b}
    runs: dict[str, Any] = {}
    judge = FakeAnthropicServer().start()
    judge.responder = _judge(inputs)
    with pytest.MonkeyPatch.context() as patch, protocols_in_use():
        for name in list(os.environ):
            if name.startswith(AMBIENT_PREFIXES):
                patch.delenv(name)
        patch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
        patch.chdir(root)  # nothing lands in the user's directory
        register_configs()
        GlobalHydra.instance().clear()
        try:
            with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
                for name, records in inputs.items():
                    path = root / f"{name}.json"
                    path.write_text(json.dumps(records), encoding="utf-8")
                    composed = compose(config_name="config", overrides=[
                        f"data.path={path}", "tracking.questions=true",
                        f"tracking.uri={server.url}", "scorer=both", "judge.runs=1",
                        "judge.min_successful_runs=1", "judge.audit.n=0",
                        f"judge.base_url={judge.url}", f"judge.cache_path={root}/cache.sqlite",
                        "judge.progress=false",
                    ])
                    cfg = to_experiment_config(composed, registry_name_problems)
                    runs[name] = run_experiment(cfg, root / name, root)
        finally:
            GlobalHydra.instance().clear()
            judge.stop()
        run_compare_job(
            CompareConfig(runs=[str(root / "a"), str(root / "b")], bootstrap_samples=50,
                          permutation_samples=50),
            root / "cmp", root, tracking_uri=server.url,
        )
    scores = {
        name: [json.loads(line) for line in
               (root / name / "scores.jsonl").read_text(encoding="utf-8").splitlines() if line]
        for name in inputs
    }
    compare = json.loads((root / "cmp" / "compare.json").read_text(encoding="utf-8"))
    yield Logged(cfg.judge.model, runs, inputs, scores, compare)


def _run_traces(server: Server, logged: Logged, name: str) -> dict[str, dict[str, Any]]:
    run = logged.runs[name]
    found = _search(server, run.experiment_id, f"attribute.run_id = '{run.run_id}'")
    return {trace["tags"]["question_id"]: trace for trace in found}


def test_each_run_has_one_trace_per_scored_question(server: Server, logged: Logged) -> None:
    for name in ("a", "b"):
        traces = _run_traces(server, logged, name)
        scored = [row["question_id"] for row in logged.scores[name]]
        expected = [r["question_id"] for r in logged.inputs[name]]
        assert sorted(scored) == sorted(expected) and len(expected) == 20
        assert sorted(traces) == sorted(expected)
        run_id = logged.runs[name].run_id
        assert all(t["trace_metadata"]["mlflow.sourceRun"] == run_id for t in traces.values())


def test_a_trace_has_the_question_the_prediction_and_the_gold_tag(
    server: Server, logged: Logged
) -> None:
    [record] = [r for r in logged.inputs["b"] if r["question_id"] == "ex-1-q04"]
    info = _run_traces(server, logged, "b")["ex-1-q04"]
    assert info["tags"]["gold"] == record["ground_truth"] == "running, climbing"
    assert info["tags"]["kind"] == "multi_hop"
    assert json.loads(info["trace_metadata"]["mlflow.traceInputs"]) == {
        "question_id": "ex-1-q04", "question": record["question"], "kind": "multi_hop"}
    # the whole trace, its root span's attributes in OTLP's JSON form
    trace = _get(server, f"/api/3.0/mlflow/traces/get?trace_id={info['trace_id']}")["trace"]
    [span] = trace["spans"]
    assert span["name"] == "question"
    attributes = {a["key"]: _otlp(a["value"]) for a in span["attributes"]}
    inputs, outputs = attributes["mlflow.spanInputs"], attributes["mlflow.spanOutputs"]
    assert inputs == {"question_id": "ex-1-q04", "question": record["question"],
                      "kind": "multi_hop"}
    assert outputs == record["predicted_answer"] == "running, climbing"  # the gold: gained


def test_assessments_hold_each_rows_f1_judge_verdict_with_reason_and_stored_verdict(
    server: Server, logged: Logged
) -> None:
    for name in ("a", "b"):
        traces = _run_traces(server, logged, name)
        stored = {r["question_id"]: bool(r["llm_score"]) for r in logged.inputs[name]}
        judged = 0
        for row in logged.scores[name]:
            qid = row["question_id"]
            info = traces[qid]
            by_name = {a["assessment_name"]: a for a in info["assessments"]}
            assert by_name["f1"]["feedback"]["value"] == pytest.approx(row["f1"], abs=1e-12)
            assert by_name["f1"]["source"] == {"source_type": "CODE", "source_id": "locomo_exp"}
            verdict = by_name["stored_j"]
            assert verdict["feedback"]["value"] is stored[qid]
            assert verdict["source"] == {"source_type": "LLM_JUDGE", "source_id": "input file"}
            assert "rationale" not in verdict  # the input file gives no reason for its verdicts
            if not row.get("j_runs"):  # category 5 (adversarial) is not judged
                assert "judge" not in by_name
                continue
            judged += 1
            judge = by_name["judge"]
            assert judge["feedback"]["value"] is stored[qid] is (row["j_mean"] == 100.0)
            assert judge["rationale"] == _reason(qid, stored[qid]) == row["j_runs"][0]["explanation"]
            assert judge["source"] == {"source_type": "LLM_JUDGE", "source_id": logged.judge_model}
            # one assessment read alone by its id gives the same verdict and reason
            alone = _get(server, f"/api/3.0/mlflow/traces/{info['trace_id']}/assessments/"
                                 f"{judge['assessment_id']}")["assessment"]
            assert (alone["feedback"]["value"], alone["rationale"]) == (
                stored[qid], _reason(qid, stored[qid]))
        assert judged == 16  # the example's categories 1-4


def test_flip_tags_mark_exactly_compare_jsons_discordant_pairs_in_each_direction(
    server: Server, logged: Logged
) -> None:
    ids = [r["question_id"] for r in logged.inputs["a"]]
    gained_in_b = {ids[i] for i in GAINED_IN_B}
    lost_in_b = {ids[i] for i in LOST_IN_B}
    # McNemar's discordant pairs: (A right and B wrong, B right and A wrong); the judge's
    # verdicts are the stored ones, so both tables count the same pairs
    for metric in ("j", "stored_j"):
        [overall] = [r for r in logged.compare["rows"]
                     if r["metric"] == metric and r["group"] == "overall"]
        assert overall["discordant"] == [len(lost_in_b), len(gained_in_b)] == [3, 2], metric
    for name, gained, lost in (("b", gained_in_b, lost_in_b), ("a", lost_in_b, gained_in_b)):
        run = logged.runs[name]
        flipped = _search(server, run.experiment_id,
                          f"attribute.run_id = '{run.run_id}' AND tag.flipped = 'true'")
        seen = {t["tags"]["question_id"]: t["tags"]["flip"] for t in flipped}
        assert seen == {**dict.fromkeys(gained, "gained"), **dict.fromkeys(lost, "lost")}
        others = [t for q, t in _run_traces(server, logged, name).items() if q not in seen]
        assert len(others) == 20 - 5 and not any("flipped" in t["tags"] for t in others)
