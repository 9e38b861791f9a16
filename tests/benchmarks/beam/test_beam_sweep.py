"""A BEAM sweep (``-m data.path=a,b``) runs like a LongMemEval one: a child run per job under
one MLflow parent, a summary with BEAM's own figures and each job paired with the baseline job
as ``mode=compare`` of the two runs pairs them.

Job 0 is the published mem0 10M run; job 1 is the same file with every abstention question's
item verdicts set to 1 (built here, in tmp_path). The expected figures come from the file's own
counts: abstention passes 8 of 20 questions at an average score of 0.4, so job 1 passes 12 more
questions of 200 and gains 12/200 in mean question score (beam-nugget) and 12/180 under
beam-official (the 20 event-ordering questions are unscored there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from beam_helpers import RESULTS_10M
from conftest import EXAMPLE, run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not RESULTS_10M.is_file(), reason=f"shared BEAM data not at {RESULTS_10M}"),
]

ABSTENTION_PASSES, ABSTENTION_SCORE_SUM = 8, 8.0  # the file's metrics_by_cutoff: 8/20, avg 0.4


def all_abstention_passed(tmp_path: Path) -> Path:
    """The published run with every abstention item verdict (and question score) set to 1."""
    data = json.loads(RESULTS_10M.read_text(encoding="utf-8"))
    by_type = data["metrics_by_cutoff"]["top_200"]["by_question_type"]["abstention"]
    assert (by_type["correct"], by_type["avg_score"] * by_type["total"]) == (
        ABSTENTION_PASSES, pytest.approx(ABSTENTION_SCORE_SUM))
    for row in data["evaluations"]:
        if row["question_type"] == "abstention":
            cutoff = row["cutoff_results"]["top_200"]
            cutoff["score"] = 1.0
            for nugget in cutoff["nugget_scores"]:
                nugget["score"] = 1.0
    path = tmp_path / "abstention_fixed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_sweep_over_two_beam_runs_has_beams_figures_and_pairs_as_compare(tmp_path):
    fixed = all_abstention_passed(tmp_path)
    done = run_cli("-m", "data=file", f"data.path={RESULTS_10M},{fixed}", "tracking=none",
                   "hydra.sweep.dir=sw", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())
    assert (summary["n_jobs"], summary["n_failed"]) == (2, 0)
    beam = [row["beam"] for row in summary["rows"]]
    gained = (20 - ABSTENTION_SCORE_SUM) / 200
    assert [(b["verdicts"], b["questions"], b["chats"], b["pass_rate"]) for b in beam] == [
        ("stored (gpt-5)", 200, 10, 50.5), ("stored (gpt-5)", 200, 10, 50.5 + 100 * 12 / 200)]
    assert beam[0]["avg_score"] == pytest.approx(0.4860235, abs=1e-12)
    assert beam[1]["avg_score"] == pytest.approx(0.4860235 + gained, abs=1e-12)
    assert [b["pass_rate_ci"] for b in beam] == [[43.5, 57.5], [49.5, 63.0]]
    # event ordering is unscored under beam-official with stored verdicts: no mean of abilities
    assert [(b["official_mean"], b["official_measured"]) for b in beam] == [(None, 9), (None, 9)]
    vs = summary["rows"][1]["vs_baseline"]["beam"]  # job 1 - job 0
    nugget, official = vs["beam-nugget"], vs["beam-official"]
    assert (nugget["n_pairs"], nugget["unpaired"], nugget["chats"]) == (200, 0, 10)
    assert nugget["difference"] == pytest.approx(gained, abs=1e-12)
    assert [round(v, 4) for v in nugget["ci"]] == [0.04, 0.08]
    assert round(nugget["pvalue"], 6) == 0.0006
    assert (official["n_pairs"], official["unpaired"]) == (180, 20)
    assert official["difference"] == pytest.approx(12 / 180, abs=1e-12)
    assert [round(v, 4) for v in official["ci"]] == [0.0444, 0.0889]
    assert round(official["pvalue"], 6) == 0.0012
    assert summary["rows"][1]["vs_baseline_warnings"] == []  # same judge, same prompt
    table = (tmp_path / "sw" / "sweep_summary.md").read_text()
    assert table in done.stdout  # the file is what the console printed
    assert ("| stored (gpt-5) | 50.50 | 43.50–57.50 | 0.486 | not measured (9/10 abilities) "
            "| baseline |  |  | baseline |  |  |") in table
    assert ("| stored (gpt-5) | 56.50 | 49.50–63.00 | 0.546 | not measured (9/10 abilities) "
            "| +0.060 | [+0.040, +0.080] | 0.0006 | +0.067 | [+0.044, +0.089] | 0.0012 |") in table
    assert "F1" not in table
    # the pair is what mode=compare of the two job directories gives at its defaults
    cmp = run_cli("mode=compare", f"compare.runs=[{tmp_path / 'sw' / '1'},{tmp_path / 'sw' / '0'}]",
                  "tracking=none", "hydra.run.dir=cmp", cwd=tmp_path)
    assert cmp.returncode == 0, cmp.stderr
    alone = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    in_sweep = json.loads((tmp_path / "sw" / "vs_baseline" / "1" / "compare.json").read_text())
    assert in_sweep["profiles"] == alone["profiles"]
    assert (tmp_path / "sw" / "vs_baseline" / "1" / "compare.md").is_file()


def test_a_tracked_beam_sweep_has_one_parent_and_a_child_per_job(tmp_path):
    fixed = all_abstention_passed(tmp_path)
    done = run_cli("-m", "data=file", f"data.path={RESULTS_10M},{fixed}",
                   f"tracking.uri=sqlite:///{tmp_path}/m.db", "hydra.sweep.dir=sw", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path}/m.db")
    runs = client.search_runs([client.get_experiment_by_name("locomo_exp").experiment_id])
    [parent] = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("sweep.role") == "child"]
    assert len(children) == 2 and len(runs) == 3
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert {c.data.tags["benchmark"] for c in children} == {"beam"}
    assert sorted(c.data.metrics["beam-nugget/pass_rate/overall"] for c in children) == [50.5, 56.5]
    on_parent = parent.data.metrics  # each job's headline on the parent too
    assert sorted(v for k, v in on_parent.items() if k.endswith("/beam-nugget/pass_rate/overall")) \
        == [50.5, 56.5]
    summary = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())
    assert summary["parent_run_id"] == parent.info.run_id
    assert sorted(r["run_id"] for r in summary["rows"]) == sorted(c.info.run_id for c in children)


def test_a_beam_sweep_with_a_locomo_only_setting_is_refused_before_any_job(tmp_path):
    before = sorted(tmp_path.rglob("*"))
    done = run_cli("-m", "data=file", f"data.path={RESULTS_10M}", "data.limit=5,6",
                   "tracking=none", cwd=tmp_path)
    assert done.returncode == 2
    assert "data.limit=5: not available for BEAM answers, which are scored whole" in done.stderr
    assert "do not run in a sweep" not in done.stderr and "Traceback" not in done.stderr
    assert sorted(tmp_path.rglob("*")) == before  # no multirun/, no job ran


def test_a_sweep_mixing_beam_and_locomo_files_is_refused_in_one_line(tmp_path):
    done = run_cli("-m", "data=file", f"data.path={RESULTS_10M},{EXAMPLE}", "tracking=none",
                   cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "error: a sweep's jobs must be of one benchmark: jobs [0] are BEAM answer files, "
        "jobs [1] LoCoMo ones; run one sweep per benchmark\n")
