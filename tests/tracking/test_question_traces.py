"""Every question as an MLflow trace (issue 30 §1, §2): inputs, gold tag, assessments, flips.

The store is the sqlite file the autouse fixture puts under tmp_path; the checks read it back
through MLflow's client (``search_traces``, the traces' assessments and tags).
"""

from __future__ import annotations

import mlflow
from mlflow import MlflowClient

from locomo_exp.report.question_rows import locomo_question_rows
from locomo_exp.tracking.questions import (
    EVALUATION_RUN_TYPE,
    FLIP_FILTER,
    evaluations_url,
    log_question_traces,
    run_question_traces,
    tag_flips,
)

ROWS = [
    {"question_id": "1:0", "category_name": "temporal", "question": "When did Jon lose his job?",
     "ground_truth": "19 January, 2023", "prediction": "19 January 2023", "f1": 1.0,
     "bleu1": 0.72, "j_mean": 50.0,
     "j_runs": [{"run": 1, "score": 100.0, "explanation": "same date", "outcome": "valid"},
                {"run": 2, "score": 0.0, "explanation": "no year", "outcome": "valid"}]},
    {"question_id": "1:1", "category_name": "single_hop", "question": "What does Gina sell?",
     "ground_truth": "clothes", "prediction": "shoes", "f1": 0.0, "bleu1": 0.0,
     "j_mean": None,
     "j_runs": [{"run": 1, "score": None, "explanation": "", "error": "HTTP 529",
                 "outcome": "api_error"},
                {"run": 2, "score": None, "explanation": "", "error": "HTTP 529",
                 "outcome": "api_error"}],
     "stored_judge_score": 0.0},
]


def test_each_question_is_a_trace_of_the_run_with_its_f1_and_each_judge_verdict() -> None:
    questions = locomo_question_rows(ROWS, "claude-sonnet-4-6")
    experiment = MlflowClient().create_experiment("questions")  # no global active experiment
    with mlflow.start_run(experiment_id=experiment) as run:
        ids = log_question_traces(questions, run.info.run_id)
    client = MlflowClient()
    traces = client.search_traces(locations=[run.info.experiment_id], run_id=run.info.run_id)
    assert sorted(t.info.trace_id for t in traces) == sorted(ids.values())
    first = client.get_trace(ids["1:0"])
    assert first.info.tags["gold"] == "19 January, 2023"
    assert first.info.tags["question_id"] == "1:0" and first.info.tags["kind"] == "temporal"
    assert first.info.trace_metadata["mlflow.sourceRun"] == run.info.run_id
    root = first.data.spans[0]
    assert root.inputs == {"question_id": "1:0", "question": "When did Jon lose his job?",
                           "kind": "temporal"}
    assert root.outputs == "19 January 2023"
    by_name = {a.name: a for a in first.info.assessments}
    assert by_name["f1"].value == 1.0 and by_name["bleu1"].value == 0.72
    assert by_name["j_mean"].value == 0.5  # 50 of 100 as 0-1
    # the mean 50 passes (>= 50); each run's own verdict with its own reason
    assert by_name["judge"].value is True
    assert by_name["judge_run_1"].value is True and by_name["judge_run_1"].rationale == "same date"
    assert by_name["judge_run_2"].value is False and by_name["judge_run_2"].rationale == "no year"
    assert by_name["judge_run_2"].source.source_id == "claude-sonnet-4-6"
    assert by_name["judge_run_2"].source.source_type == "LLM_JUDGE"
    assert not any(a.name == "gold" for a in first.info.assessments)  # a tag, not an expectation
    second = {a.name: a for a in client.get_trace(ids["1:1"]).info.assessments}
    assert second["judge"].value is None and second["judge_run_1"].error is not None
    assert second["judge_run_1"].error.error_message == "HTTP 529"
    assert second["stored_j"].value is False and second["stored_j"].source.source_id == "input file"
    assert client.get_run(run.info.run_id).data.tags["mlflow.runType"] == EVALUATION_RUN_TYPE


def test_flips_are_tagged_on_the_traces_of_their_questions_only() -> None:
    questions = locomo_question_rows(ROWS, None)
    experiment = MlflowClient().create_experiment("flips")
    with mlflow.start_run(experiment_id=experiment) as run:
        log_question_traces(questions, run.info.run_id)
    assert tag_flips(run.info.run_id, run.info.experiment_id, {"1:1": "lost", "9:9": "gained"}) == 1
    client = MlflowClient()
    traces = run_question_traces(run.info.run_id, run.info.experiment_id)
    flipped = client.get_trace(traces["1:1"]).info.tags
    assert flipped["flipped"] == "true" and flipped["flip"] == "lost"
    assert "flipped" not in client.get_trace(traces["1:0"]).info.tags
    found = client.search_traces(locations=[run.info.experiment_id],
                                 filter_string="tag.flipped = 'true'")
    assert [t.info.trace_id for t in found] == [traces["1:1"]]


def test_the_compare_address_has_the_form_of_mlflows_evaluations_page() -> None:
    url = evaluations_url("http://127.0.0.1:5000/", "3", "b" * 32, "a" * 32, [FLIP_FILTER])
    assert url == (
        "http://127.0.0.1:5000/#/experiments/3/runs/" + "b" * 32 + "/evaluations"
        "?compareToRunUuid=" + "a" * 32 + "&filter=TAG::=::true::flipped"
    )


def test_a_judged_runs_default_name_says_which_judge_and_how_many_runs() -> None:
    from locomo_exp.tracking import single_run_name

    assert single_run_name("zep_locomo_grades", "both", f1_variant="locomo", limit=None,
                           judge_model="claude-sonnet-4-6", judge_runs=3) == (
        "zep_locomo_grades · both · sonnet-4-6 ×3")
    assert single_run_name("memobase_eval_0710", "f1", f1_variant="squad", limit=200,
                           judge_model=None) == "memobase_eval_0710 · f1 · f1=squad · sample 200"
