"""The typed run log (issue 26 §3): every benchmark's ``summary.json`` holds one, it matches the
published JSON Schema, and older and newer files are read or refused in one line."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any

import pytest

from locomo_exp.benchmarks.registry import plugin_for, run_log_of
from locomo_exp.results.run import SCHEMA_VERSION
from locomo_exp.results.run_log import (
    RUN_LOG_VERSION,
    RunLog,
    check_version,
    read_run_log,
    run_log_schema,
    schema_text,
)
from tests.conftest import EXAMPLE, PROJECT_ROOT, SHARED_DATA, run_job

SCHEMA_FILE = PROJECT_ROOT / "docs" / "run_log.schema.json"
LME = SHARED_DATA / "longmemeval"


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]


def _validated(out: Path) -> tuple[dict[str, Any], RunLog]:
    """The run's summary.json and its log, validated by the published schema's model."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["schema_version"] == RUN_LOG_VERSION
    log = RunLog.model_validate_json(json.dumps(summary["run_log"]), strict=True)
    assert log.to_json() == summary["run_log"]  # nothing dropped or added on the way
    return summary, log


def test_the_published_schema_is_the_models() -> None:
    """``docs/run_log.schema.json`` is regenerated with LOCOMO_UPDATE_SCHEMA=1 (docs/run_log.md)."""
    if os.environ.get("LOCOMO_UPDATE_SCHEMA"):
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    published = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert published == run_log_schema(), (
        "docs/run_log.schema.json is stale: LOCOMO_UPDATE_SCHEMA=1 .venv/bin/python -m pytest "
        "tests/results/test_run_log.py -k published"
    )
    assert published["properties"]["schema_version"]["const"] == RUN_LOG_VERSION


def test_the_summary_version_is_the_run_log_version() -> None:
    assert SCHEMA_VERSION == RUN_LOG_VERSION == 2


def test_locomo_example_run_log_copies_the_scores(tmp_path: Path) -> None:
    run_job(tmp_path, path=EXAMPLE)
    summary, log = _validated(tmp_path / "out")
    rows = _rows(tmp_path / "out")
    f1 = [row["f1"] for row in rows]
    assert log.benchmark == "locomo" and log.spec.scorer == "f1" and log.judge is None
    assert log.input.records == 20 and log.input.format == "qa_results"
    overall = log.metrics["f1"].groups["overall"]
    assert overall.n == 20 and overall.value == pytest.approx(statistics.fmean(f1), abs=1e-12)
    cat3 = [row["f1"] for row in rows if row["category"] == 3]
    assert log.metrics["f1"].groups["3"].value == pytest.approx(statistics.fmean(cat3), abs=1e-12)
    assert log.metrics["f1"].unit == "0-1"
    (figure,) = log.headline
    assert figure.name == "f1/overall" and figure.unit == "0-100"
    assert figure.value == pytest.approx(100 * statistics.fmean(f1), abs=1e-9)
    low, high = summary["analysis"]["bootstrap"]["f1"]["overall"]
    assert (figure.ci_low, figure.ci_high) == pytest.approx((100 * low, 100 * high))
    assert figure.ci_low < figure.value < figure.ci_high


def _plugin_run(typed_config: Any, tmp_path: Path, *overrides: str) -> Path:
    cfg = typed_config("tracking=none", *overrides)
    plugin = plugin_for(cfg, tmp_path)
    assert plugin is not None
    plugin.run(cfg, tmp_path / "out", tmp_path)
    return tmp_path / "out"


@pytest.mark.usefixtures("shared_data")
def test_beam_run_log_of_the_mem0_file(typed_config: Any, tmp_path: Path) -> None:
    out = _plugin_run(typed_config, tmp_path, f"data.path={SHARED_DATA / 'beam/beam_10m_results.json'}")
    _, log = _validated(out)
    rows = _rows(out)
    passes = [row["beam-nugget"]["pass"] for row in rows]
    assert log.benchmark == "beam" and log.spec.scorer == "stored verdicts"
    assert log.spec.profile == "beam-nugget" and log.judge is None and log.input.records == 200
    head = log.headline_values()
    assert head["beam-nugget/pass_rate/overall"] == pytest.approx(100 * sum(passes) / len(rows))
    assert head["beam-nugget/pass_rate/overall"] == pytest.approx(50.5)  # 101 of 200
    mean = statistics.fmean(row["beam-nugget"]["score"] for row in rows)
    assert head["beam-nugget/avg_score/overall"] == pytest.approx(mean, abs=1e-9)
    assert head["beam-official/mean_of_abilities"] is None  # event ordering not measured
    ability = [r["beam-nugget"]["pass"] for r in rows if r["ability"] == "abstention"]
    group = log.metrics["beam-nugget/pass_rate"].groups["abstention"]
    assert group.n == len(ability) and group.value == pytest.approx(100 * sum(ability) / len(ability))


