"""The judged audit's controls are rows of their own in questions.html and the MLflow traces,
tagged ``audit.control=<kind>`` so a user can filter to them (issue 30 §1)."""

from __future__ import annotations

import json
import re
from typing import Any

from fake_anthropic import accept_all
from mlflow import MlflowClient

from locomo_exp.report.question_rows import audit_control_rows
from locomo_exp.results.questions import QuestionRow


def _island(page: str) -> dict[str, list[Any]]:
    found = re.search(r"<script id='rows' type='application/json'>(.*?)</script>", page, re.S)
    assert found is not None
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_each_control_is_a_tagged_row_in_the_page_and_a_trace(fake_anthropic, run_judged):
    fake_anthropic.responder = accept_all()  # the judge accepts everything
    result = run_judged("scorer=judge", "data=example", "judge.runs=1",
                        "judge.min_successful_runs=1", "judge.audit.n=2", "judge.audit.max_share=null",
                        "tracking.enabled=true", "tracking.questions=true")
    summary = json.loads((result.output_dir / "summary.json").read_text())
    audit = summary["judge"]["trust"]["audit"]
    expected = {cid: cid.split(":")[1] for cid in audit["verdicts"]}  # id -> kind
    assert expected and all(v == 100.0 for v in audit["verdicts"].values())
    reject_kinds = {k for k, v in audit["kinds"].items() if not v["expected_accept"]}
    # every control accepted: each reject-kind control is a false accept, the rest right
    false_accepts = sum(1 for kind in expected.values() if kind in reject_kinds)
    assert false_accepts == sum(audit["kinds"][k]["n_controls"] for k in reject_kinds) > 0

    data = _island((result.output_dir / "questions.html").read_text(encoding="utf-8"))
    columns = data["columns"]
    control_col, error_col = columns.index("audit.control"), columns.index("audit.error")
    controls = {r[0]: r for r in data["rows"] if r[control_col]}
    assert {qid: r[control_col] for qid, r in controls.items()} == expected
    assert sum(r[error_col] for r in controls.values()) == false_accepts
    n_questions = sum(1 for _ in (result.output_dir / "scores.jsonl").open())
    assert len(data["rows"]) == n_questions + len(expected)  # the questions, then controls

    client = MlflowClient()
    traces = client.search_traces(locations=[result.experiment_id], run_id=result.run_id,
                                  max_results=500)
    tagged = {t.info.tags["question_id"]: t.info.tags for t in traces
              if "audit.control" in t.info.tags}
    assert {qid: tags["audit.control"] for qid, tags in tagged.items()} == expected
    for qid, tags in tagged.items():
        assert tags["audit.expected"] == ("reject" if expected[qid] in reject_kinds else "accept")
        assert tags["audit.source"] == qid.split(":", 2)[2]
    assert len(traces) == n_questions + len(expected)


def test_a_control_rows_verdict_says_right_false_accept_or_reject() -> None:
    source = QuestionRow("q1", "When?", "temporal", "in May", "May 2023")
    audit = {"threshold": 50.0,
             "kinds": {"gold_as_answer": {"expected_accept": True},
                       "non_answer": {"expected_accept": False}},
             "verdicts": {"audit:gold_as_answer:q1": 30.0, "audit:non_answer:q1": 80.0,
                          "audit:gold_as_answer:q9": None}}
    rows = audit_control_rows(audit, [source], "judge-m")
    assert [(r.question_id, r.headline.passed, r.metrics.get("audit.error")) for r in rows] == [
        ("audit:gold_as_answer:q1", False, 1.0), ("audit:non_answer:q1", True, 1.0),
        ("audit:gold_as_answer:q9", None, None)]
    assert rows[0].headline.reason == ("audit control (gold_as_answer): a correct judge accepts "
                                       "it; the judge rejected it (30): a false reject")
    assert rows[1].headline.reason.endswith("the judge accepted it (80): a false accept")
    assert (rows[0].question, rows[0].gold, rows[2].question) == ("When?", "May 2023", "")
    assert rows[1].tags == {"audit.control": "non_answer", "audit.expected": "reject",
                            "audit.source": "q1"}
    assert audit_control_rows(None, [source], "m") == []


def test_a_rubric_item_control_finds_its_question_and_the_kinds_expected_flag() -> None:
    """A plug-in's audit layout: ``judge.audit``, ``expected`` 1/0, ids ``...#item<k>``."""
    from locomo_exp.report.question_rows import summary_audit

    source = QuestionRow("100K_0_q1_abstention", "What?", "abstention", "", "")
    summary = {"judge": {"audit": {
        "kinds": {"other_gold": {"expected": 0}, "gold_as_answer": {"expected": 1}},
        "verdicts": {"audit:other_gold:100K_0_q1_abstention#item2": 0.0,
                     "audit:gold_as_answer:100K_0_q1_abstention#item0": 0.0}}}}
    rows = audit_control_rows(summary_audit(summary), [source], "m")
    assert [(r.tags["audit.expected"], r.question, r.metrics["audit.error"]) for r in rows] == [
        ("reject", "What?", 0.0), ("accept", "What?", 1.0)]
    assert summary_audit({"judge": None}) is None and summary_audit([]) is None
