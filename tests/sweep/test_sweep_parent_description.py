"""The MLflow sweep parent's description reads the same facts as sweep_summary.md.

The trial: a sweep over two files carrying stored J (another judge's verdicts) showed
75.78 (stored), 75.13 (stored) and a difference of -0.65 in sweep_summary.md, while the
parent's description said "J not measured ... not compared" for both jobs and pointed
at a sweep_plot.png that was never written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from locomo_exp.sweep.job_files import JobRecord
from locomo_exp.sweep.plot import _series, plot_sweep
from locomo_exp.sweep.summary import render_sweep_summary, summary_row
from locomo_exp.tracking import sweep_description


def _row(job: int, path: str, stored: float, f1: float, vs: dict[str, Any] | None) -> dict[str, Any]:
    record = JobRecord(job=job, overrides=[f"data.path={path}"], swept={"data.path": path},
                       run_name=path, status="COMPLETED", output_dir=f"/sweep/{job}")
    row = summary_row(record, {
        "stored_judge": {"overall_1_4": {"mean": stored}, "overall": {"mean": 1.0}},
        "metrics": {"f1": {"overall": {"mean": f1}}},
        "counts": {"overall": 1540},
    })
    if vs is not None:
        row["vs_baseline"] = vs
    return row


def _summary(rows: list[dict[str, Any]], key: str = "data.path") -> dict[str, Any]:
    return {"sweep": "sweep_sys", "sweep_dir": "/sweep", "swept_keys": [key], "n_jobs": len(rows),
            "n_failed": 0, "failed_jobs": [], "rows": rows,
            "baseline": {"job": 0, "label": f"{key}={rows[0]['swept'][key]}"}}


STORED_VS = {
    "stored_j": {"metric": "stored_j", "diff": -0.65, "ci": [-3.99, 2.62],
                 "verdict": "not distinguishable"},
    "f1": {"metric": "f1_locomo", "diff": 1.5, "ci": [0.5, 2.5], "verdict": "A higher"},
}


def test_stored_j_is_shown_labelled_and_compared_as_in_the_sweep_summary() -> None:
    summary = _summary([_row(0, "memobase.json", 75.78, 0.52, None),
                        _row(1, "zep.json", 75.13, 0.535, STORED_VS)])
    note = sweep_description(summary).splitlines()
    assert note[2] == ("- data.path=memobase.json: **stored J 75.78** baseline; "
                       "F1 52.00 baseline")
    assert note[3] == ("- data.path=zep.json: **stored J 75.13** not distinguishable (-0.65); "
                       "F1 53.50 higher (+1.50)")
    assert "J not measured" not in "\n".join(note)
    assert note[-1] == (
        "0-100, 95% bootstrap over questions (no conversation ids) intervals; vs baseline: "
        "conversation-cluster bootstrap and "
        "Holm-adjusted paired test. Stored J: the verdicts stored in the input file by another "
        "judge (not re-judged). Table: `sweep_summary.md` (Artifacts)."
    )
    table = render_sweep_summary(summary)  # the same facts in the sweep summary
    assert "| 75.78 (stored) |" in table and "| 75.13 (stored) |" in table
    assert "| -0.65 | [-3.99, +2.62] | not distinguishable |" in table


def test_the_plot_is_named_only_when_it_was_written() -> None:
    summary = _summary([_row(0, "a.json", 70.0, 0.5, None)])
    assert "sweep_plot.png" not in sweep_description(summary)
    assert sweep_description(summary, plot="sweep_plot.png").endswith(
        "Table: `sweep_summary.md`; plot: `sweep_plot.png` (Artifacts)."
    )


def test_a_row_without_any_j_says_why() -> None:
    row = _row(0, "a.json", 70.0, 0.5, None)
    row["stored_j_overall"] = None
    assert "J not measured (no judge ran, no stored verdicts)" in sweep_description(_summary([row]))
    row["dry_run_estimate"] = {"calls_to_make": 10}
    assert "J not measured (judge dry run: no call made)" in sweep_description(_summary([row]))


def test_the_sweep_plot_draws_stored_j_labelled(tmp_path: Path) -> None:
    rows = [_row(0, "1", 70.0, 0.5, None), _row(1, "2", 72.5, 0.55, STORED_VS)]
    for r in rows:
        r["swept"] = {"data.limit": r["swept"]["data.path"]}
    summary = _summary(rows, key="data.limit")
    series = dict(_series([(1.0, rows[0]), (2.0, rows[1])], 0))
    assert series["stored J overall (0-100, another judge's verdicts)"] == [
        (1.0, 70.0, None, "baseline"), (2.0, 72.5, None, "not distinguishable"),
    ]
    path = plot_sweep(summary, tmp_path / "sweep_plot.png")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


INFLATED = ("J inflated (the judge accepted 7/7 known-wrong controls: false-accept rate 100% "
            "[65%, 100%])")


def _judged_row(job: int, temperature: str, summary_extra: dict[str, Any]) -> dict[str, Any]:
    record = JobRecord(job=job, overrides=[f"judge.temperature={temperature}"],
                       swept={"judge.temperature": temperature},
                       run_name=f"judge.temperature={temperature}", status="COMPLETED",
                       output_dir=f"/sweep/{job}")
    summary: dict[str, Any] = {
        "counts": {"overall": 20},
        "metrics": {"f1": {"overall": {"mean": 0.5}}},
        "judge": {"j": {"overall": {"mean": 80.0, "std_across_runs": 0.0}},
                  "counts": {"parse_failure": 0, "api_error": 0}, "tokens": {}},
        "status": {"f1": "ok", "judge": "ok"},
    }
    summary.update(summary_extra)
    return summary_row(record, summary)


def test_a_job_whose_report_warns_is_not_a_bare_completed_anywhere() -> None:
    """Trial 5 #6: each job's report said "Run status: WARNING — J inflated"; the sweep said COMPLETED."""
    from locomo_exp.sweep.job_files import SweepContext
    from locomo_exp.sweep.summary import build_sweep_summary
    from locomo_exp.tracking import sweep_table

    flagged = _judged_row(0, "0.0", {})
    flagged_summary = {"judge": {"j": {"overall": {"mean": 80.0}}, "counts": {}, "tokens": {},
                                 "trust": {"warnings": [INFLATED]}},
                       "status": {"judge": "warning: " + INFLATED}}
    flagged = _judged_row(0, "0.0", flagged_summary)
    lme = _judged_row(1, "0.5", {"warnings": ["J deflated (x)"], "judge": {}})  # LongMemEval
    clean = _judged_row(2, "1.0", {})
    context = SweepContext(name="sweep T", sweep_dir="/sweep", swept_keys=["judge.temperature"],
                           swept_overrides=["judge.temperature=0.0,0.5,1.0"])
    summary = build_sweep_summary(context, [flagged, lme, clean])

    assert flagged["warnings"] == [INFLATED]
    assert flagged["run_status"] == "COMPLETED — WARNING: J inflated"
    assert lme["run_status"] == "COMPLETED — WARNING: J deflated"
    assert clean["warnings"] == [] and clean["run_status"] == "COMPLETED"
    assert summary["n_warned"] == 2
    assert [w["job"] for w in summary["warned_jobs"]] == [0, 1]

    markdown = render_sweep_summary(summary)
    assert "| 0 | 0.0 | COMPLETED — WARNING: J inflated | 50.00 |" in markdown
    assert "| 2 | 1.0 | COMPLETED | 50.00 |" in markdown
    assert f"- job 0 (judge.temperature=0.0): ⚠ {INFLATED}" in markdown
    assert "**Warning: the J of 2 of 3 job(s) is flagged" in markdown

    note = sweep_description(summary).splitlines()
    assert "2 with a flagged J" in note[0]
    assert note[2].endswith("— **⚠ COMPLETED — WARNING: J inflated**")
    assert "⚠" not in note[4]

    table = sweep_table(summary["rows"], ["judge.temperature"])
    assert [t["status"] for t in table] == [
        "COMPLETED — WARNING: J inflated", "COMPLETED — WARNING: J deflated", "COMPLETED"]
