"""Sweep summary: each job vs a baseline job with the compare code; stored J shown (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_compare import _questions, write_run

from locomo_exp import sweep
from locomo_exp.sweep.vs_baseline import BaselineNotFound, baseline_job, compare_with_baseline


def _rows(tmp_path: Path) -> list[dict]:
    questions = _questions()
    j_values = {
        "0.0": [0.0] * 60,
        "0.5": [100.0 if k % 2 else 0.0 for k in range(60)],
        "1.0": [0.0] * 60,
    }
    rows = []
    for job, (temperature, j) in enumerate(j_values.items()):
        run = write_run(tmp_path / f"job{job}", questions, [0.5] * 60, j)
        record = sweep.JobRecord(
            job=job,
            overrides=[f"judge.temperature={temperature}"],
            swept={"judge.temperature": temperature},
            run_name=f"T={temperature}",
            status=sweep.COMPLETED,
            output_dir=str(run),
            f1_variant="locomo",
        )
        rows.append(sweep.summary_row(record, json.loads((run / "summary.json").read_text())))
    return rows


def test_baseline_job_by_value_label_or_first():
    rows = [{"job": i, "swept": {"judge.temperature": t}} for i, t in enumerate(("0.0", "0.5"))]
    assert baseline_job(rows, None)["job"] == 0
    assert baseline_job(rows, "0.5")["job"] == 1
    assert baseline_job(rows, "judge.temperature=0.5")["job"] == 1
    with pytest.raises(
        BaselineNotFound,
        match=r"^sweep.baseline=2.0: no job has this value \(jobs: "
        r"judge.temperature=0.0; judge.temperature=0.5\)$",
    ):
        baseline_job(rows, "2.0")


def test_each_job_vs_the_baseline_job_difference_interval_verdict(tmp_path):
    rows = _rows(tmp_path)
    base = compare_with_baseline(
        rows, "0.0", tmp_path, bootstrap_samples=200, permutation_samples=200
    )
    assert {k: base[k] for k in ("job", "label")} == {"job": 0, "label": "judge.temperature=0.0"}
    assert base["method"].startswith("95% percentile intervals") and "200 resamples, seed 0" in base["method"]
    assert "vs_baseline" not in rows[0]
    half = rows[1]["vs_baseline"]
    assert (half["j"]["diff"], half["j"]["n"], half["j"]["verdict"]) == (50.0, 60, "A higher")
    assert half["j"]["ci"] == [50.0, 50.0]  # every conversation: half its verdicts flip 0 -> 100
    assert "f1" not in half  # F1 does not depend on judge.temperature (trial 4, finding 6)
    same = rows[2]["vs_baseline"]["j"]
    assert (same["diff"], same["ci"], same["verdict"]) == (0.0, [0.0, 0.0], "not distinguishable")
    assert (tmp_path / "vs_baseline" / "1" / "compare.md").is_file()

    context = sweep.SweepContext(
        name="s",
        sweep_dir=str(tmp_path),
        swept_keys=["judge.temperature"],
        swept_overrides=["judge.temperature=0.0,0.5,1.0"],
    )
    summary = sweep.build_sweep_summary(context, rows)
    summary["baseline"] = base
    table = [
        line for line in sweep.render_sweep_summary(summary).splitlines() if line.startswith("| ")
    ]
    assert (
        "| F1 Δ vs base | F1 95% CI | F1 verdict | J Δ vs base | J 95% CI | J verdict |" in table[0]
    )
    assert "| baseline |  |  | baseline |  |  |" in table[1]
    assert "| — | — | — | +50.00 |" in table[2]
    assert "| +50.00 | [+50.00, +50.00] | higher |" in table[2]


def test_refused_comparison_is_recorded_on_the_row(tmp_path):
    questions = _questions()
    runs = [
        write_run(tmp_path / "a", questions, [0.5] * 60),
        write_run(tmp_path / "b", questions, [0.5] * 60, variant="mem0"),
    ]
    rows = [
        {
            "job": i,
            "swept": {"f1": v},
            "status": sweep.COMPLETED,
            "output_dir": str(r),
            "f1_variant": v,
        }
        for i, (v, r) in enumerate(zip(("locomo", "mem0"), runs, strict=True))
    ]
    compare_with_baseline(rows, None, tmp_path, bootstrap_samples=50, permutation_samples=50)
    assert rows[1]["vs_baseline"]["error"] == (  # not "set compare.allow_mismatch=true"
        "the jobs score different F1 variants (mem0 vs locomo): a difference between two F1 "
        "variants says nothing about the answers"
    )


def test_stored_j_is_shown_when_no_live_judge():
    record = sweep.JobRecord(
        job=0,
        overrides=[],
        swept={"data.path": "x.json"},
        run_name="x",
        status=sweep.COMPLETED,
        output_dir="/x",
        f1_variant="locomo",
    )
    row = sweep.summary_row(
        record,
        {
            "counts": {"overall": 10},
            "metrics": {"f1": {"overall": {"mean": 0.4}}},
            "stored_judge": {"overall_1_4": {"mean": 71.25}, "overall": {"mean": 70.0}},
        },
    )
    assert row["stored_j_overall"] == 71.25
    context = sweep.SweepContext(
        name="s", sweep_dir="/s", swept_keys=["data.path"], swept_overrides=["data.path=x.json"]
    )
    markdown = sweep.render_sweep_summary(sweep.build_sweep_summary(context, [row]))
    assert "| 71.25 (stored) |" in markdown


@pytest.mark.slow  # scores 2 x 1,986 real answers
def test_the_comparisons_warnings_stand_under_the_sweep_table(tmp_path, shared_data):
    """Trial 4, finding 7: sweeps.md's systems sweep compares stored J from two judges."""
    from conftest import run_job

    rows = []
    for job, name in enumerate(("memobase_eval_0710.json", "zep_locomo_grades.json")):
        start = tmp_path / str(job)
        start.mkdir()
        result = run_job(start, path=shared_data / "predictions" / name)
        record = sweep.JobRecord(
            job=job, overrides=[f"data.path={name}"], swept={"data.path": name},
            run_name=name, status=sweep.COMPLETED, output_dir=str(result.output_dir),
            f1_variant="locomo",
        )
        rows.append(sweep.summary_row(record, result.summary))
    base = compare_with_baseline(rows, None, tmp_path, bootstrap_samples=100,
                                 permutation_samples=100)
    from locomo_exp.compare import CompareConfig, run_compare

    alone = run_compare(
        CompareConfig(runs=[rows[1]["output_dir"], rows[0]["output_dir"]],
                      bootstrap_samples=100, permutation_samples=100, metrics=["stored_j"]),
        tmp_path / "cmp", tmp_path, plots=False, strict_metrics=False,
    )
    stored = [w for w in alone.warnings if "llm_score" in w and "grade" in w]
    assert len(stored) == 1 and stored[0] in rows[1]["vs_baseline_warnings"]
    context = sweep.SweepContext(name="s", sweep_dir=str(tmp_path), swept_keys=["data.path"],
                                 swept_overrides=["data.path=a,b"])
    summary = sweep.build_sweep_summary(context, rows)
    summary["baseline"] = base
    markdown = sweep.render_sweep_summary(summary)
    assert f"- job 1: ⚠ {stored[0]}" in markdown
    assert markdown.index("Warnings of the comparisons") > markdown.index("| job |")
