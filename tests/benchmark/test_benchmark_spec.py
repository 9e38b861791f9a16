"""One home for LoCoMo's facts (issue 17 §4): sizes, question sets and the normaliser."""

from __future__ import annotations

import pytest

from locomo_exp.benchmark import LOCOMO
from locomo_exp.benchmark.locomo import (
    LOCOMO10_CATEGORY_SIZES,
    normalize_question,
    question_set_name,
)
from locomo_exp.data.question_set import detect_question_set
from locomo_exp.report.card import question_set_label
from locomo_exp.results import QARecord

FULL = {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}  # locomo10.json, counted by hand from the file


def test_locomo_spec_holds_the_dataset_counts() -> None:
    assert dict(LOCOMO10_CATEGORY_SIZES) == FULL
    assert LOCOMO.name == "locomo" and LOCOMO.category_sizes == FULL
    assert LOCOMO.full_questions == {"overall_1_4": 1540, "overall": 1986}


@pytest.mark.parametrize(
    ("n5", "name", "label"),
    [(0, "1540", "1,540"), (2, "1542", "1,542"), (446, "1986", "1,986"), (3, None, "custom (1,543)")],
)
def test_one_classifier_names_the_set_for_the_loader_and_the_card(
    n5: int, name: str | None, label: str
) -> None:
    per_category = {**FULL, 5: n5}
    assert question_set_name(per_category) == name
    assert question_set_label({str(c): n for c, n in per_category.items()}) == label
    records = [
        QARecord(question_id=f"{c}-{i}", question="q", ground_truth="a", prediction="p", category=c)
        for c, n in per_category.items()
        for i in range(n)
    ]
    assert detect_question_set(records).name == (name or "custom")


def test_the_one_question_normaliser() -> None:
    assert normalize_question("When did  Caroline go to the LGBTQ support group?") == (
        "when did caroline go to the lgbtq support group"
    )
    assert normalize_question("Caf\u0065\u0301 \uff21") == normalize_question("café a")  # NFKC
    assert normalize_question("STRASSE") == normalize_question("straße")  # case folded
