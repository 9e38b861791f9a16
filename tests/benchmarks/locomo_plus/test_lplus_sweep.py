"""A LoCoMo-Plus sweep (``-m data.path=a,b``) runs like a LoCoMo one: one MLflow parent, a
child per job, a summary with LoCoMo-Plus's own figures and each job against the baseline
job as ``mode=compare`` pairs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA, run_cli

KUMIHO = SHARED_DATA / "locomo_plus" / "kumiho" / "all_results.json"

pytestmark = pytest.mark.slow

FLIPPED_WRONG = (0, 1, 2)
"""Items kumiho's judge marked correct (cog-0..cog-2, causal), marked wrong in the copy."""
FLIPPED_RIGHT = (61,)
"""An item kumiho's judge marked wrong (cog-61), marked correct in the copy."""


def _flipped_copy(tmp_path: Path) -> Path:
    """kumiho's stored run with four verdicts flipped: 374 - 3 + 1 = 372 of 401 correct."""
    rows = json.loads(KUMIHO.read_text(encoding="utf-8"))
    for i in FLIPPED_WRONG:
        assert rows[i]["judge_score"] is True
        rows[i]["judge_score"] = False
    for i in FLIPPED_RIGHT:
        assert rows[i]["judge_score"] is False
        rows[i]["judge_score"] = True
    path = tmp_path / "flipped" / "all_results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_a_sweep_over_two_stored_runs_has_one_parent_and_the_figures(tmp_path: Path) -> None:
    if not KUMIHO.is_file():
        pytest.skip(f"kumiho's run not found at {KUMIHO} (read-only shared/ folder)")
    flipped = _flipped_copy(tmp_path)
    done = run_cli("-m", "data=file", f"data.path={KUMIHO},{flipped}",
                   f"tracking.uri=sqlite:///{tmp_path}/m.db", "hydra.sweep.dir=sw", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())
    assert (summary["n_jobs"], summary["n_failed"]) == (2, 0)
    plus = [row["plus"] for row in summary["rows"]]
    assert [(p["items"], p["overall"], p["cognitive"], p["factual_unweighted"], p["reading"])
            for p in plus] == [(401, 93.27, 93.27, None, "ours"), (401, 92.77, 92.77, None, "ours")]
    assert [p["overall_ci"] for p in plus] == [[91.75, 94.79], [90.82, 95.01]]
    assert [row["stored_j_overall"] for row in summary["rows"]] == [93.27, 92.77]
    assert [row["j_overall"] for row in summary["rows"]] == [None, None]  # no judge call
    # job 1 - job 0, as mode=compare of the two runs: 2 net flips of 401 = -0.50 points
    vs = summary["rows"][1]["vs_baseline"]["plus"]
    # (the sign-flip test by Monte Carlo, 2**401 > compare.permutation_samples; the exact
    # p of 3 against 1 flips is 10/16 = 0.625)
    assert vs["Cognitive"] == {"n": 401, "unpaired": 0, "diff": -0.5, "ci": [-1.49, 0.5],
                               "pvalue": 0.6355364463553644, "pvalue_holm": 0.6355364463553644}
    assert vs["factual"]["n"] == 0 and vs["factual"]["diff"] is None  # no LoCoMo item
    assert summary["baseline"]["job"] == 0
    from locomo_exp.benchmarks.locomo_plus.compare import compare_runs, read_run
    from locomo_exp.config import CompareConfig

    defaults = CompareConfig()
    direct = compare_runs(read_run(tmp_path / "sw" / "1"), read_run(tmp_path / "sw" / "0"),
                          samples=defaults.bootstrap_samples,
                          permutations=defaults.permutation_samples, seed=defaults.seed)
    written = json.loads((tmp_path / "sw" / "vs_baseline" / "1" / "compare.json").read_text())
    assert written["groups"] == direct["groups"]
    table = (tmp_path / "sw" / "sweep_summary.md").read_text()
    assert table in done.stdout  # the file is what the console printed
    # no F1 (stored verdicts, no scorer=both) and no trust check: said, not left blank
    assert ("| ours | 401 | 93.27 | 91.75–94.79 | 93.27 | — | — | — | not measured | baseline |"
            in table)
    assert "| ours | 401 | 92.77 | 90.82–95.01 | 92.77 | — | — | — | not measured | -0.50 | " \
        "[-1.49, +0.50] | 0.6355 | — | — | — | not measured |  | not measured | not measured |" \
        in table
    assert "| F1 factual |" in table
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path}/m.db")
    runs = client.search_runs([client.get_experiment_by_name("locomo_exp").experiment_id])
    [parent] = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("sweep.role") == "child"]
    assert len(children) == 2 and len(runs) == 3
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert sorted(c.data.metrics["ours/overall"] for c in children) == [92.77, 93.27]
    assert {c.data.tags["benchmark"] for c in children} == {"locomo_plus"}


