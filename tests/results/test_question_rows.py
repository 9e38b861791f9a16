"""Each benchmark's scores.jsonl rows as question rows (issue 30 §1): the fields each maps."""

from __future__ import annotations

import logging

from locomo_exp.benchmarks.beam.questions import beam_question_rows
from locomo_exp.benchmarks.locomo_plus.questions import plus_question_rows
from locomo_exp.benchmarks.longmemeval.questions import lme_question_rows
from locomo_exp.tracking.questions import QuestionLogging


def test_longmemeval_rows_map_type_gold_hypothesis_and_the_stored_label() -> None:
    [row] = lme_question_rows([{
        "question_id": "e56a43b9_abs", "question_type": "multi-session", "abstention": True,
        "question": "How much?", "answer": "$50", "hypothesis": "You did not say.",
        "stored_label": False, "stored_label_model": "gpt-4o",
    }], None)
    assert (row.question_id, row.kind, row.gold, row.prediction) == (
        "e56a43b9_abs", "multi-session", "$50", "You did not say.")
    assert row.tags == {"abstention": "true"}
    [stored] = row.verdicts
    assert (stored.name, stored.passed, stored.source) == ("stored_j", False, "gpt-4o")


def test_longmemeval_judge_runs_come_first_with_their_reasons() -> None:
    [row] = lme_question_rows([{
        "question_id": "q1", "question_type": "temporal-reasoning", "question": "When?",
        "answer": "May", "hypothesis": "In May", "stored_label": True, "j_mean": 100.0,
        "j_runs": [{"run": 0, "score": 100.0, "explanation": "same month"}],
    }], "gpt-4o-2024-08-06")
    assert [v.name for v in row.verdicts] == ["judge", "stored_j"]
    assert row.verdicts[0].reason == "same month"
    assert row.verdicts[0].source == "gpt-4o-2024-08-06"
    assert row.metrics == {}  # one run: no j_mean metric


def test_beam_rows_keep_each_profiles_score_as_a_metric() -> None:
    [row] = beam_question_rows([{
        "question_id": "3:7", "chat": "3", "ability": "temporal_reasoning", "difficulty": "hard",
        "beam-nugget": {"score": 0.75, "pass": True}, "beam-official": {"score": 0.5, "reason": ""},
        "stored_score": None, "judge_failed": True,
    }])
    assert row.kind == "temporal_reasoning"
    assert row.metrics == {"beam-nugget": 0.75, "beam-official": 0.5}
    assert row.tags == {"chat": "3", "difficulty": "hard", "judge_failed": "true"}
    assert row.verdicts == ()


def test_locomo_plus_half_credit_passes_and_unscored_stays_unscored() -> None:
    half, unscored = plus_question_rows([
        {"item_id": "a", "category": "causal", "relation": "r", "question": "q",
         "prediction": "p", "stored_label": "partial", "score": 0.5, "score_authors": 0.0},
        {"item_id": "b", "category": "causal", "relation": "r", "question": "q",
         "prediction": "p", "judge_labels": ["???"], "judge_errors": ["no label"],
         "score": None, "score_authors": None},
    ], "claude-sonnet-4-6")
    assert half.headline is not None and half.headline.passed is True
    assert half.headline.score == 50.0 and half.headline.reason == "stored label: partial"
    assert half.metrics == {"score": 0.5, "score_authors": 0.0}
    assert unscored.headline is not None and unscored.headline.passed is None
    assert unscored.headline.reason == "run 1: ???; no label"


def test_a_store_failure_is_one_warning_and_the_job_goes_on(caplog) -> None:
    def failing(rows, run_id):
        raise RuntimeError("database is locked")

    caplog.set_level(logging.WARNING)
    logging_job = QuestionLogging([], "run", log_traces=failing)
    assert logging_job.wait() == {}
    assert "per-question traces not logged to MLflow: database is locked" in caplog.text
