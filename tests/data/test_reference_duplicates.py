"""data.reference=locomo10.json with questions the dataset holds twice under two categories.

``What did Gina receive from a dance contest?`` is in conv-30 as category 4 (answer
``a trophy``) and as category 5 (adversarial_answer ``a trophy``). Zep's responses file has
no categories and holds it once, as category 4 (its grades file says so).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from locomo_exp.config import DataConfig
from locomo_exp.data import DataValidationError, load_results
from locomo_exp.report.input import input_header_lines

GINA = "What did Gina receive from a dance contest?"


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _row(question: str, gold: str, conversation: str = "0") -> dict[str, str]:
    return {"question": question, "ground_truth": gold, "predicted_answer": "x",
            "conversation_id": conversation}


def test_zep_responses_take_the_datasets_categories_as_its_grades_file_gives_them(
    shared_data: Path, caplog: pytest.LogCaptureFixture
) -> None:
    responses = shared_data / "predictions" / "zep_locomo_responses.json"
    with caplog.at_level("WARNING"):
        loaded = load_results(responses, DataConfig(reference=str(shared_data / "locomo10.json")))
    # shared/data/README.md: Zep's 1,540 questions, categories 1-4 as in locomo10.json
    assert Counter(r.category for r in loaded.records) == {1: 282, 2: 321, 3: 96, 4: 841}
    check = loaded.reference
    assert check is not None
    assert (check.matched, check.unmatched, check.category_differs) == (1540, 0, 0)
    assert (check.categories_from_reference, check.categories_without_5) == (1540, 1)
    gina = [r for r in loaded.records if r.question == GINA]
    assert [(r.conversation_id, r.category) for r in gina] == [("locomo_experiment_user_1", 4)]
    grades = load_results(shared_data / "predictions" / "zep_locomo_grades.json")
    assert [r.category for r in loaded.records] == [r.category for r in grades.records]
    assert "1 question is in" in caplog.text and "under category 5 and another" in caplog.text
    line = input_header_lines({"reference": check.to_dict()})[0]
    assert line.endswith("1540 categories taken from it (1 question is in it under category 5 and "
                         "another with the same gold answer: given the other, as the file has no "
                         "category-5 question)")


def _conv30(shared_data: Path) -> dict:
    samples = json.loads((shared_data / "locomo10.json").read_text())
    return next(s for s in samples if s["sample_id"] == "conv-30")


def test_a_file_with_category_5_questions_gets_the_ambiguity_named(shared_data: Path,
                                                                   tmp_path: Path) -> None:
    conv = _conv30(shared_data)
    adversarial = next(qa for qa in conv["qa"] if qa["category"] == 5 and qa["question"] != GINA)
    rows = [_row(GINA, "a trophy"), _row(adversarial["question"], adversarial["adversarial_answer"])]
    path = _write(tmp_path / "with_5.json", rows)
    reference = (shared_data / "locomo10.json").resolve()  # the message names the resolved path
    with pytest.raises(DataValidationError) as info:
        load_results(path, DataConfig(reference=str(reference)))
    assert str(info.value).splitlines()[0] == (
        f"{path}: record [0]: field 'category': 2 records in data.reference ({reference}) match "
        "this conversation and question and the same gold answer 'a trophy', with categories 4 "
        "and 5; give the record its category, or take the categories from another file of the "
        "same questions with data.categories_from=<file>. Fix the file, or set "
        "data.on_invalid=skip to score the valid records."
    )


def test_the_gold_answer_picks_the_category_when_it_differs(tmp_path: Path) -> None:
    question = "What did Ann win?"
    dataset = [{"sample_id": "conv-1", "qa": [
        {"question": question, "answer": "a cup", "category": 4},
        {"question": question, "adversarial_answer": "a medal", "category": 5},
        {"question": "Where does Ann live?", "adversarial_answer": "Oslo", "category": 5},
    ]}]
    reference = _write(tmp_path / "dataset.json", dataset)
    rows = [_row(question, "A cup."), _row(question, "a medal"), _row("Where does Ann live?", "Oslo")]
    loaded = load_results(_write(tmp_path / "a.json", rows), DataConfig(reference=str(reference)))
    assert [r.category for r in loaded.records] == [4, 5, 5]
    assert loaded.reference is not None and loaded.reference.categories_without_5 == 0
    path = _write(tmp_path / "b.json", [_row(question, "a bowl"), rows[2]])
    with pytest.raises(DataValidationError, match=r"record \[0\]: field 'category': 2 records in "
                       r"data.reference \(.*\) match this conversation and question, with "
                       r"categories 4 and 5; "):
        load_results(path, DataConfig(reference=str(reference)))


def test_a_file_with_its_own_categories_keeps_them_and_takes_none(shared_data: Path) -> None:
    honcho = shared_data / "predictions" / "honcho_locomo10_qa.json"
    loaded = load_results(honcho, DataConfig(reference=str(shared_data / "locomo10.json")))
    # shared/data/README.md: 1,986 questions, 1: 282, 2: 321, 3: 96, 4: 841, 5: 446
    assert Counter(r.category for r in loaded.records) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    check = loaded.reference
    assert check is not None
    assert (check.matched, check.unmatched, check.category_differs) == (1986, 0, 0)
    assert (check.categories_from_reference, check.categories_without_5) == (0, 0)
    assert sorted(r.category for r in loaded.records if r.question == GINA) == [4, 5]
