"""Comparing LongMemEval runs: paired by question_id, bootstrap intervals, exact McNemar, Holm."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import PROJECT_ROOT
from lme_helpers import GPT4O, HUNK_MINI, REFERENCE, need_shared
from scipy.stats import binomtest

from locomo_exp.benchmarks.longmemeval.compare import (
    LmeRun,
    compare_lme_runs,
    judge_warning,
    task_avg_row,
)
from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.compare.run_dirs import CompareError


@pytest.fixture
def two_runs(typed_config, tmp_path):
    need_shared()
    dirs = []
    for name, path in (("gpt-4o", GPT4O), ("hunk-mini", HUNK_MINI)):
        cfg = typed_config("data=file", "tracking=none", f"data.path={path}",
                           f"data.reference={REFERENCE}")
        run_longmemeval(cfg, tmp_path / name, tmp_path)
        dirs.append(tmp_path / name)
    return dirs


def test_the_two_shared_files_compare_question_by_question(two_runs):
    (pair,) = compare_lme_runs(two_runs, bootstrap_samples=500, labels=["gpt-4o", "hunk-mini"])
    assert (pair.paired, pair.only_a, pair.only_b) == (500, 0, 0)
    rows = {r.figure: r for r in pair.rows}
    assert list(rows) == ["overall", "task_avg", "abstention", *[
        "single-session-user", "single-session-assistant", "single-session-preference",
        "multi-session", "temporal-reasoning", "knowledge-update"]]
    overall = rows["overall"]
    assert (round(overall.a * 100, 2), round(overall.b * 100, 2)) == (72.40, 62.00)
    assert overall.diff == pytest.approx(10.40)
    assert overall.ci[0] < 10.40 < overall.ci[1]
    only_a, only_b = overall.discordant
    assert only_a - only_b == 52  # 362 - 310
    expected = binomtest(only_b, only_a + only_b, 0.5).pvalue  # exact McNemar, by scipy
    assert overall.mcnemar_p == pytest.approx(expected, rel=1e-9)
    assert rows["task_avg"].diff == pytest.approx(72.7529 - 65.9611, abs=0.01)
    assert rows["abstention"].n == 30 and rows["abstention"].diff == pytest.approx(-20.0)
    raw = sorted((rows[t].mcnemar_p, t) for t in (
        "single-session-user", "single-session-assistant", "single-session-preference",
        "multi-session", "temporal-reasoning", "knowledge-update"))
    smallest_p, smallest = raw[0]
    assert rows[smallest].holm_p == pytest.approx(min(1.0, 6 * smallest_p))  # Holm's first step
    assert pair.warnings == [
        "gpt-4o's verdicts are stored labels naming gpt-4o-2024-08-06, hunk-mini's stored labels "
        "naming gpt-4o-mini-2024-07-18: the judges' prompts/models may differ; not verified "
        "(stored labels record only a model name); a difference may mix the systems with their "
        "judges: re-judge both with one judge (scorer=judge, the same settings) for a "
        "like-for-like comparison"
    ]


def test_the_handed_files_give_todays_numbers_at_the_default_settings(two_runs, tmp_path):
    """``mode=compare`` at its defaults (2,000 resamples, seed 0): the figures pinned as printed."""
    from locomo_exp.benchmarks.longmemeval.compare_job import run_lme_compare
    from locomo_exp.benchmarks.longmemeval.compare_report import console_lines
    from locomo_exp.config import CompareConfig

    cfg = CompareConfig(runs=[str(d) for d in two_runs], labels=["gpt-4o", "hunk-mini"])
    job = run_lme_compare(cfg, two_runs, tmp_path / "cmp")
    lines = console_lines(job.pairs).splitlines()
    assert lines[2:] == [
        "  overall                72.40   62.00  A-B +10.40 [+5.40, +15.60]  McNemar p 0.0001"
        "  A higher (McNemar p 0.0001)",
        "  task-averaged          72.75   65.96  A-B  +6.79 [+1.75, +11.87]  McNemar p n/a"
        "  A higher (interval excludes 0; no McNemar test)",
        "  abstention (_abs)      70.00   90.00  A-B -20.00 [-36.67, -3.33]  McNemar p 0.0703"
        "  no difference shown (McNemar p 0.0703 ≥ 0.05 decides; the interval"
        " [-36.67, -3.33] excludes 0)",
    ]
    overall = job.pairs[0]["rows"][0]
    assert [round(v, 2) for v in overall["ci"]] == [5.40, 15.60]
    assert round(overall["mcnemar_p"], 4) == 0.0001


def test_task_average_interval_by_hand_when_every_pair_agrees():
    a = np.array([1, 0, 1, 1], dtype=float)
    row = task_avg_row(a, a.copy(), ["multi-session"] * 2 + ["knowledge-update"] * 2, 200, 0)
    assert (row.diff, row.ci) == (0.0, (0.0, 0.0))
    assert row.a == pytest.approx((0.5 + 1.0) / 2)


def test_a_locomo_run_is_refused_beside_a_longmemeval_one(two_runs, tmp_path):
    other = tmp_path / "locomo-run"
    other.mkdir()
    (other / "summary.json").write_text(json.dumps({"counts": {}}))
    with pytest.raises(CompareError, match="not a LongMemEval run"):
        compare_lme_runs([two_runs[0], other])


@pytest.mark.slow
def test_compare_command_runs_end_to_end(two_runs, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "mode=compare", f"tracking.uri=sqlite:///{tmp_path}/m.db",
         f"compare.runs=[{two_runs[0]},{two_runs[1]}]", "compare.labels=[gpt-4o,hunk-mini]",
         f"hydra.run.dir={tmp_path}/cmp"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert "gpt-4o vs hunk-mini (500 paired questions)" in done.stdout
    assert "A-B +10.40" in done.stdout
    body = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert body["pairs"][0]["rows"][0]["figure"] == "overall"
    assert "Holm p (6 types)" in (tmp_path / "cmp" / "compare.md").read_text()
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path}/m.db")
    run = client.search_runs([client.get_experiment_by_name("locomo_exp").experiment_id])[0]
    assert round(run.data.metrics["lme_compare/hunk-mini/overall_diff"], 2) == 10.40
    assert run.data.tags["benchmark"] == "longmemeval"
    # one MLflow run of the comparison (its own), and the flips of every pipeline benchmark:
    # gained/lost are McNemar's discordant pairs (only the second correct / only the first)
    assert len(client.search_runs([run.info.experiment_id])) == 1
    only_a, only_b = body["pairs"][0]["rows"][0]["discordant"]
    assert f"Flipped verdicts hunk-mini vs gpt-4o: {only_b} gained, {only_a} lost" in done.stdout
    assert (tmp_path / "cmp" / "questions.html").is_file()


def _judged(name: str, **settings: object) -> LmeRun:
    base = {"provider": "anthropic", "endpoint": None, "model": "claude-x", "protocol": "longmemeval",
            "prompt_version": "lme-1", "temperature": 0.0, "max_tokens": 10, "runs": 1}
    base.update(settings)
    model = f"{base['model']}, protocol {base['protocol']}"
    summary = {"headline": {"source": "judge", "judge_model": model},
               "judge": {"source": "judge", "judge_model": model, "settings": base}}
    return LmeRun(PROJECT_ROOT, name, summary, {}, {}, f"judge ({model})")


def test_recorded_judges_are_compared_field_by_field():
    same = judge_warning(_judged("A"), _judged("B"))
    assert same is None  # every recorded field agrees: nothing to warn about
    a = _judged("A", template={"name": "mine.txt", "sha256": "aa" * 32}, protocol="template")
    b = _judged("B", template={"name": "mine.txt", "sha256": "bb" * 32}, protocol="template",
                model="claude-y")
    assert judge_warning(a, b) == (
        "the recorded judges differ: model claude-x vs claude-y; template_sha256 "
        f"{'aa' * 32} vs {'bb' * 32}: a difference may mix the systems with their judges: "
        "re-judge both with one judge (scorer=judge, the same settings) for a like-for-like "
        "comparison"
    )


def test_a_judged_run_against_stored_labels_says_what_is_known():
    stored = LmeRun(PROJECT_ROOT, "B", {"headline": {"source": "stored", "judge_model": "gpt-4o"}},
                    {}, {}, "stored (gpt-4o)")
    line = judge_warning(_judged("A"), stored)
    assert line is not None and line.startswith(
        "A's verdicts are this project's judge (claude-x, protocol longmemeval), B's stored "
        "labels naming gpt-4o: the judges' prompts/models may differ; not verified"
    )


def test_a_flagged_run_carries_its_warning_into_the_comparison():
    """Trial 5 #7: a comparison must not drop what each run's report opens with."""
    from locomo_exp.benchmarks.longmemeval.compare import compare_lme_pair

    a, b = _judged("A"), _judged("B")
    a.summary["warnings"] = ["J deflated (the judge rejected 5/5 known-right controls)"]
    a.summary["input"] = b.summary["input"] = {"reference": {"sha256": "ab", "variant": "s"}}
    for run in (a, b):
        run.verdicts.update({"q1": True, "q2": False})
        run.types.update({"q1": "multi-session", "q2": "multi-session"})
    pair = compare_lme_pair(a, b, bootstrap_samples=50)
    assert pair.warnings == [
        "A (A): its verdicts are flagged by its own judge checks (a difference with this run "
        "is not trustworthy): J deflated (the judge rejected 5/5 known-right controls)"
    ]
