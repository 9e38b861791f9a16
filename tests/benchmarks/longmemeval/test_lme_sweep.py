"""A LongMemEval sweep (``-m data.path=a,b``) runs like a LoCoMo one: one MLflow parent, a
child per job, a summary with LongMemEval's figures and each job against the baseline job."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from lme_helpers import (
    GPT4O,
    HUNK_MINI,
    REFERENCE,
    dataset_item,
    need_shared,
    write_json,
    write_jsonl,
)

pytestmark = pytest.mark.slow


def test_a_sweep_over_two_answer_files_has_one_parent_and_the_figures(tmp_path):
    need_shared()
    done = run_cli(
        "-m", "data=file", f"data.path={GPT4O},{HUNK_MINI}", f"data.reference={REFERENCE}",
        f"tracking.uri=sqlite:///{tmp_path}/m.db", "hydra.sweep.dir=sw", cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())
    assert (summary["n_jobs"], summary["n_failed"]) == (2, 0)
    lme = [row["lme"] for row in summary["rows"]]
    assert [(round(r["overall"], 2), round(r["task_avg"], 2), round(r["abstention"], 2))
            for r in lme] == [(72.40, 72.75, 70.00), (62.00, 65.96, 90.00)]
    assert [r["verdicts"] for r in lme] == [
        "stored (gpt-4o-2024-08-06)", "stored (gpt-4o-mini-2024-07-18)"]
    vs = summary["rows"][1]["vs_baseline"]["lme"]  # job 1 - job 0: mode=compare's figures
    assert (round(vs["diff"], 2), [round(v, 2) for v in vs["ci"]], round(vs["mcnemar_p"], 4)) \
        == (-10.40, [-15.60, -5.40], 0.0001)
    table = (tmp_path / "sw" / "sweep_summary.md").read_text()
    assert table in done.stdout  # the file is what the console printed
    assert "| stored (gpt-4o-2024-08-06) | 72.40 | 68.32–76.14 | 72.75 | 70.00 | baseline |" in table
    assert "| stored (gpt-4o-mini-2024-07-18) | 62.00 | 57.67–66.15 | 65.96 | 90.00 | -10.40 | " \
        "[-15.60, -5.40] | 0.0001 |" in table
    assert "F1" not in table
    assert "A-B +10.40" not in table and (tmp_path / "sw" / "vs_baseline" / "1" / "compare.md").is_file()
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path}/m.db")
    runs = client.search_runs([client.get_experiment_by_name("locomo_exp").experiment_id])
    [parent] = [r for r in runs if r.data.tags.get("sweep.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("sweep.role") == "child"]
    assert len(children) == 2 and len(runs) == 3
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    assert sorted(round(c.data.metrics["lme_stored/overall"], 2) for c in children) == [62.0, 72.4]
    assert {c.data.tags["benchmark"] for c in children} == {"longmemeval"}
    overall = {k: v for k, v in parent.data.metrics.items() if k.endswith("/lme_stored/overall")}
    assert sorted(round(v, 2) for v in overall.values()) == [62.0, 72.4]


def test_a_sweep_mixing_longmemeval_and_locomo_files_is_refused_in_one_line(tmp_path):
    items = [dataset_item(f"q{i}", "multi-session", answer=f"answer {i}") for i in range(2)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(tmp_path / "h.jsonl", [
        {"question_id": f"q{i}", "hypothesis": "x", "autoeval_label": {"model": "m", "label": True}}
        for i in range(2)])
    from conftest import EXAMPLE

    before = sorted(tmp_path.rglob("*"))
    done = run_cli("-m", "data=file", f"data.path={hyp},{EXAMPLE}", f"data.reference={ref}",
                   cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "error: a sweep's jobs must be of one benchmark: jobs [0] are LongMemEval answer files, "
        "jobs [1] LoCoMo ones; run one sweep per benchmark\n")
    assert sorted(tmp_path.rglob("*")) == before  # no multirun/, no mlflow.db


def test_a_judged_sweep_of_one_hypothesis_file_shows_this_judges_figures(tmp_path, fake_anthropic):
    from fake_anthropic import text

    fake_anthropic.responder = lambda request: text("yes")
    items = [dataset_item(f"q{i}", "multi-session", answer=f"answer {i}") for i in range(4)]
    ref = write_json(tmp_path / "ref.json", items)
    hyp = write_jsonl(tmp_path / "h.jsonl", [{"question_id": f"q{i}", "hypothesis": "x"}
                                             for i in range(4)])
    done = run_cli(
        "-m", "benchmark=longmemeval", "scorer=judge", "data=file", f"data.path={hyp}",
        f"data.reference={ref}", "judge.audit.n=0", "judge.progress=false", "judge.runs=1,2",
        "tracking=none", "hydra.sweep.dir=sw", cwd=tmp_path, server=fake_anthropic,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "sw" / "sweep_summary.json").read_text())["rows"]
    assert [(r["swept"], r["lme"]["overall"], r["j_overall"], r["parse_failures"]) for r in rows] \
        == [({"judge.runs": "1"}, 100.0, 100.0, 0), ({"judge.runs": "2"}, 100.0, 100.0, 0)]
    assert all(r["lme"]["verdicts"].startswith("judge (claude-sonnet-4-6, protocol longmemeval")
               for r in rows)
    assert all(r["input_tokens_in_all"] > 0 for r in rows)
    assert rows[1]["vs_baseline"]["lme"]["diff"] == 0.0
