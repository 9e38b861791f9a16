"""The pipeline's contract, over every registered benchmark (LongMemEval, BEAM, LoCoMo-Plus,
LoCoMo) and tinybench.

Each benchmark gets the same tests on a small sample (:mod:`contract_cases`): the plain job,
a judged run against the fake OpenAI server (requests = the units the dry run planned), the
dry run (no request), batch = realtime, a re-run that pays nothing, a resume after Ctrl-C
that pays no unit twice, MLflow names, and the refusals (a bad record: one line, nothing
written; ``judge.max_cost_usd`` before an earlier run is touched; an overwrite that keeps the
earlier run until the new one is complete). Where a benchmark differs on purpose, its case
says so (:class:`contract_cases.Case`: LoCoMo's ``records_first`` record before the judge).
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from contract_cases import CASES, TINY_DIR, Case, with_tinybench
from fake_openai import FakeOpenAIServer
from fake_server import RecordedRequest, Reply

from locomo_exp.benchmarks import registry
from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin, run_job
from locomo_exp.benchmarks.steps import JobResult, JobSteps
from locomo_exp.llm.errors import JudgeError, JudgeInterrupted
from locomo_exp.report.run_swap import OLD_DIR, STAGE_DIR
from locomo_exp.tracking.names import is_secret_key, metric_name

OUTPUTS = ["card.json", "config.yaml", "report.md", "scores.jsonl", "summary.json"]


@pytest.fixture(autouse=True)
def tinybench(monkeypatch: pytest.MonkeyPatch) -> None:
    """tinybench registered: its package on sys.path and its one registry line."""
    monkeypatch.syspath_prepend(str(TINY_DIR))
    monkeypatch.setattr(registry, "PLUGINS", with_tinybench(registry.PLUGINS))


@pytest.fixture(params=CASES, ids=lambda case: case.name)
def case(request: pytest.FixtureRequest) -> Case:
    chosen: Case = request.param
    if chosen.needs_shared is not None and not chosen.needs_shared.is_file():
        pytest.skip(f"{chosen.needs_shared} not found (the read-only shared/ folder)")
    return chosen


class Bench:
    """One case's runs in tmp_path, against the fake OpenAI server."""

    def __init__(self, case: Case, typed_config: Any, tmp_path: Path,
                 server: FakeOpenAIServer) -> None:
        self.case, self.typed_config, self.tmp, self.server = case, typed_config, tmp_path, server
        self.data = case.sample(tmp_path / f"{case.name}.json")
        plugin = registry.get_plugin(case.name)
        assert isinstance(plugin, PipelinePlugin)
        self.plugin = plugin
        server.responder = case.reply

    def cfg(self, *overrides: str, judged: bool = False, cache: str = "cache") -> Any:
        judge = (*self.case.judge, "scorer=judge", f"judge.base_url={self.server.base_url}",
                 f"judge.cache_path={self.tmp / cache}.sqlite", "judge.progress=false",
                 "judge.retry_initial_backoff_s=0.001", "judge.retry_max_backoff_s=0.01",
                 ) if judged else ()
        return self.typed_config("data=file", f"data.path={self.data}", "tracking=none",
                                 "report.bootstrap_samples=50", *self.case.overrides(self.data),
                                 *judge, *overrides)

    def run(self, *overrides: str, out: str = "out", judged: bool = False,
            cache: str = "cache") -> JobResult:
        cfg = self.cfg(*overrides, judged=judged, cache=cache)
        return run_job(self.plugin.steps(), cfg, self.tmp / out, self.tmp)

    def planned(self) -> int:
        """The calls the dry run plans (no request made)."""
        dry = self.run("judge.dry_run=true", out="dry", judged=True)
        estimate = dry.summary["judge"].get("dry_run") or dry.summary["judge"]["dry_run_estimate"]
        return int(estimate.get("total_calls_to_make", estimate["calls_to_make"]))


@pytest.fixture
def bench(case: Case, typed_config: Any, tmp_path: Path, fake_openai: FakeOpenAIServer) -> Bench:
    return Bench(case, typed_config, tmp_path, fake_openai)