def test_a_locomo_only_setting_refuses_the_sweep_before_any_job(tmp_path: Path) -> None:
    if not KUMIHO.is_file():
        pytest.skip(f"kumiho's run not found at {KUMIHO} (read-only shared/ folder)")
    done = run_cli("-m", "data=file", f"data.path={KUMIHO}", "data.limit=1,2",
                   "tracking=none", "hydra.sweep.dir=sw", cwd=tmp_path)
    assert done.returncode == 2
    assert "data.limit=1: not available for a stored LoCoMo-Plus run" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "sw").exists()


JUDGED_ITEMS = [
    {"category": "single-hop", "question_input": "What is Ben's dog called?", "evidence": "",
     "ground_truth": "Rex", "prediction": "Rex.", "conversation": 0},
    {"category": "temporal", "question_input": "When did Ben move?", "evidence": "",
     "ground_truth": "May 2023", "prediction": "In May 2023.", "conversation": 1},
    {"category": "Cognitive", "question_input": "Ana: Any ideas for my weekend?",
     "evidence": "Ana: I hurt my knee last week.", "ground_truth": "",
     "prediction": "Something gentle, given your knee.", "conversation": 2,
     "relation_type": "state"},
]
"""A made-up answers file (no verdicts): the judge scores it in each job."""


def test_a_judged_sweep_shows_this_judges_figures_and_spend(tmp_path: Path, fake_openai) -> None:
    from conftest import clean_env
    from fake_openai import FAKE_OPENAI_KEY
    from fake_server import Reply

    fake_openai.responder = lambda request: Reply(text='{"label": "correct", "reason": "ok"}')
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(JUDGED_ITEMS), encoding="utf-8")
    done = run_cli(
        "-m", "benchmark=locomo_plus", "scorer=judge", "data=file", f"data.path={answers}",
        f"judge.base_url={fake_openai.base_url}", "judge.progress=false", "judge.runs=1,2",
        "report.bootstrap_samples=50", "tracking=none", "hydra.sweep.dir=sw", cwd=tmp_path,
        env=clean_env(OPENAI_API_KEY=FAKE_OPENAI_KEY),
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())["rows"]
    assert [(r["swept"], r["plus"]["overall"], r["j_overall"], r["stored_j_overall"],
             r["parse_failures"], r["api_errors"]) for r in rows] == [
        ({"judge.runs": "1"}, 100.0, 100.0, None, 0, 0),
        ({"judge.runs": "2"}, 100.0, 100.0, None, 0, 0)]
    assert [(r["plus"]["cognitive"], r["plus"]["factual_item_weighted"]) for r in rows] == [
        (100.0, 100.0), (100.0, 100.0)]
    assert all(r["plus"]["verdicts"].startswith("J judged now: gpt-4o-mini") for r in rows)
    assert all(r["input_tokens_in_all"] > 0 for r in rows)
    vs = rows[1]["vs_baseline"]["plus"]
    assert (vs["Cognitive"]["n"], vs["Cognitive"]["diff"], vs["factual"]["n"],
            vs["factual"]["diff"]) == (1, 0.0, 2, 0.0)