@pytest.mark.usefixtures("shared_data")
def test_locomo_plus_run_log_of_the_authors_file(typed_config: Any, tmp_path: Path) -> None:
    out = _plugin_run(typed_config, tmp_path,
                      f"data.path={SHARED_DATA / 'locomo_plus/authors_run/judged.json'}")
    _, log = _validated(out)
    rows = _rows(out)
    assert log.benchmark == "locomo_plus" and log.spec.parser == "ours"
    assert log.input.records == len(rows) == 2240
    # every stored verdict is an API error: ours is not measured (None, not 0)
    assert log.headline_values() == {"ours/overall": None, "ours/cognitive": None}
    assert log.metrics["ours"].groups["overall"].n == 0
    authors = statistics.fmean(row["score_authors"] for row in rows)
    assert log.metrics["authors"].groups["overall"].value == pytest.approx(authors) == 1.0
    assert log.warnings == ["2,240 of 2,240 stored verdicts are API errors; accuracy not measured"]


@pytest.mark.usefixtures("shared_data")
def test_longmemeval_run_log_of_the_memory_agents_file(typed_config: Any, tmp_path: Path) -> None:
    out = _plugin_run(
        typed_config, tmp_path, "benchmark=longmemeval",
        f"data.path={LME / 'memory-agents/my_predictions.jsonl.eval-results-gpt-4o'}",
        f"data.reference={LME / 'longmemeval_reference.json'}",
    )
    _, log = _validated(out)
    rows = _rows(out)
    labels = [bool(row["stored_label"]) for row in rows]
    assert log.benchmark == "longmemeval" and log.input.records == 500
    head = log.headline_values()
    assert head["lme_stored/overall"] == pytest.approx(100 * sum(labels) / len(labels))
    assert head["lme_stored/overall"] == pytest.approx(72.4)  # 362 of 500, the file's summary
    abst = [bool(r["stored_label"]) for r in rows if r["abstention"]]
    assert head["lme_stored/abstention"] == pytest.approx(100 * sum(abst) / len(abst))
    multi = [bool(r["stored_label"]) for r in rows if r["question_type"] == "multi-session"]
    group = log.metrics["lme_stored"].groups["multi-session"]
    assert (group.n, group.value) == (len(multi), pytest.approx(sum(multi) / len(multi)))


def test_a_newer_summary_is_refused_in_one_line_naming_the_file_and_version() -> None:
    with pytest.raises(ValueError) as caught:
        run_log_of({"schema_version": 3, "run_log": {}}, "runs/a/summary.json")
    message = str(caught.value)
    assert message == ("runs/a/summary.json: summary.json schema_version 3 is newer than this "
                       "locomo_exp reads (2); upgrade locomo_exp")
    with pytest.raises(ValueError, match=r"^x.json: schema_version 'two' is not a version"):
        check_version({"schema_version": "two"}, "x.json")


def test_a_version_2_summary_without_its_log_or_with_a_bad_field_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^s.json: summary.json schema_version 2 has no run_log"):
        read_run_log({"schema_version": 2}, "s.json")
    section = {"benchmark": "beam", "title": "BEAM", "spec": {"scorer": "f1"},
               "input": {"path": "p", "sha256": "0", "format": "f", "records": -1},
               "metrics": {}, "headline": []}
    with pytest.raises(ValueError) as caught:
        read_run_log({"schema_version": 2, "run_log": section}, "s.json")
    assert str(caught.value).startswith("s.json: run_log.input.records: ")
    assert "\n" not in str(caught.value)


def test_a_version_1_locomo_summary_is_read_by_rebuilding_its_log(tmp_path: Path) -> None:
    """A run written before the log (schema 1: no ``run_log``) reads as the same log."""
    run_job(tmp_path, path=EXAMPLE)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    written = summary.pop("run_log")
    summary["schema_version"] = 1
    assert run_log_of(summary, "old/summary.json").to_json() == written


