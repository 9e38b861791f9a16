"""Numbers given as answers read as text by one documented rule (trial 4, finding 9).

``{"ground_truth": "12", "predicted_answer": 12.0}`` read ``12.0`` as ``"12.0"``: F1 0 against
the gold ``"12"``, with no word of it. An integral float now reads as the integer; other floats
as Python's shortest round-trip ``repr``; the run says once how many answers were numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_job

from locomo_exp.data.answer_values import (
    answer_text,
    gold_answer,
    number_conversions,
    prediction_answer,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(12.0, "12", id="integral-float"),
        pytest.param(-3.0, "-3", id="negative-integral"),
        pytest.param(2019, "2019", id="int"),
        pytest.param(2.5, "2.5", id="fraction"),
        pytest.param(0.1, "0.1", id="shortest-repr-no-noise"),
        pytest.param(1e20, "1e+20", id="beyond-2**53-keeps-repr"),
        pytest.param(2.0**52, "4503599627370496", id="below-2**53-as-integer"),
    ],
)
def test_a_number_reads_as_text_by_the_documented_rule(value: float, text: str) -> None:
    assert prediction_answer(value) == (text, None)
    assert gold_answer(value).text == text
    assert answer_text([value, "x"]) == f"{text}, x"
    assert number_conversions(value) == [(repr(value), text)]


def test_text_null_booleans_and_non_finite_numbers_are_no_conversion() -> None:
    for value in ("12.0", None, True, float("nan"), float("inf")):
        assert number_conversions(value) == []
    assert number_conversions([1.0, "a", 2]) == [("1.0", "1"), ("2", "2")]


def test_numeric_answers_are_scored_as_text_and_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from locomo_exp.cli import print_result

    path = tmp_path / "numbers.json"
    path.write_text(json.dumps([
        {"question": "How many?", "ground_truth": "12", "predicted_answer": 12.0, "category": 4},
        {"question": "Which year?", "ground_truth": 2019, "predicted_answer": 2019,
         "category": 2},
    ]))
    result = run_job(tmp_path, path=path)
    rows = [json.loads(line) for line in (result.output_dir / "scores.jsonl").open()]
    assert [(r["prediction"], r["f1"]) for r in rows] == [("12", 1.0), ("2019", 1.0)]
    numbers = result.summary["input"]["numeric_answers"]
    # trial 5 #16: which of them were golds (the answer key), which predictions
    assert numbers == {"n": 3, "n_gold": 1, "n_prediction": 2, "examples": ["12.0 -> 12", "2019"]}
    line = "1 gold answer and 2 predictions were numbers, read as text: 12.0 -> 12, 2019"
    assert f"- {line} (docs/formats.md)" in (result.output_dir / "report.md").read_text()
    print_result(result)
    assert capsys.readouterr().out.count(line) == 1


def test_a_file_of_text_answers_says_nothing_of_numbers(tmp_path: Path) -> None:
    path = tmp_path / "text.json"
    path.write_text(json.dumps([
        {"question": "Which year?", "ground_truth": "2019", "predicted_answer": "2019",
         "category": 2},
    ]))
    result = run_job(tmp_path, path=path)
    assert "numeric_answers" not in result.summary["input"]
    assert "read as text" not in (result.output_dir / "report.md").read_text()


def test_a_summary_written_before_golds_and_predictions_were_told_apart_still_reads() -> None:
    from locomo_exp.report.input import numbers_line

    old = {"numeric_answers": {"n": 2, "examples": ["2019"]}}
    assert numbers_line(old) == "2 answers were numbers, read as text: 2019"
    golds = {"numeric_answers": {"n": 6, "n_gold": 6, "n_prediction": 0,
                                 "examples": ["2022", "2", "3"]}}
    assert numbers_line(golds) == "6 gold answers were numbers, read as text: 2022, 2, 3"
