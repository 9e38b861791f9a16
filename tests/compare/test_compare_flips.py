"""mode=compare tags flipped verdicts in the compared runs' MLflow traces (issue 30 §2).

Two real jobs (mem0 layout, stored verdicts ``llm_score``) logged with
``tracking.questions=true`` into the sqlite store under tmp_path, then compared: the flips
found, the tags read back from MLflow and compare.json's McNemar discordant pairs must agree,
and all three equal a count made here from the two input files.
"""

from __future__ import annotations

import json
import os

from conftest import write_stored_verdicts
from mlflow import MlflowClient

from locomo_exp.compare import CompareConfig
from locomo_exp.compare.job import run_compare_job
from locomo_exp.experiment import run_experiment

# stored verdicts of 12 questions in 6 conversations (1 = correct)
VERDICTS_A = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0]
VERDICTS_B = [1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0]


_write = write_stored_verdicts


def test_flips_tagged_in_mlflow_equal_compare_jsons_discordant_pairs(tmp_path, typed_config):
    runs = []
    for name, verdicts in (("a", VERDICTS_A), ("b", VERDICTS_B)):
        cfg = typed_config(f"data.path={_write(tmp_path / f'{name}.json', verdicts)}",
                           "tracking.questions=true")
        runs.append(run_experiment(cfg, tmp_path / name, tmp_path))
    uri = os.environ["MLFLOW_TRACKING_URI"]
    job = run_compare_job(
        CompareConfig(runs=[str(tmp_path / "a"), str(tmp_path / "b")], bootstrap_samples=50,
                      permutation_samples=50),
        tmp_path / "cmp", tmp_path, tracking_uri=uri,
    )
    a_only = sum(1 for x, y in zip(VERDICTS_A, VERDICTS_B, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(VERDICTS_A, VERDICTS_B, strict=True) if y and not x)
    assert (a_only, b_only) == (3, 3)
    [pair] = job.flips
    assert (pair.lost, pair.gained) == (a_only, b_only)
    rows = json.loads((tmp_path / "cmp" / "compare.json").read_text())["rows"]
    [overall] = [r for r in rows if r["metric"] == "stored_j" and r["group"] == "overall"]
    assert overall["discordant"] == [a_only, b_only]
    client = MlflowClient()
    for run, seen in ((runs[1], {"gained": b_only, "lost": a_only}),
                      (runs[0], {"gained": a_only, "lost": b_only})):
        flipped = client.search_traces(locations=[run.experiment_id], run_id=run.run_id,
                                       filter_string="tag.flipped = 'true'")
        directions = [t.info.tags["flip"] for t in flipped]
        assert {d: directions.count(d) for d in ("gained", "lost")} == seen
    assert pair.urls == [
        f"http://127.0.0.1:5000/#/experiments/{runs[0].experiment_id}/runs/{runs[1].run_id}"
        f"/evaluations?compareToRunUuid={runs[0].run_id}&filter=TAG::=::true::flipped"
    ]
    page = (tmp_path / "cmp" / "questions.html").read_text(encoding="utf-8")
    assert page.count('"gained"') == b_only and page.count('"lost"') == a_only


def test_runs_logged_without_traces_get_no_empty_link_and_a_reason(tmp_path, typed_config, caplog):
    """A new user's report: "0 of 6 flipped questions tagged", then a link to an empty view.
    Runs logged without ``tracking.questions``: no link, and the log says why."""
    for name, verdicts in (("a", VERDICTS_A), ("b", VERDICTS_B)):
        cfg = typed_config(f"data.path={_write(tmp_path / f'{name}.json', verdicts)}")
        run_experiment(cfg, tmp_path / name, tmp_path)
    with caplog.at_level("INFO", logger="locomo_exp.compare.questions"):
        job = run_compare_job(
            CompareConfig(runs=[str(tmp_path / "a"), str(tmp_path / "b")], bootstrap_samples=50,
                          permutation_samples=50),
            tmp_path / "cmp", tmp_path, tracking_uri=os.environ["MLFLOW_TRACKING_URI"],
        )
    [pair] = job.flips
    assert (pair.lost, pair.gained) == (3, 3) and pair.urls == []
    said = [r.getMessage() for r in caplog.records if "not tagged" in r.getMessage()]
    assert said == [f"{name}: 6 flipped questions not tagged in MLflow: its job logged no "
                    "question traces (tracking.questions=true logs them)" for name in ("a.json", "b.json")]
