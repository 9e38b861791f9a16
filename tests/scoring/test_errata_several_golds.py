"""Errata with several golds: each question scores its best gold, as the main table does
(issue 18 §7)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Composer
from test_errata import _two_entries

from locomo_exp.experiment import run_experiment

GOLDS = [
    # category 1 multi-hop: the list is several acceptable answers, not one comma-joined answer
    ("conv-A", "Where did Ann move?", 1, ["Paris", "Lyon"], "Lyon"),
    ("conv-A", "When did Ann run a marathon?", 2, ["2022"], "2023"),
    ("conv-A", "When did Ann adopt a cat?", 2, ["May 2023", "spring 2023"], "spring 2023"),
    ("conv-B", "What color is Bob's boat?", 4, ["blue", "navy blue"], "navy blue"),
    ("conv-B", "What color is Bob's car?", 4, ["red", "dark red"], "dark red"),
]


def test_the_original_key_column_equals_the_main_table_with_several_golds(
    tmp_path: Path, typed_config: Composer
) -> None:
    path = tmp_path / "golds.json"
    path.write_text(json.dumps([
        {"question_id": f"q{i}", "conversation_id": conv, "question": question,
         "ground_truth": golds, "predicted_answer": prediction, "category": category}
        for i, (conv, question, category, golds, prediction) in enumerate(GOLDS)
    ]))
    errata = _two_entries(tmp_path)  # corrects q1 (2022 -> 2023) and q3 (unanswerable)
    result = run_experiment(
        typed_config("tracking=none", "data=file", f"data.path={path}", f"data.errata={errata}"),
        tmp_path / "out", tmp_path,
    )
    summary = json.loads((result.output_dir / "summary.json").read_text())
    key = summary["answer_key"]["metrics"]["f1_locomo"]
    for group in ("1", "2", "4", "overall"):
        main = 100 * summary["metrics"]["f1_locomo"][group]["mean"]
        assert key[group]["original"] == main, group
    # best gold by hand: q0 1.0 (Lyon), q1 0.0, q2 1.0, q3 1.0 (navy blue), q4 1.0 (dark red)
    assert key["overall"]["original"] == 80.0
    # corrected: q1's gold becomes 2023 (1.0); q3 is unanswerable and the answer does not
    # abstain (0.0); the other three keep their best gold
    assert key["overall"]["corrected"] == 80.0
    assert key["1"] == {"n": 1, "original": 100.0, "corrected": 100.0, "ceiling": 100.0,
                        "above_ceiling": False}
    # ceilings follow: q1 and q3 are changed by the audit -> 3 of 5 reachable
    assert key["overall"]["ceiling"] == 60.0 and key["overall"]["above_ceiling"] is True
