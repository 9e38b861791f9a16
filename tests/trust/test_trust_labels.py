"""Human labels: reading, matching, agreement/kappa/sensitivity/specificity, corrected J;
agreement with stored verdicts."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from locomo_exp.judge.protocols import get_protocol
from locomo_exp.results import QARecord
from locomo_exp.stats.correction import corrected_j, rogan_gladen
from locomo_exp.trust.labels import (
    LabelsError,
    compare_with_labels,
    compare_with_stored,
    load_labels,
    match_labels,
)

ACCEPT = get_protocol("rubric").accept_threshold
"""The accept threshold of the built-in protocols (50)."""

# The 40 invented questions of tests/fixtures/trust/labels_40.*: q00..q39, category
# 1 + i % 4, conversation conv-a (i < 20) or conv-b. Human labels: q00-q22 correct,
# q23-q37 wrong, q38-q39 AMBIGUOUS. Judge: accepts q00-q19 (tp 20), rejects q20-q22
# (fn 3), accepts q23-q26 (fp 4), rejects q27-q37 (tn 11); accepts q38, rejects q39.


def _records() -> list[QARecord]:
    return [
        QARecord(
            question_id=f"q{i:02d}",
            question=f"Invented question number {i}?",
            ground_truth=f"gold {i}",
            prediction=f"answer {i}",
            category=1 + i % 4,
            conversation_id="conv-a" if i < 20 else "conv-b",
            position=i,
        )
        for i in range(40)
    ]


def _verdicts() -> dict[str, float]:
    verdicts: dict[str, float] = {}
    for i in range(40):
        accepted = i < 20 or 23 <= i <= 26 or i == 38
        verdicts[f"q{i:02d}"] = 100.0 if accepted else 0.0
    verdicts["q05"] = 50.0  # exactly the threshold: accepted
    verdicts["q30"] = 49.0  # just below: rejected
    return verdicts


@pytest.fixture(params=["labels_40.csv", "labels_40.json"])
def labels_path(request, fixtures_dir: Path) -> Path:
    return fixtures_dir / "trust" / request.param


def test_labels_file_gives_exact_kappa_sensitivity_specificity(labels_path: Path) -> None:
    labels = load_labels(labels_path)
    assert len(labels.labels) == 40
    report = compare_with_labels(_records(), _verdicts(), labels, threshold=ACCEPT)
    overall = report.overall
    assert overall.table == ((20, 3), (4, 11))
    assert report.n_ambiguous == 2 and report.ambiguous_per_category == {3: 1, 4: 1}
    assert report.n_unmatched == 0 and report.n_unscored == 0
    # by hand: p_o = 31/38, p_e = (23*24 + 15*14) / 38^2 = 762/1444
    p_o, p_e = Fraction(31, 38), Fraction(23 * 24 + 15 * 14, 38 * 38)
    kappa = (p_o - p_e) / (1 - p_e)
    assert kappa == Fraction(416, 682)
    assert overall.kappa == pytest.approx(float(kappa), abs=1e-12)
    assert overall.kappa == pytest.approx(
        sm_kappa(np.array([[20, 3], [4, 11]]), return_results=False)
    )
    assert overall.agreement.rate == pytest.approx(31 / 38)
    assert overall.sensitivity.rate == pytest.approx(20 / 23)
    assert overall.specificity.rate == pytest.approx(11 / 15)
    # category 1 = q00, q04, ..., q36: tp q00-q16 (5), fn q20, fp q24, tn q28, q32, q36
    cat1 = report.per_category[1]
    assert cat1.table == ((5, 1), (1, 3))
    assert cat1.kappa == pytest.approx((0.8 - 0.52) / 0.48)
    # the disagreements, in file order
    assert [d.question_id for d in report.disagreements] == [
        "q20",
        "q21",
        "q22",
        "q23",
        "q24",
        "q25",
        "q26",
    ]
    first = report.disagreements[0]
    assert (first.reference, first.verdict, first.gold, first.prediction) == (
        True,
        0.0,
        "gold 20",
        "answer 20",
    )


def test_corrected_j_from_the_labels_is_rogan_gladen_by_hand(labels_path: Path) -> None:
    report = compare_with_labels(
        _records(), _verdicts(), load_labels(labels_path), threshold=ACCEPT
    )
    accepts = [v >= 50 for v in _verdicts().values()]
    assert sum(accepts) == 25  # J = 25/40
    result = corrected_j(accepts, report.reference, report.judge, n_boot=500, seed=1)
    j, se, sp = Fraction(25, 40), Fraction(20, 23), Fraction(11, 15)
    by_hand = (j + sp - 1) / (se + sp - 1)
    assert by_hand == Fraction(1978, 3328)
    assert result.estimate.value == pytest.approx(float(by_hand), abs=1e-12)
    assert result.estimate.raw == 0.625 and not result.estimate.clipped
    assert result.ci_low < result.estimate.value < result.ci_high
    assert 0.0 <= result.ci_low and result.ci_high <= 1.0
    assert (result.n_questions, result.n_labelled, result.source) == (40, 38, "labels")
    again = corrected_j(accepts, report.reference, report.judge, n_boot=500, seed=1)
    assert (again.ci_low, again.ci_high) == (result.ci_low, result.ci_high)


def test_labels_from_conversation_and_question_ignore_case_and_spacing() -> None:
    match = match_labels(
        load_labels(Path(__file__).parents[1] / "fixtures" / "trust" / "labels_40.json"), _records()
    )
    assert len(match.values) == 40 and match.values["q01"] is True and match.values["q38"] is None


def test_unmatched_and_unscored_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("question_id,label\nq00,CORRECT\nq01,WRONG\nnope,CORRECT\n")
    verdicts = _verdicts() | {"q01": None}
    report = compare_with_labels(_records(), verdicts, load_labels(path), threshold=ACCEPT)
    assert report.n_unmatched == 1 and report.n_unscored == 1 and report.overall.n == 1


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "l.csv",
            "question_id,label\nq00,maybe\n",
            "labels file {p}, row 2: field 'label': 'maybe' is not CORRECT, WRONG, AMBIGUOUS, 1 or 0",
        ),
        (
            "l.csv",
            "question_id,grade\nq00,1\n",
            "labels file {p}: the CSV header has no 'label' column (got question_id, grade)",
        ),
        (
            "l.json",
            '[{"id": "q00", "label": "CORRECT"}, {"label": "WRONG"}]',
            "labels file {p}, entry 2: field 'question_id' is missing (or give conversation_id and question)",
        ),
        ("l.json", '[{"id": "q00"}]', "labels file {p}, entry 1: field 'label' is missing"),
        ("l.json", "[]", "labels file {p}: no labels"),
        (
            "l.json",
            '{"q00": "CORRECT", "q01": 7}',
            "labels file {p}, entry 2: field 'label': 7 is not CORRECT, WRONG, AMBIGUOUS, 1 or 0",
        ),
        (
            "l.json",
            '[{"id": "q00", "label": 1}, {"id": "q00", "label": 0}]',
            "labels file {p}, entry 2: field 'label': the same question is labelled differently in entry 1",
        ),
        (
            "l.json",
            "{not json",
            "labels file {p}: not JSON, JSONL or CSV (Expecting property name enclosed in double quotes, line 1)",
        ),
        # JSON Lines: the line an editor shows (blank lines counted), not the entry's index
        (
            "l.jsonl",
            '{"id": "q00", "label": 1}\n\n{"id": "q01"}\n',
            "labels file {p}, line 3: field 'label' is missing",
        ),
        (
            "l.jsonl",
            '{"id": "q00", "label": 1}\n\n{"id": "q00", "label": 0}\n',
            "labels file {p}, line 3: field 'label': the same question is labelled differently in line 1",
        ),
        (
            "l.jsonl",
            '{"id": "q00", "label": 1}\n\n{bad\n',
            "labels file {p}: not JSON, JSONL or CSV (Expecting property name enclosed in double quotes, line 3)",
        ),
    ],
)
def test_bad_labels_files_give_one_line_naming_file_entry_and_field(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(LabelsError) as caught:
        load_labels(path)
    assert str(caught.value) == message.format(p=path)


def test_missing_labels_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LabelsError, match=r"labels file .*missing.json: cannot read it"):
        load_labels(tmp_path / "missing.json")


def test_jsonl_labels_are_read(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"question_id": "q00", "label": "CORRECT"}\n{"question_id": "q01", "label": "WRONG"}\n'
    )
    assert [label.value for label in load_labels(path).labels] == [True, False]


def test_agreement_with_stored_verdicts_of_another_judge() -> None:
    from dataclasses import replace

    records = [
        replace(r, stored_judge_score=100.0 if i % 3 else 0.0)
        for i, r in enumerate(_records()[:12])
    ]
    ours = {r.question_id: 100.0 if i % 2 else 0.0 for i, r in enumerate(records)}
    report = compare_with_stored(records, ours, threshold=ACCEPT)
    # theirs accept i % 3 != 0 (8 of 12), ours accept odd i (6 of 12)
    # both accept: 1, 5, 7, 11 -> 4; theirs only: 2, 4, 8, 10 -> 4; ours only: 3, 9 -> 2; neither: 0, 6 -> 2
    assert report.reference_name == "stored verdicts"
    assert report.overall.table == ((4, 4), (2, 2))
    p_o, p_e = 6 / 12, (8 * 6 + 4 * 6) / 144
    assert report.overall.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    assert report.n_disagreements == 6
    assert compare_with_stored(_records(), ours, threshold=ACCEPT) is None  # nothing stored


def test_rogan_gladen_clips_and_flags_and_refuses_a_chance_judge() -> None:
    clipped = rogan_gladen(0.05, 0.9, 0.8)  # (0.05 + 0.8 - 1) / 0.7 < 0
    assert (
        clipped.value == 0.0 and clipped.clipped and clipped.unclipped == pytest.approx(-0.15 / 0.7)
    )
    high = rogan_gladen(0.99, 0.9, 0.95)
    assert high.value == 1.0 and high.clipped
    chance = rogan_gladen(0.5, 0.5, 0.5)
    assert chance.value is None and "no better than chance" in chance.reason
    with pytest.raises(ValueError, match="J must be on a 0-1 scale, got 75"):
        rogan_gladen(75, 0.9, 0.9)


def test_a_perfect_labelled_judge_leaves_only_the_uncertainty_of_j() -> None:
    accepts = np.array([True] * 30 + [False] * 10)
    result = corrected_j(accepts, [True, False] * 20, [True, False] * 20, n_boot=1000, seed=4)
    rng = np.random.default_rng(4)
    j_star = accepts[rng.integers(0, 40, size=(1000, 40))].mean(axis=1)
    low, high = np.quantile(j_star, [0.025, 0.975])
    assert result.estimate.value == 0.75
    assert (result.ci_low, result.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert result.n_boot_invalid == 0


def test_corrected_j_needs_correct_and_wrong_labelled_items() -> None:
    with pytest.raises(
        ValueError, match="needs labelled items that are correct AND items that are wrong"
    ):
        corrected_j([True, False], [True, True], [True, False])