def _tree(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_the_plain_job_writes_the_five_outputs_and_says_where(bench: Bench) -> None:
    result = bench.run()
    # a benchmark that maps its rows to questions also writes questions.html (every row)
    pages = type(bench.plugin.steps()).question_rows is not JobSteps.question_rows
    expected = sorted(OUTPUTS + ["questions.html"] * pages + list(bench.case.extra_outputs))
    assert sorted(p.name for p in result.files) == expected
    assert sorted(_tree(bench.tmp / "out")) == expected  # nothing else, no stage left
    assert result.console[-1] == f"Report: {bench.tmp / 'out' / 'report.md'}"
    saved = json.loads((bench.tmp / "out" / "summary.json").read_text(encoding="utf-8"))
    assert bench.case.benchmark(saved) == bench.case.name and result.exit_status == 0
    rows = [json.loads(line) for line in
            (bench.tmp / "out" / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(isinstance(row, dict) for row in rows)


def test_tinybench_figures_are_the_mean_of_its_verdicts(case: Case, bench: Bench) -> None:
    if case.name != "tinybench":
        pytest.skip("every registered benchmark's figures are pinned by its own suite")
    rows = json.loads(bench.data.read_text())["tinybench"]
    expected = {kind: sum(r["verdict"] for r in rows if kind in (None, r["kind"]))
                / sum(kind in (None, r["kind"]) for r in rows) for kind in (None, "recall", "update")}
    accuracy = bench.run().summary["accuracy"]
    assert accuracy == {"overall": round(expected[None], 6), "recall": round(expected["recall"], 6),
                        "update": round(expected["update"], 6)}  # 4/5, 2/3, 2/2


def test_a_judged_run_makes_exactly_the_planned_calls_and_a_dry_run_none(bench: Bench) -> None:
    planned = bench.planned()
    assert planned > 0 and bench.server.messages_requests() == []  # the dry run paid nothing
    result = bench.run(judged=True)
    assert len(bench.server.messages_requests()) == planned
    counts = bench.case.judge_run(result.summary)["counts"]
    assert counts["calls_made"] == planned and counts.get("cache_hits", 0) == 0


def test_batch_mode_gives_the_realtime_figures(bench: Bench) -> None:
    realtime = bench.run(judged=True, out="rt")
    batch = bench.run("judge.mode=batch", "judge.batch.poll_interval_s=0.01",
                      "judge.batch.max_poll_interval_s=0.01", judged=True, cache="batch",
                      out="batch")
    assert bench.server.batch_create_requests()  # the Batch API was used
    assert bench.case.judge_run(batch.summary)["mode"] == "batch"
    assert bench.case.figures(batch.summary) == bench.case.figures(realtime.summary)


def test_a_rerun_pays_nothing(bench: Bench) -> None:
    first = bench.run(judged=True, out="one")
    bench.server.clear()
    again = bench.run(judged=True, out="two")
    assert bench.server.requests == []
    assert bench.case.judge_run(again.summary)["counts"]["calls_made"] == 0
    assert bench.case.figures(again.summary) == bench.case.figures(first.summary)


def test_a_rerun_opens_and_probes_its_cache_once(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The existing cache is opened and probed once per job, in the preflight, and that one
    connection serves the spend estimate and the judge (was 4 opens and 4 probes, 5 and 4
    with ``judge.max_cost_usd``: the preflight twice, the estimate, ``run_judge`` twice)."""
    from locomo_exp.llm.cache import JudgeCache, health

    first = bench.run(judged=True, out="one")
    opened: list[JudgeCache] = []
    closed: list[JudgeCache] = []
    probes: list[str] = []
    real_init, real_close, real_probe = JudgeCache.__init__, JudgeCache.close, health._probe

    def counted_init(self: JudgeCache, *args: Any, **kwargs: Any) -> None:
        opened.append(self)
        real_init(self, *args, **kwargs)

    def counted_close(self: JudgeCache) -> None:
        closed.append(self)
        real_close(self)

    def counted_probe(cache: JudgeCache, where: str) -> None:
        probes.append(where)
        real_probe(cache, where)

    monkeypatch.setattr(JudgeCache, "__init__", counted_init)
    monkeypatch.setattr(JudgeCache, "close", counted_close)
    monkeypatch.setattr(health, "_probe", counted_probe)
    for out, cap in (("two", ()), ("three", ("judge.max_cost_usd=100",))):
        bench.server.clear()
        again = bench.run(*cap, judged=True, out=out)
        assert bench.server.requests == []
        assert bench.case.figures(again.summary) == bench.case.figures(first.summary)
        assert (len(opened), len(probes)) == (1, 1), out
        assert closed == opened  # closed once, by the job
        opened.clear(), closed.clear(), probes.clear()
    cache = bench.tmp / "cache.sqlite"  # a corrupt file: still refused before any write
    for name in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (bench.tmp / name).unlink(missing_ok=True)
    cache.write_bytes(cache.read_bytes()[:300] + b"garbage\n")
    with pytest.raises(JudgeError, match="cannot be used as the judge cache"):
        bench.run(judged=True, out="four")
    assert not (bench.tmp / "four").exists() and bench.server.requests == []


def _interrupt_after(n: int, reply: Any) -> Any:
    seen: list[str] = []
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> Reply:
        with lock:
            seen.append(request.prompt)
            if len(seen) == n:  # Ctrl-C while the n-th call is answered
                os.kill(os.getpid(), signal.SIGINT)
        return reply(request)

    return respond


def test_resume_after_ctrl_c_pays_no_unit_twice(bench: Bench) -> None:
    planned = bench.planned()
    bench.server.responder = _interrupt_after(2, bench.case.reply)
    with pytest.raises((JudgeInterrupted, KeyboardInterrupt)):
        bench.run("judge.max_concurrency=1", "judge.drain_s=5", judged=True, out="first")
    bench.server.wait_idle()
    first = [r.prompt for r in bench.server.messages_requests()]
    assert 2 <= len(first) < planned
    if bench.case.records_first:  # the F1 record, its judge status saying it did not finish
        status = json.loads((bench.tmp / "first" / "summary.json").read_text())["status"]
        assert status["judge"].startswith("interrupted"), status
    else:
        assert not (bench.tmp / "first" / "summary.json").exists()  # nothing claims to be done
    bench.server.clear()
    bench.server.responder = bench.case.reply
    done = bench.run("judge.max_concurrency=1", judged=True, out="first")
    second = [r.prompt for r in bench.server.messages_requests()]
    assert sorted(first + second) == sorted(set(first + second))  # no prompt asked twice
    assert len(first) + len(second) == planned
    assert bench.case.judge_run(done.summary)["counts"]["calls_made"] == len(second)


def test_a_bad_record_is_one_line_naming_file_record_and_field(bench: Bench) -> None:
    record, field = bench.case.break_record(bench.data)
    with pytest.raises(ValueError) as refused:
        bench.run(out="bad")
    line = str(refused.value)
    assert "\n" not in line and str(bench.data) in line
    assert f"record {record}" in line and f"'{field}'" in line
    assert not (bench.tmp / "bad").exists() or _tree(bench.tmp / "bad") == {}


def test_the_spend_cap_refuses_before_an_earlier_run_is_touched(bench: Bench) -> None:
    bench.run()
    before = _tree(bench.tmp / "out")
    with pytest.raises(JudgeError, match=r"judge\.max_cost_usd"):
        bench.run("overwrite=true", "judge.max_cost_usd=0.0000001", judged=True)
    assert bench.server.requests == []  # no call paid
    assert _tree(bench.tmp / "out") == before


def test_an_overwrite_keeps_the_earlier_run_until_the_new_one_is_complete(bench: Bench) -> None:
    bench.run()
    before = _tree(bench.tmp / "out")
    bench.server.responder = _interrupt_after(1, bench.case.reply)
    with pytest.raises((JudgeInterrupted, KeyboardInterrupt)):
        bench.run("overwrite=true", "judge.max_concurrency=1", "judge.drain_s=5", judged=True)
    bench.server.wait_idle()
    assert _tree(bench.tmp / "out") == before  # Ctrl-C: the earlier run as it was
    bench.server.responder = bench.case.reply
    replaced = bench.run("overwrite=true", judged=True)
    assert not (bench.tmp / "out" / STAGE_DIR).exists()
    assert not (bench.tmp / "out" / OLD_DIR).exists()
    assert _tree(bench.tmp / "out") != before
    assert replaced.files == [bench.tmp / "out" / p.name for p in replaced.files]
    saved = json.loads((bench.tmp / "out" / "summary.json").read_text(encoding="utf-8"))
    assert bench.case.figures(saved) == json.loads(json.dumps(bench.case.figures(replaced.summary)))


def test_mlflow_logs_the_jobs_metrics_under_legal_names(bench: Bench) -> None:
    import mlflow

    store = f"sqlite:///{bench.tmp / 'mlflow.db'}"
    result = bench.run("tracking=mlflow", f"tracking.uri={store}", judged=True)
    run = mlflow.MlflowClient(store).get_run(result.run_id)
    logged = bench.case.logged_metrics(result.metrics)
    assert run.data.metrics == pytest.approx(logged) and logged
    for name in [*run.data.metrics, *run.data.params]:
        assert metric_name(name) == name and not is_secret_key(name)
    assert run.data.tags.get("benchmark") == (bench.case.name if bench.case.benchmark_tag else None)
    named = bench.case.run_name
    assert run.info.run_name == (named(bench.data) if named else
                                 f"{bench.data.stem} · {bench.case.name}")
    artifacts = {a.path for a in mlflow.MlflowClient(store).list_artifacts(result.run_id)}
    assert set(OUTPUTS) <= artifacts
    assert "sk-" not in json.dumps(run.data.params)  # no key in the params


def test_mode_compare_pairs_two_runs(case: Case, bench: Bench) -> None:
    stored, judged = bench.run(out="a"), bench.run(judged=True, out="b")
    cfg = bench.typed_config("mode=compare", f"compare.runs=[{stored.output_dir},"
                             f"{judged.output_dir}]", "tracking=none")
    plugin = registry.compare_plugin_for(cfg, bench.tmp)
    assert plugin is not None and plugin.name == case.name  # type: ignore[attr-defined]
    done = plugin.compare(cfg, bench.tmp / "cmp", bench.tmp)
    written = json.loads((bench.tmp / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert (bench.tmp / "cmp" / "compare.md").is_file() and done.console
    if case.name == "tinybench":  # the pipeline's comparison, checked by hand
        def scores(run: JobResult) -> dict[str, float]:
            lines = (run.output_dir / "scores.jsonl").read_text().splitlines()
            return {r["id"]: r["score"] for r in map(json.loads, lines)}

        a, b = scores(stored), scores(judged)
        diff = sum(b[k] - a[k] for k in a) / len(a) * 100
        overall = written["groups"]["overall"]
        assert overall["n"] == 5 and overall["diff"] == round(diff, 2)
        assert overall["ci"][0] <= overall["diff"] <= overall["ci"][1]
        # 2**5 sign patterns <= compare.permutation_samples: the exact test, enumerated here
        d = [b[k] - a[k] for k in sorted(a)]
        means = [abs(sum(x if (m >> i) & 1 else -x for i, x in enumerate(d))) / len(d)
                 for m in range(2 ** len(d))]
        observed = abs(sum(d)) / len(d)
        assert overall["pvalue"] == pytest.approx(
            sum(m >= observed - 1e-12 for m in means) / len(means))
        assert sorted(written["groups"]) == ["overall", "recall", "update"]


def test_mode_compare_logs_its_metrics_without_reading_compare_json_back(
    case: Case, bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison's MLflow metrics come from what it wrote, handed over (PluginRun.body):
    reading ``compare.json`` is forbidden while it runs, and the metrics are those of the
    file (``plugin_comparison_metrics``), the flips as the console counts them."""
    import mlflow

    from locomo_exp.tracking.compare_run import plugin_comparison_metrics

    stored, judged = bench.run(out="a"), bench.run(judged=True, out="b")
    cfg = bench.typed_config("mode=compare", f"compare.runs=[{stored.output_dir},"
                             f"{judged.output_dir}]", "compare.bootstrap_samples=50",
                             "compare.permutation_samples=50")
    plugin = registry.compare_plugin_for(cfg, bench.tmp)
    if case.name in ("longmemeval", "locomo"):  # each logs its comparison's run itself
        pytest.skip(f"{case.name}'s own comparison logs its MLflow run")
    assert isinstance(plugin, PipelinePlugin)
    real_read_text = Path.read_text

    def no_compare_json(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.name == "compare.json":
            raise AssertionError(f"{self} read back")
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", no_compare_json)
    done = plugin.compare_and_track(cfg, bench.tmp / "cmp", bench.tmp)
    monkeypatch.setattr(Path, "read_text", real_read_text)
    assert done.body is not None
    written = json.loads((bench.tmp / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert done.body == written
    flips = re.search(r"Flipped verdicts b vs a: (\d+) gained, (\d+) lost", done.console)
    assert flips is not None
    expected = plugin_comparison_metrics(
        written, "a", "b", {"gained": int(flips[1]), "lost": int(flips[2])})
    client = mlflow.MlflowClient(os.environ["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name("locomo_exp")
    [run] = client.search_runs([experiment.experiment_id],
                               filter_string="tags.`locomo_exp.kind` = 'compare'")
    assert run.data.metrics == pytest.approx(expected)
    assert len(expected) > 2  # the groups' differences, not only the two flip counts


SWEEP = """
import runpy, sys
sys.path.insert(0, {tiny!r})
from locomo_exp.benchmarks import registry
registry.PLUGINS = (*registry.PLUGINS[:-1], "tinybench", registry.PLUGINS[-1])
sys.argv = ["locomo_exp", *{args!r}]
runpy.run_module("locomo_exp", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_a_sweep_over_two_values_has_one_mlflow_parent(case: Case, bench: Bench) -> None:
    import mlflow
    from conftest import run_python

    store = f"sqlite:///{bench.tmp / 'm.db'}"
    args = ["-m", "data=file", f"data.path={bench.data}", "report.bootstrap_samples=50,60",
            f"tracking.uri={store}", "hydra.sweep.dir=sw", *case.overrides(bench.data)]
    done = run_python(SWEEP.format(tiny=str(TINY_DIR), args=args), cwd=bench.tmp)
    assert done.returncode == 0, done.stderr
    summary = json.loads((bench.tmp / "sw" / "sweep_summary.json").read_text())
    assert (summary["n_jobs"], summary["n_failed"]) == (2, 0)
    assert summary["baseline"]["job"] == 0 and "vs_baseline" in summary["rows"][1]
    client = mlflow.MlflowClient(store)
    runs = client.search_runs([client.get_experiment_by_name("locomo_exp").experiment_id])
    [parent] = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("sweep.role") == "child"]
    assert len(children) == 2 and len(runs) == 3
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert {c.data.tags.get("benchmark") for c in children} == {
        case.name if case.benchmark_tag else None}
    assert any(name.startswith("sweep/") for name in parent.data.metrics)  # the headlines


def test_a_finished_run_without_overwrite_is_refused_before_any_call(bench: Bench) -> None:
    from locomo_exp.report.run_dir import OutputDirInUse

    bench.run()
    before = _tree(bench.tmp / "out")
    with pytest.raises(OutputDirInUse, match="already holds a run"):
        bench.run(judged=True)
    assert bench.server.requests == [] and _tree(bench.tmp / "out") == before


def test_pending_batches_write_nothing_and_the_same_command_collects(
        bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    from locomo_exp.cli.jobs import run_plugin_from_cli

    planned = bench.planned()
    bench.server.batch_processing_s = 3600.0  # still processing until end_batches()
    cfg = bench.cfg("judge.mode=batch", "judge.batch.wait=false", judged=True)
    out = bench.tmp / "pending"
    run_plugin_from_cli(bench.plugin, cfg, out, bench.tmp)  # no SystemExit: exit status 0
    printed = capsys.readouterr().out.splitlines()
    assert "batch" in printed[1].lower()
    if bench.case.records_first:  # the F1 record, its status: the judge's batch is pending
        assert printed[0] == f"F1 outputs: {out}"
        status = json.loads((out / "summary.json").read_text())["status"]
        assert status["judge"].startswith("pending"), status
    else:
        assert printed[0] == f"No outputs yet (no J yet): {out}"
        assert not (out / "summary.json").exists()  # nothing claims a run
    submitted = bench.server.batch_requests_submitted()
    assert 0 < submitted <= planned  # the answers' batch (trust calls follow the verdicts)
    bench.server.end_batches()
    done = run_job(bench.plugin.steps(), cfg, out, bench.tmp)  # the same command collects
    paid = bench.server.batch_requests_submitted() + len(bench.server.messages_requests())
    assert paid == planned  # every unit paid once: none submitted again
    assert bench.case.judge_run(done.summary)["mode"] == "batch"
