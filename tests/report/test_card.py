"""card: the disclosure card of a run and the comparability check (issue 13, part 2)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

import pytest

from locomo_exp.report.card import (
    build_card,
    card_differences,
    card_mismatches,
    question_set_label,
    render_card_markdown,
)

COUNTS_1540 = {"1": 282, "2": 321, "3": 96, "4": 841, "5": 0}
CONFIG = {"data": {"path": "memobase.json"}, "f1": {"variant": "locomo", "bleu1": True}}
SUMMARY = {
    "input": {"path": "/d/memobase.json", "name": "memobase.json", "sha256": "17" * 32, "format": "mem0"},
    "versions": {"f1": "f1_locomo", "f1_locomo": "locomo-official-f1/v2", "bleu1": "mem0-harness-bleu1/v2"},
    "counts": dict(COUNTS_1540, overall_1_4=1540, overall=1540),
    "metrics": {"f1": {}, "f1_locomo": {}},
    "stored_judge": {"overall": {"mean": 75.78}},
}
JUDGE = {"model": "claude-sonnet-4-6", "protocol": "rubric", "prompt_version": "rubric/v3", "parser_version": "p2",
         "temperature": 0.5, "runs": 10, "categories": [1, 2, 3, 4]}
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc)


def test_card_from_config_and_summary(tmp_path):
    card = build_card(CONFIG, SUMMARY, argv=["python", "-m", "locomo_exp", "data.path=a b.json"], now=NOW,
                      package_dir=tmp_path)
    assert card["command_line"] == "python -m locomo_exp 'data.path=a b.json'"
    assert card["date"] == "2026-11-30T12:00:00+00:00"
    assert card["tool"]["name"] == "locomo_exp" and card["tool"]["version"] == "0.1.0"
    assert card["tool"]["git_commit"] is None  # tmp_path is no git checkout
    assert card["input"] == {"path": "/d/memobase.json", "name": "memobase.json", "sha256": "17" * 32, "format": "mem0"}
    assert card["question_set"] == "1,540"
    assert card["category_5_policy"] == "none in the input"
    assert card["f1"] == {"variant": "locomo", "version": "locomo-official-f1/v2"}
    assert card["bleu1"] == {"version": "mem0-harness-bleu1/v2"}
    assert card["judge"] is None and card["stored_judge"] is True
    assert card["answer_key"] == {"version": "original", "errata_path": None, "errata_sha256": None}


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / ".git").exists(), reason="not a git checkout")
def test_card_records_git_commit_in_a_checkout():
    card = build_card(CONFIG, SUMMARY, argv=[], now=NOW)
    assert re.fullmatch(r"[0-9a-f]{40}", card["tool"]["git_commit"])


def test_card_judge_section_and_errata_key(tmp_path):
    errata = tmp_path / "errata.json"
    errata.write_text("[]")
    config = {"data": {"path": "x", "errata": str(errata)}, "f1": {"variant": "locomo"}}
    summary = dict(SUMMARY, judge=JUDGE, counts=dict(COUNTS_1540, **{"5": 446}))
    card = build_card(config, summary, argv=[], now=NOW, package_dir=tmp_path)
    assert card["judge"] == {"model": "claude-sonnet-4-6", "model_snapshot": None, "protocol": "rubric",
                             "prompt_version": "rubric/v3", "prompt_hash": None, "parser_version": "p2",
                             "temperature": 0.5, "runs": 10, "aggregation": "mean over runs",
                             "categories": [1, 2, 3, 4]}
    assert card["question_set"] == "1,986"
    assert card["category_5_policy"] == (
        "included (446 questions, LoCoMo's adversarial rule for F1); not judged (J over categories 1, 2, 3, 4)"
    )
    # headline numbers stay on the original key; the corrected one is scored beside it
    assert card["answer_key"] == {"version": "original", "errata_path": str(errata),
                                  "errata_sha256": hashlib.sha256(b"[]").hexdigest(),
                                  "corrected_scored_beside": True}


def test_question_set_labels():
    assert question_set_label(COUNTS_1540) == "1,540"
    assert question_set_label(dict(COUNTS_1540, **{"5": 2})) == "1,542"
    assert question_set_label(dict(COUNTS_1540, **{"5": 446})) == "1,986"
    assert question_set_label({"1": 5, "2": 5, "3": 0, "4": 10, "5": 0}) == "custom (20)"


def test_how_this_was_measured_block():
    card = build_card(CONFIG, dict(SUMMARY, judge=JUDGE), argv=["locomo_exp"], now=NOW)
    card["tool"]["git_commit"] = "0123456789abcdef" * 2 + "01234567"
    text = render_card_markdown(card)
    assert text.splitlines() == [
        "## How this was measured",
        "",
        "- Tool: locomo_exp 0.1.0 (git 0123456789ab)",
        "- Command: `locomo_exp`",
        "- Date: 2026-11-30T12:00:00+00:00",
        f"- Input: `/d/memobase.json` (sha256 {'17' * 32}, format mem0)",  # the full path, once
        "- Question set: 1,540; category 5: none in the input",
        "- F1: locomo (locomo-official-f1/v2)",
        "- BLEU-1: mem0-harness-bleu1/v2",
        "- Judge: claude-sonnet-4-6, protocol rubric, prompt rubric/v3, parser p2, temperature 0.5, 10 runs, mean over runs",
        "- Stored J: verdicts another judge stored in the input file; judge: unknown",  # no source recorded
        "- Answer key: original LoCoMo",
    ]


def test_card_mismatches_f1_variant_question_set_answer_key():
    a = build_card(CONFIG, SUMMARY, argv=[], now=NOW)
    assert card_mismatches(a, a) == []
    b = build_card(dict(CONFIG, f1={"variant": "mem0"}), SUMMARY, argv=[], now=NOW)
    assert card_mismatches(a, b) == ["f1.variant: locomo vs mem0"]
    c = build_card(CONFIG, dict(SUMMARY, counts=dict(COUNTS_1540, **{"5": 446})), argv=[], now=NOW)
    assert card_mismatches(a, c) == ["question_set: 1,540 vs 1,986"]
    d = dict(a, answer_key={"version": "errata", "errata_path": "e.json", "errata_sha256": "ab" * 32})
    assert card_mismatches(a, d) == ["answer_key: original vs errata (abababababab)"]


def test_card_differences_list_judge_fields():
    a = build_card(CONFIG, dict(SUMMARY, judge=JUDGE), argv=[], now=NOW)
    b = build_card(CONFIG, dict(SUMMARY, judge=dict(JUDGE, temperature=1.0)), argv=[], now=NOW)
    assert card_differences(a, b) == ["judge.temperature: 0.5 vs 1.0"]
    assert card_mismatches(a, b) == []
