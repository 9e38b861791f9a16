"""A sweep tags, in each job's MLflow traces, the questions whose verdict flips vs the baseline.

Issue 30 §2 for sweeps: a real multirun (subprocess) over two input files whose stored
verdicts differ, ``tracking.questions=true``, the MLflow store under tmp_path. The flip
counts in ``sweep_summary.json`` must equal a count made here from the two jobs'
``scores.jsonl``, the discordant pairs of the job's ``compare.json`` and the ``flip`` tags
read back from MLflow; the baseline's traces stay untagged.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import clean_env, run_cli_ok, write_stored_verdicts
from mlflow import MlflowClient

from locomo_exp import sweep
from locomo_exp.experiment import run_experiment
from locomo_exp.sweep.flips import FlipStore, flip_lines
from locomo_exp.sweep.vs_baseline import compare_with_baseline

# stored verdicts of 12 questions in 6 conversations (1 = correct); the baseline is job 0
BASELINE = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0]
JOB = [1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0]


_write = write_stored_verdicts


def _stored_verdicts(run_dir: Path) -> dict[str, bool]:
    """question id -> the stored verdict (score 100 = right), read from scores.jsonl by hand."""
    out = {}
    for line in (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["question_id"]] = float(row["stored_judge_score"]) >= 50.0
    return out


def test_sweep_tags_each_jobs_flips_against_the_baseline(tmp_path):
    base_file = _write(tmp_path / "base.json", BASELINE)
    job_file = _write(tmp_path / "job.json", JOB)
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    sweep_dir = tmp_path / "sweep"
    done = run_cli_ok(
        "-m", f"data.path={base_file},{job_file}", "tracking.questions=true",
        f"tracking.uri={store}", f"hydra.sweep.dir={sweep_dir}",
        cwd=tmp_path, env=clean_env(),
    )
    summary = json.loads((sweep_dir / "sweep_summary.json").read_text(encoding="utf-8"))
    base_row, job_row = summary["rows"]
    assert summary["baseline"]["job"] == 0 and "flips" not in base_row

    # independent count: the two jobs' scores.jsonl, matched by question id
    base_j = _stored_verdicts(Path(base_row["output_dir"]))
    job_j = _stored_verdicts(Path(job_row["output_dir"]))
    assert len(base_j) == len(job_j) == 12 and set(base_j) == set(job_j)
    expected = {q: "gained" if v else "lost" for q, v in job_j.items() if v != base_j[q]}
    gained = sum(1 for d in expected.values() if d == "gained")
    lost = sum(1 for d in expected.values() if d == "lost")
    assert (gained, lost) == (3, 2)  # pinned against the verdict lists above

    flips = job_row["flips"]
    assert (flips["gained"], flips["lost"], flips["tagged"]) == (gained, lost, gained + lost)
    compared = json.loads((sweep_dir / "vs_baseline" / "1" / "compare.json").read_text())
    [overall] = [r for r in compared["rows"]
                 if r["metric"] == "stored_j" and r["group"] == "overall"]
    assert overall["discordant"] == [gained, lost]  # A = the job: [A only, B only]

    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("locomo_exp")
    assert experiment is not None
    exp_id = experiment.experiment_id
    tagged = client.search_traces(locations=[exp_id], run_id=job_row["run_id"],
                                  filter_string="tag.flipped = 'true'")
    # each tag on the question that flipped, with its direction in the job's view
    assert {t.info.tags["question_id"]: t.info.tags["flip"] for t in tagged} == expected
    untouched = client.search_traces(locations=[exp_id], run_id=base_row["run_id"],
                                     filter_string="tag.flipped = 'true'")
    assert untouched == []

    url = (f"http://127.0.0.1:5000/#/experiments/{exp_id}/runs/{job_row['run_id']}"
           f"/evaluations?compareToRunUuid={base_row['run_id']}&filter=TAG::=::true::flipped")
    assert flips["url"] == url
    markdown = (sweep_dir / "sweep_summary.md").read_text(encoding="utf-8")
    line = f"- job 1: {gained} gained, {lost} lost ({gained + lost} of {gained + lost} tagged " \
        f"in MLflow: {url})"
    assert line in markdown.splitlines() and line in done.stdout
    assert (sweep_dir / "vs_baseline" / "1" / "questions.html").is_file()


def test_flip_lines_say_why_nothing_was_tagged():
    rows = [{"job": 0}, {"job": 1, "flips": {"gained": 2, "lost": 0, "tagged": None, "url": None}}]
    assert flip_lines(rows)[-1] == "- job 1: 2 gained, 0 lost"
    rows[1]["flips"]["tagged"] = 0  # tracking on, tracking.questions=false: no traces
    assert flip_lines(rows)[-1] == (
        "- job 1: 2 gained, 0 lost (not tagged in MLflow: the job logged no question traces; "
        "tracking.questions=true logs them)"
    )
    rows[1]["flips"].update(gained=0)  # nothing flipped: nothing to tag or open
    assert flip_lines(rows)[-1] == "- job 1: 0 gained, 0 lost"
    assert flip_lines([{"job": 0}]) == []


def test_a_store_that_refuses_the_tags_costs_one_warning_not_the_sweep(
    tmp_path, typed_config, caplog
):
    rows = []
    for job, verdicts in enumerate((BASELINE, JOB)):
        data = _write(tmp_path / f"{job}.json", verdicts)
        cfg = typed_config(f"data.path={data}", "tracking.enabled=false")
        run_experiment(cfg, tmp_path / str(job), tmp_path)
        record = sweep.JobRecord(
            job=job, overrides=[f"data.path={data}"], swept={"data.path": str(data)},
            run_name=str(job), status=sweep.COMPLETED, output_dir=str(tmp_path / str(job)),
            f1_variant="locomo", run_id=f"{job}" * 32,
        )
        summary = json.loads((tmp_path / str(job) / "summary.json").read_text())
        rows.append(sweep.summary_row(record, summary))
    store = FlipStore(f"sqlite:///{tmp_path / 'no such dir' / 'mlflow.db'}", "1")
    base = compare_with_baseline(rows, None, tmp_path, bootstrap_samples=50,
                                 permutation_samples=50, store=store)
    assert base is not None and base["job"] == 0
    assert "j" not in rows[1]["vs_baseline"] and rows[1]["vs_baseline"]["stored_j"]["n"] == 12
    job_only = sum(1 for b, j in zip(BASELINE, JOB, strict=True) if j and not b)
    base_only = sum(1 for b, j in zip(BASELINE, JOB, strict=True) if b and not j)
    assert rows[1]["flips"] == {"gained": job_only, "lost": base_only, "tagged": None, "url": None}
    warned = [r.getMessage() for r in caplog.records if "not tagged in MLflow" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("sweep job 1: flipped questions not tagged")


def _plugin_stored_run(path: Path, verdicts: list[int]) -> Path:
    """A stored-verdict run of a benchmark plug-in (kumiho's layout): 12 invented items."""
    rows = [{"question_id": f"cog-{i}", "question": f"An invented trigger {i}.",
             "question_type": "cognitive/state", "ground_truth": "Ann: an invented cue.",
             "prediction": f"An invented reply {i}.", "judge_score": bool(v),
             "metadata": {"base_conv_idx": i % 6, "judge_reason": "invented"}}
            for i, v in enumerate(verdicts)]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_a_plugin_sweep_tags_each_jobs_flips_as_a_locomo_sweep_does(tmp_path):
    """The same flips, page and tags for a benchmark plug-in's sweep (generic code)."""
    base_file = _plugin_stored_run(tmp_path / "base.json", BASELINE)
    job_file = _plugin_stored_run(tmp_path / "job.json", JOB)
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    sweep_dir = tmp_path / "sweep"
    done = run_cli_ok(
        "-m", "data=file", f"data.path={base_file},{job_file}", "tracking.questions=true",
        f"tracking.uri={store}", f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path, env=clean_env(),
    )
    summary = json.loads((sweep_dir / "sweep_summary.json").read_text(encoding="utf-8"))
    base_row, job_row = summary["rows"]
    assert summary["baseline"]["job"] == 0 and "flips" not in base_row
    # by hand, the job against the baseline: right only in the job at items 2, 5, 8; right
    # only in the baseline at items 1, 10
    expected = {"cog-2": "gained", "cog-5": "gained", "cog-8": "gained",
                "cog-1": "lost", "cog-10": "lost"}
    assert {f"cog-{i}": "gained" if j else "lost"
            for i, (b, j) in enumerate(zip(BASELINE, JOB, strict=True)) if b != j} == expected
    flips = job_row["flips"]
    assert (flips["gained"], flips["lost"], flips["tagged"]) == (3, 2, 5)
    client = MlflowClient(store)
    exp_id = client.get_experiment_by_name("locomo_exp").experiment_id
    tagged = client.search_traces(locations=[exp_id], run_id=job_row["run_id"],
                                  filter_string="tag.flipped = 'true'")
    assert {t.info.tags["question_id"]: t.info.tags["flip"] for t in tagged} == expected
    assert client.search_traces(locations=[exp_id], run_id=base_row["run_id"],
                                filter_string="tag.flipped = 'true'") == []
    url = (f"http://127.0.0.1:5000/#/experiments/{exp_id}/runs/{job_row['run_id']}"
           f"/evaluations?compareToRunUuid={base_row['run_id']}&filter=TAG::=::true::flipped")
    assert flips["url"] == url
    line = f"- job 1: 3 gained, 2 lost (5 of 5 tagged in MLflow: {url})"
    assert line in (sweep_dir / "sweep_summary.md").read_text().splitlines()
    assert line in done.stdout
    page = (sweep_dir / "vs_baseline" / "1" / "questions.html").read_text(encoding="utf-8")
    # the page pairs A = the job with B = the baseline; its flip column is B's direction
    assert page.count('"gained"') == 2 and page.count('"lost"') == 3
