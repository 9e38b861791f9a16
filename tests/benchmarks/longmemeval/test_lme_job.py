"""The plain command on LongMemEval files: published figures reproduced from stored labels."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import PROJECT_ROOT
from lme_helpers import GPT4O, HUNK_MINI, HYPOTHESES, REFERENCE, need_shared, write_json

from locomo_exp.benchmarks.longmemeval.detect import is_longmemeval
from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
from locomo_exp.benchmarks.longmemeval.tracking import run_metrics

PLAIN = ("data=file", "tracking=none")

GPT4O_FIGURES = {
    "overall": "72.40",
    "task_avg": "72.75",
    "abstention": "70.00",
    "single-session-user": "94.29",
    "single-session-assistant": "96.43",
    "single-session-preference": "40.00",
    "multi-session": "66.92",
    "temporal-reasoning": "59.40",
    "knowledge-update": "79.49",
}
HUNK_FIGURES = {
    "overall": "62.00",
    "task_avg": "65.96",
    "abstention": "90.00",
    "single-session-user": "88.57",
    "single-session-assistant": "87.50",
    "single-session-preference": "46.67",
    "multi-session": "46.62",
    "temporal-reasoning": "44.36",
    "knowledge-update": "82.05",
}


def _printed(figures):
    out = {k: f"{figures[k]['accuracy'] * 100:.2f}" for k in ("overall", "task_avg", "abstention")}
    out.update({k: f"{v['accuracy'] * 100:.2f}" for k, v in figures["per_type"].items()})
    return out


@pytest.mark.parametrize(
    ("path", "figures", "judge"),
    [
        pytest.param(GPT4O, GPT4O_FIGURES, "gpt-4o-2024-08-06", id="memory-agents-gpt-4o"),
        pytest.param(HUNK_MINI, HUNK_FIGURES, "gpt-4o-mini-2024-07-18", id="hunk0724-gpt-4o-mini"),
    ],
)
def test_plain_command_reproduces_the_published_figures(typed_config, tmp_path, path, figures, judge):
    need_shared()
    cfg = typed_config(*PLAIN, f"data.path={path}", f"data.reference={REFERENCE}")
    assert is_longmemeval(cfg, tmp_path)  # detected with no option
    result = run_longmemeval(cfg, tmp_path / "out", tmp_path)
    headline = result.summary["headline"]
    assert headline["source"] == "stored" and headline["judge_model"] == judge
    assert _printed(headline["figures"]) == figures
    report = (result.output_dir / "report.md").read_text()
    for value in figures.values():
        assert f"| {value} |" in report
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert _printed(saved["headline"]["figures"]) == figures
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["benchmark"] == "longmemeval"
    assert card["reference"]["sha256"].startswith("6250abfa2660ab81")
    assert card["reference"]["variant"] == "questions only"
    metrics = run_metrics(saved)
    assert f"{metrics['lme_stored/overall']:.2f}" == figures["overall"]
    assert f"{metrics['lme_stored/task_avg']:.2f}" == figures["task_avg"]
    assert f"{metrics['lme_stored/abstention']:.2f}" == figures["abstention"]
    assert f"{metrics['lme_stored/multi-session']:.2f}" == figures["multi-session"]
    rows = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").open()]
    assert len(rows) == 500 and sum(r["abstention"] for r in rows) == 30


def test_benchmark_longmemeval_forces_the_job_and_refuses_a_locomo_file(typed_config, tmp_path):
    need_shared()
    locomo = write_json(
        tmp_path / "locomo.json",
        [{"question": "q?", "ground_truth": "g", "predicted_answer": "p", "category": 1}],
    )
    cfg = typed_config(*PLAIN, "benchmark=longmemeval", f"data.path={locomo}",
                       f"data.reference={REFERENCE}")
    assert is_longmemeval(cfg, tmp_path)
    with pytest.raises(ValueError, match=r"LoCoMo results file \(layout qa_results\)"):
        run_longmemeval(cfg, tmp_path / "out", tmp_path)


def test_a_locomo_file_is_named_as_one_before_data_reference_is_asked_for(typed_config, tmp_path):
    # trial 5, finding 16: without data.reference the LoCoMo file was first asked for a
    # reference; the line that says what is wrong came only once one was given
    locomo = write_json(
        tmp_path / "locomo.json",
        [{"question": "q?", "ground_truth": "g", "predicted_answer": "p", "category": 1}],
    )
    cfg = typed_config(*PLAIN, "benchmark=longmemeval", f"data.path={locomo}")
    with pytest.raises(ValueError, match=r"is a LoCoMo results file \(layout qa_results\), not "
                       "LongMemEval answers"):
        run_longmemeval(cfg, tmp_path / "out", tmp_path)


def test_locomo_files_are_not_taken_for_longmemeval(typed_config, tmp_path, fixtures_dir):
    cfg = typed_config("data=example", "tracking=none")
    assert not is_longmemeval(cfg, tmp_path)


def test_no_reference_is_one_line(typed_config, tmp_path):
    need_shared()
    cfg = typed_config(*PLAIN, f"data.path={GPT4O}")
    with pytest.raises(ValueError, match="data.reference=<longmemeval_oracle.json"):
        run_longmemeval(cfg, tmp_path / "out", tmp_path)


def test_hypotheses_without_labels_need_the_judge(typed_config, tmp_path):
    need_shared()
    cfg = typed_config(*PLAIN, f"data.path={HYPOTHESES}", f"data.reference={REFERENCE}")
    with pytest.raises(ValueError, match="no autoeval_label"):
        run_longmemeval(cfg, tmp_path / "out", tmp_path)


@pytest.mark.slow
def test_plain_command_prints_the_figures_and_logs_mlflow(tmp_path):
    need_shared()
    done = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "data=file", f"data.path={GPT4O}",
         f"data.reference={REFERENCE}", f"tracking.uri=sqlite:///{tmp_path}/mlflow.db",
         f"hydra.run.dir={tmp_path}/run"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    for line in ("overall                        500    72.40",
                 "task-averaged                    6    72.75",
                 "abstention (_abs)               30    70.00"):
        assert line in done.stdout
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    run = client.search_runs([client.get_experiment_by_name("locomo_exp").experiment_id])[0]
    assert round(run.data.metrics["lme_stored/overall"], 2) == 72.40
    assert round(run.data.metrics["lme_stored/task_avg"], 2) == 72.75
    assert round(run.data.metrics["lme_stored/abstention"], 2) == 70.00
    assert round(run.data.metrics["lme_stored/knowledge-update"], 2) == 79.49
    assert run.data.tags["benchmark"] == "longmemeval"  # a tag, as every pipeline benchmark's
    assert run.data.params["data.file"] == GPT4O.name
    assert not {"data.file", "locomo_exp.version", "scorer"} & set(run.data.tags)  # params
    assert not set(run.data.params) & set(run.data.tags)  # no tag repeats a param


def test_human_labels_are_compared_with_the_stored_verdicts(typed_config, tmp_path):
    """Labels equal to the stored verdicts except 10 flipped: 490/500 agreement."""
    need_shared()
    rows = [json.loads(line) for line in GPT4O.open()]
    labels = [
        {"question_id": r["question_id"],
         "label": (not r["autoeval_label"]["label"]) if i < 10 else r["autoeval_label"]["label"]}
        for i, r in enumerate(rows)
    ]
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    cfg = typed_config(*PLAIN, f"data.path={GPT4O}", f"data.reference={REFERENCE}",
                       f"judge.labels={path}")
    result = run_longmemeval(cfg, tmp_path / "out", tmp_path)
    section = result.summary["labels"]
    assert section["n"] == 500 and section["agreement"]["count"] == 490
    assert section["verdicts"] == "stored (gpt-4o-2024-08-06)"
    assert section["corrected_overall"]["accuracy"] is not None
    assert "## Against human labels" in (result.output_dir / "report.md").read_text()
    assert round(run_metrics(result.summary)["lme_stored/labels_agreement"], 2) == 98.0
