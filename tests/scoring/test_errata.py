"""errata: scoring against a corrected answer key, and the original key's ceiling (issue 13, part 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from locomo_exp.data.errata import UNANSWERABLE, ErrataError, load_errata
from locomo_exp.scoring.errata import ceilings, corrected_gold, match_errata, score_both_keys
from locomo_exp.scoring.f1 import locomo_f1

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
AUDIT = DATA / "locomo_audit_errors.json"
LOCOMO10 = DATA / "locomo10.json"

QUESTIONS = [
    {"conversation_id": "conv-A", "question": "Where did Ann move?", "category": 1, "ground_truth": "Paris", "prediction": "Paris"},
    {"conversation_id": "conv-A", "question": "When did Ann run a marathon?", "category": 2, "ground_truth": "2022", "prediction": "2023"},
    {"conversation_id": "conv-A", "question": "When did Ann adopt a cat?", "category": 2, "ground_truth": "May 2023", "prediction": "May 2023"},
    {"conversation_id": "conv-B", "question": "What color is Bob's boat?", "category": 4, "ground_truth": "blue", "prediction": "No information available"},
    {"conversation_id": "conv-B", "question": "What color is Bob's car?", "category": 4, "ground_truth": "red", "prediction": "red"},
]


def _entry(qid: str, question: str, gold: str, error_type: str, answer: str, category: int) -> dict:
    return {"question_id": qid, "question": question, "golden_answer": gold, "category": category,
            "error_type": error_type, "cited_evidence": [], "correct_evidence": [], "reasoning": "r",
            "correct_answer": answer}


def _write(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "errata.json"
    path.write_text(json.dumps(entries))
    return path


def _two_entries(tmp_path: Path) -> Path:
    return _write(tmp_path, [
        _entry("locomo_0_qa1", "When did Ann run a marathon?", "2022", "TEMPORAL_ERROR", "2023", 2),
        _entry("locomo_1_qa0", "what color is Bob's boat", "blue", "HALLUCINATION", "Unanswerable", 4),
    ])


def test_five_questions_two_errata_both_keys_and_ceiling_exact(tmp_path):
    entries = load_errata(_two_entries(tmp_path))
    matched = match_errata(entries, QUESTIONS)
    assert (matched.n_matched, matched.n_score_changing, matched.unmatched) == (2, 2, [])
    assert corrected_gold(QUESTIONS, matched) == ["Paris", "2023", "May 2023", UNANSWERABLE, "red"]
    scores = score_both_keys(QUESTIONS, matched, locomo_f1)
    table = {g: (s["n"], s["original"], s["corrected"], s["ceiling"], s["above_ceiling"]) for g, s in scores.items()}
    assert table == {
        "1": (1, 100.0, 100.0, 100.0, False),
        "2": (2, 50.0, 100.0, 50.0, False),
        "4": (2, 50.0, 100.0, 50.0, False),
        "overall": (5, 60.0, 100.0, 60.0, False),
        "overall_1_4": (5, 60.0, 100.0, 60.0, False),
    }
    assert ceilings(QUESTIONS, matched)["2"] == {"n": 2, "affected": 1, "ceiling": 50.0}


def test_score_above_its_ceiling_is_flagged(tmp_path):
    matched = match_errata(load_errata(_two_entries(tmp_path)), QUESTIONS)
    agrees_with_wrong_gold = [dict(q, prediction=q["ground_truth"]) for q in QUESTIONS]
    scores = score_both_keys(agrees_with_wrong_gold, matched, locomo_f1)
    assert (scores["2"]["original"], scores["2"]["ceiling"], scores["2"]["above_ceiling"]) == (100.0, 50.0, True)
    assert scores["2"]["corrected"] == 50.0


def test_wrong_citation_entries_do_not_change_scores(tmp_path):
    path = _write(tmp_path, [_entry("locomo_0_qa2", "When did Ann adopt a cat?", "May 2023", "WRONG_CITATION", "May 2023", 2)])
    matched = match_errata(load_errata(path), QUESTIONS)
    assert (matched.n_matched, matched.n_score_changing) == (1, 0)
    assert ceilings(QUESTIONS, matched)["overall"]["ceiling"] == 100.0


def test_bad_errata_file_names_file_entry_and_field(tmp_path):
    bad = _entry("locomo_0_qa1", "q", "g", "HALLUCINATION", "a", 1)
    del bad["error_type"]
    path = _write(tmp_path, [_entry("locomo_0_qa0", "q", "g", "HALLUCINATION", "a", 1), bad])
    with pytest.raises(ErrataError, match=r"errata.json: entry 1 \(locomo_0_qa1\): field 'error_type' missing$"):
        load_errata(path)
    with pytest.raises(ErrataError, match=r"nope.json: errata file not found$"):
        load_errata(tmp_path / "nope.json")
    (tmp_path / "obj.json").write_text("{}")
    with pytest.raises(ErrataError, match=r"obj.json: expected a JSON list of audit entries, got dict$"):
        load_errata(tmp_path / "obj.json")


@pytest.mark.skipif(not (AUDIT.is_file() and LOCOMO10.is_file()), reason="../shared/data not present")
def test_real_audit_on_locomo10_99_score_changing_and_ceiling_93_57():
    entries = load_errata(AUDIT)
    samples = json.loads(LOCOMO10.read_text())
    questions = [
        {"conversation_id": s["sample_id"], "question": q["question"], "category": q["category"],
         "ground_truth": q.get("answer", q.get("adversarial_answer"))}
        for s in samples for q in s["qa"]
    ]
    matched = match_errata(entries, questions)
    assert (len(entries), matched.n_matched, matched.n_score_changing) == (156, 156, 99)
    caps = ceilings(questions, matched)
    assert caps["overall_1_4"]["n"] == 1540 and caps["overall_1_4"]["affected"] == 99
    assert round(caps["overall_1_4"]["ceiling"], 2) == 93.57
    assert (round(caps["1"]["ceiling"], 2), round(caps["4"]["ceiling"], 2)) == (90.07, 95.72)
