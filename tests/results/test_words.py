"""Counted nouns: ``1 question`` / ``2 questions`` wherever a count meets a noun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_job

from locomo_exp.results.words import counted


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((1, "question"), "1 question"),
        ((0, "question"), "0 questions"),
        ((2, "conversation"), "2 conversations"),
        ((2, "batch", "batches"), "2 batches"),
        ((1, "batch", "batches"), "1 batch"),
    ],
)
def test_counted_takes_the_noun_in_the_number_of_its_count(args: tuple, expected: str) -> None:
    assert counted(*args) == expected


def test_counted_writes_thousands_when_asked() -> None:
    assert counted(1540, "question", thousands=True) == "1,540 questions"
    assert counted(1540, "question") == "1540 questions"


def test_one_scored_question_is_one_question_in_the_console_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from locomo_exp.cli import print_result

    path = tmp_path / "one.json"
    path.write_text(json.dumps([{"question": "Where?", "ground_truth": "Oslo",
                                 "predicted_answer": "Oslo", "category": 4,
                                 "conversation_id": "c1"}]), encoding="utf-8")
    result = run_job(tmp_path, path=path)
    print_result(result)
    out = capsys.readouterr().out
    assert f"Scored 1 question from {path}" in out
    report = (tmp_path / "out" / "report.md").read_text()
    assert "- Questions: 1 from 1 conversation; per category:" in report
    assert "- **Subset: 1 question from 1 conversation — not comparable" in report
