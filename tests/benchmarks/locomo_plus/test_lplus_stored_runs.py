"""Stored LoCoMo-Plus runs read by the plain command with no judge call: kumiho's published
figures come out; the authors' run is 'accuracy not measured', its 1.0 shown as theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA, clean_env, mlflow_runs, run_cli
from fake_openai import FAKE_OPENAI_KEY

from locomo_exp.benchmarks.locomo_plus.job import run_locomo_plus

PLUS = SHARED_DATA / "locomo_plus"
KUMIHO = PLUS / "kumiho" / "all_results.json"
AUTHORS = PLUS / "authors_run" / "judged.json"


@pytest.fixture
def real() -> None:
    if not (KUMIHO.is_file() and AUTHORS.is_file()):
        pytest.skip(f"LoCoMo-Plus runs not found in {PLUS} (read-only shared/ folder)")


def _run(typed_config, tmp_path: Path, path: Path, *overrides: str):
    cfg = typed_config("data=file", f"data.path={path}", "tracking=none", *overrides)
    return run_locomo_plus(cfg, tmp_path / "out", tmp_path)


def test_kumiho_published_figures_come_out(real, typed_config, tmp_path: Path) -> None:
    result = _run(typed_config, tmp_path, KUMIHO)
    ours = result.summary["readings"]["ours"]
    assert ours["overall"] == 0.9327  # published 93.3% (374 / 401)
    assert {r: g["mean"] for r, g in ours["by_relation"].items()} == {
        "causal": 0.9604, "state": 0.96, "goal": 0.85, "value": 0.96}  # 96.0 / 96.0 / 85.0 / 96.0
    assert ours["by_category"]["Cognitive"]["score"] == 374.0
    assert ours["factual"]["item_weighted"] is None  # a Cognitive-only run
    low, high = ours["overall_ci"]
    assert low < 0.9327 < high  # conversations recorded (base_conv_idx): an interval
    console = "\n".join(result.console)
    for text in ("Overall: 0.9327 (93.3%)", "Cognitive/causal: 0.9604 (96.0%)",
                 "Cognitive/goal: 0.8500 (85.0%)", "Cognitive/value: 0.9600 (96.0%)",
                 "Cognitive/state: 0.9600 (96.0%)", "stored J (kumiho"):
        assert text in console
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["schema_version"] == 2 and summary["benchmark"] == "locomo_plus"
    assert summary["verdicts"]["source"] == "stored"
    assert "Overall: 0.9327 (93.3%)" in (out / "report.md").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 401 and sum(r["score"] for r in rows) == 374
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["headline"]["overall"] == 0.9327 and card["parser"] == "ours"


def test_authors_run_is_not_measured_and_their_1_is_shown_as_theirs(
        real, typed_config, tmp_path: Path) -> None:
    result = _run(typed_config, tmp_path, AUTHORS)
    summary = result.summary
    line = "2,240 of 2,240 stored verdicts are API errors; accuracy not measured"
    assert summary["readings"]["ours"]["status"] == line
    assert summary["readings"]["ours"]["overall"] is None
    agg = summary["authors_aggregate"]
    assert (agg["overall_avg"], agg["resting_on_api_errors"], agg["n"]) == (1.0, 2240, 2240)
    assert agg["source"].endswith("judge_summary.json")
    assert summary["readings"]["authors"]["overall"] == 1.0  # their rule, recomputed
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert line in report
    assert "The authors' aggregate: overall_avg 1.0" in report
    assert "resting on 2,240 API errors" in report
    console = "\n".join(result.console)
    assert console.splitlines()[2].strip() == line  # our reading is the headline
    card = json.loads((tmp_path / "out" / "card.json").read_text(encoding="utf-8"))
    assert card["headline"]["overall"] is None


def test_parser_authors_reproduces_their_figures_and_says_what_they_rest_on(
        real, typed_config, tmp_path: Path) -> None:
    result = _run(typed_config, tmp_path, AUTHORS, "judge.parser=authors")
    theirs = result.summary["readings"]["authors"]
    assert theirs["overall"] == 1.0
    assert {c: g["mean"] for c, g in theirs["by_category"].items()} == {
        "multi-hop": 1.0, "temporal": 1.0, "common-sense": 1.0, "single-hop": 1.0,
        "adversarial": 1.0, "Cognitive": 1.0}
    assert {c: g["n"] for c, g in theirs["by_category"].items()} == {
        "multi-hop": 282, "temporal": 321, "common-sense": 96, "single-hop": 841,
        "adversarial": 446, "Cognitive": 254}
    console = "\n".join(result.console)
    assert "judge.parser=authors: 2,240 verdicts derived from API errors" in console
    assert "Caveat: this rests on 2,240 API errors" in console
    assert result.metrics["parser/derived_from_api_errors"] == 2240


def _invented_kumiho(tmp_path: Path, bad_verdict: object = True) -> Path:
    rows = [{"question_id": f"cog-{i}", "question": "I feel tired today.",
             "question_type": "cognitive/state", "ground_truth": "Ann: I slept badly.",
             "prediction": "Maybe the bad sleep?", "judge_score": i % 2 == 0,
             "metadata": {"base_conv_idx": i % 10, "judge_reason": "uses the cue"}}
            for i in range(20)]
    rows[7]["judge_score"] = bad_verdict
    path = tmp_path / "all_results.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_a_bad_verdict_is_one_line_and_nothing_is_written(typed_config, tmp_path: Path) -> None:
    path = _invented_kumiho(tmp_path, bad_verdict="yes")
    with pytest.raises(ValueError) as caught:
        _run(typed_config, tmp_path, path)
    message = str(caught.value)
    assert str(path) in message and "record [7]" in message and "judge_score" in message
    assert not (tmp_path / "out" / "summary.json").exists()


def test_an_unknown_parser_is_refused_before_reading(typed_config, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="judge.parser=mine: unknown parser. Available: ours, "
                                         "authors"):
        _run(typed_config, tmp_path, _invented_kumiho(tmp_path), "judge.parser=mine")


@pytest.mark.slow
def test_the_plain_command_detects_kumiho_and_logs_to_mlflow(
    real, tmp_path: Path, fake_anthropic, fake_openai
) -> None:
    # both providers' keys and endpoints are set (fakes on 127.0.0.1), so a judge call
    # would be counted: the plain command makes none
    env = clean_env(fake_anthropic, OPENAI_API_KEY=FAKE_OPENAI_KEY,
                    OPENAI_BASE_URL=fake_openai.base_url)
    done = run_cli("data=file", f"data.path={KUMIHO}", "hydra.run.dir=out", cwd=tmp_path,
                   env=env)
    assert done.returncode == 0, done.stderr
    assert fake_anthropic.requests == [] and fake_openai.requests == []  # no judge call
    # every published figure: 93.3% overall; causal, state, value 96.0%; goal 85.0%
    for text in ("Overall: 0.9327 (93.3%)", "Cognitive/causal: 0.9604 (96.0%)",
                 "Cognitive/state: 0.9600 (96.0%)", "Cognitive/value: 0.9600 (96.0%)",
                 "Cognitive/goal: 0.8500 (85.0%)"):
        assert text in done.stdout
    [run] = mlflow_runs(tmp_path, "locomo_exp")
    assert run.data.metrics["ours/overall"] == 93.27
    assert run.data.metrics["ours/relation/goal"] == 85.0
    assert run.data.params["judge.parser"] == "ours"
    assert run.data.tags["benchmark"] == "locomo_plus"


@pytest.mark.slow
def test_the_plain_command_on_the_authors_run_says_not_measured(
    real, tmp_path: Path, fake_anthropic, fake_openai
) -> None:
    env = clean_env(fake_anthropic, OPENAI_API_KEY=FAKE_OPENAI_KEY,
                    OPENAI_BASE_URL=fake_openai.base_url)
    done = run_cli("data=file", f"data.path={AUTHORS}", "tracking=none", "hydra.run.dir=out",
                   cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert fake_anthropic.requests == [] and fake_openai.requests == []  # no judge call
    assert "2,240 of 2,240 stored verdicts are API errors; accuracy not measured" in done.stdout
    assert "The authors' aggregate: overall_avg 1.0" in done.stdout
    assert "sk-proj" not in done.stdout + done.stderr