@pytest.mark.usefixtures("shared_data")
@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param((f"data.path={SHARED_DATA / 'beam/beam_10m_results.json'}",), id="beam"),
        pytest.param((f"data.path={SHARED_DATA / 'locomo_plus/authors_run/judged.json'}",),
                     id="locomo_plus"),
        pytest.param(("benchmark=longmemeval",
                      f"data.path={LME / 'memory-agents/my_predictions.jsonl.eval-results-gpt-4o'}",
                      f"data.reference={LME / 'longmemeval_reference.json'}"), id="longmemeval"),
    ],
)
def test_a_version_1_plugin_summary_is_read_by_rebuilding_its_log(
    typed_config: Any, tmp_path: Path, overrides: tuple[str, ...]
) -> None:
    out = _plugin_run(typed_config, tmp_path, *overrides)
    summary = json.loads((out / "summary.json").read_text())
    written = summary.pop("run_log")
    summary["schema_version"] = 1
    assert run_log_of(summary, "old/summary.json").to_json() == written
    del summary["input"]
    with pytest.raises(ValueError, match=r"^old/summary.json: summary.json schema_version 1 of "):
        run_log_of(summary, "old/summary.json")


def test_a_judged_locomo_run_logs_the_calls_tokens_and_cost_and_a_cached_rerun_pays_nothing(
    fake_anthropic: Any, run_judged: Any,
) -> None:
    from fake_anthropic import accept_all

    fake_anthropic.responder = accept_all()
    args = ("scorer=both", "data=example", "judge.runs=2", "judge.audit.n=0")
    first = run_judged(*args, out="first")
    summary, log = _validated(first.output_dir)
    judge = summary["judge"]
    assert log.spec.scorer == "both" and log.spec.judge_runs == 2
    assert log.spec.judge_model == judge["model"] and log.spec.judge_protocol == judge["protocol"]
    assert log.judge is not None and log.judge.status == "ok"
    requests = len(fake_anthropic.messages_requests())
    assert log.judge.calls == judge["counts"]["calls_made"] == requests == 32  # 16 of categories 1-4, x 2 runs
    assert (log.judge.parse_failures, log.judge.api_errors) == (0, 0)
    assert (log.judge.input_tokens, log.judge.output_tokens) == (
        judge["tokens"]["input"], judge["tokens"]["output"])
    assert log.judge.cost_usd == judge["trust"]["total_cost_usd"] > 0
    j = [row["j_mean"] for row in _rows(first.output_dir) if row["category"] != 5]
    head = log.headline_values()
    assert head["j/overall"] == pytest.approx(statistics.fmean(j)) == 100.0  # every reply accepts
    assert list(head) == ["j/overall", "f1/overall"]
    again = run_judged(*args, out="again")  # every call answered from the cache
    _, cached = _validated(again.output_dir)
    assert cached.judge is not None and cached.judge.calls == 0 and cached.judge.cost_usd == 0.0
    assert cached.judge.cost_in_all_usd == pytest.approx(log.judge.cost_usd, abs=1e-6)
    assert cached.judge.input_tokens_in_all == log.judge.input_tokens


def test_a_judged_longmemeval_run_logs_its_judge_and_headline_from_the_judges_verdicts(
    typed_config: Any, fake_anthropic: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fake_anthropic import judged_item, text
    from lme_helpers import dataset_item, write_json, write_jsonl

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-fake")
    types = ("single-session-user", "multi-session")
    ref = write_json(tmp_path / "ref.json",
                     [dataset_item(f"q{i}", types[i % 2], answer=f"a{i}") for i in range(6)])
    hyp = write_jsonl(tmp_path / "h.jsonl", [
        {"question_id": f"q{i}", "hypothesis": "good" if i < 4 else "bad"} for i in range(6)])
    fake_anthropic.responder = lambda r: text("yes" if judged_item(r).prediction == "good"
                                              else "no")
    out = _plugin_run(typed_config, tmp_path, "data=file", "benchmark=longmemeval",
                      "scorer=judge", f"data.path={hyp}", f"data.reference={ref}",
                      f"judge.base_url={fake_anthropic.url}", "judge.progress=false",
                      "judge.audit.n=0", f"judge.cache_path={tmp_path}/cache.sqlite")
    summary, log = _validated(out)
    settings = summary["judge"]["settings"]
    assert log.spec.scorer == "judge" and log.spec.judge_model == settings["model"]
    assert log.judge is not None
    assert log.judge.calls == len(fake_anthropic.messages_requests()) == 6
    assert (log.judge.input_tokens, log.judge.cost_usd) == (
        settings["tokens"]["input"], settings["estimated_cost_usd"])
    head = log.headline_values()
    assert head["lme_j/overall"] == pytest.approx(100 * 4 / 6)  # q0-q3 judged correct
    assert log.metrics["lme_j"].groups["multi-session"].value == pytest.approx(2 / 3)  # q1, q3, q5
