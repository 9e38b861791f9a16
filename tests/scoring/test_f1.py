"""Token F1 and BLEU-1: the seed's cases, each official-scorer rule, and real published files."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from locomo_exp.config import DataConfig
from locomo_exp.data import load_results
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.aggregate import aggregate_by_category, summarize
from locomo_exp.scoring.f1 import (
    bleu1,
    bleu_tokenize,
    compute_token_f1,
    locomo_f1,
    locomo_token_f1,
    mem0_f1,
    normalize_answer,
    normalize_answer_locomo,
    porter_stem,
    tokenize,
)

# ---------------------------------------------------------------- the seed's cases (squad variant)


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        pytest.param("Paris", "Paris", 1.0, id="exact-match"),
        pytest.param("the big cat sat", "the cat sat", 0.8, id="extra-word-P=2/3-R=1"),
        pytest.param("dog", "cat", 0.0, id="no-overlap"),
        pytest.param("The Cat!", "the cat", 1.0, id="case-and-punctuation"),
        pytest.param("a big dog", "big dog", 1.0, id="article-removed"),
        pytest.param("running quickly", "runs quick", 0.5, id="stemming-run-matches-quickli-not"),
        pytest.param("", "cat", 0.0, id="empty-prediction"),
        pytest.param("", "", 1.0, id="both-empty"),
        pytest.param("the the the", "the", 1.0, id="articles-only-both-empty-after-normalising"),
        pytest.param("cat cat cat", "cat", 0.5, id="duplicates-P=1/3-R=1"),
    ],
)
def test_compute_token_f1_seed_cases(predicted: str, gold: str, expected: float) -> None:
    assert compute_token_f1(predicted, gold) == pytest.approx(expected)


def test_duplicate_tokens_are_counted_as_a_multiset() -> None:
    # "cat cat cat" vs "cat": one common token; P = 1/3, R = 1/1, F1 = 2PR/(P+R) = 0.5
    assert tokenize(normalize_answer("cat cat cat")) == ["cat", "cat", "cat"]
    assert compute_token_f1("cat cat cat", "cat") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert compute_token_f1("cat", "cat cat cat") == pytest.approx(0.5)


def test_porter_stem_uses_nltk_porter() -> None:
    assert [porter_stem(w) for w in ("running", "runs", "quickly", "quick")] == [
        "run",
        "run",
        "quickli",
        "quick",
    ]


def test_normalize_answer_removes_articles_and_punctuation() -> None:
    assert normalize_answer("  The  Cat, and a Dog! ") == "cat and dog"


# ---------------------------------------------------------------- LoCoMo official rules


def test_locomo_normalisation_also_removes_and_and_commas() -> None:
    assert normalize_answer_locomo("Tom, Jerry and the Dog.") == "tom jerry dog"


def test_locomo_and_is_removed_so_lists_with_and_match() -> None:
    assert locomo_token_f1("hiking and pottery", "hiking pottery") == 1.0
    assert compute_token_f1("hiking and pottery", "hiking pottery") == pytest.approx(0.8)


def test_locomo_no_both_empty_rule() -> None:
    assert locomo_token_f1("", "") == 0.0
    assert locomo_token_f1("the", "a") == 0.0


def test_category_1_splits_on_commas_and_averages_best_matches() -> None:
    # gold parts: "beekeeping" -> best 1.0 ("beekeeping"), "pottery" -> 1.0, "climbing" -> 0.0
    assert locomo_f1("beekeeping, pottery", "beekeeping, pottery, climbing", 1) == pytest.approx(2 / 3)
    # without the split the whole strings are compared: P = 1, R = 2/3 -> 0.8
    assert locomo_f1("beekeeping, pottery", "beekeeping, pottery, climbing", 4) == pytest.approx(0.8)


def test_category_3_gold_is_cut_at_semicolon() -> None:
    gold = "Likely no; she mentions being afraid of heights"
    assert locomo_f1("likely no", gold, 3) == 1.0
    assert locomo_f1("likely no", gold, 2) < 0.5


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        pytest.param("No information available.", 1.0, id="no-information-available"),
        pytest.param("That is NOT MENTIONED in the chat", 1.0, id="not-mentioned-any-case"),
        pytest.param("Not discussed in the conversation", 0.0, id="other-refusal-wording-scores-0"),
        pytest.param("Improving education", 0.0, id="repeats-adversarial-answer"),
    ],
)
def test_category_5_scores_the_two_phrases(prediction: str, expected: float) -> None:
    assert locomo_f1(prediction, "Improving education", 5) == expected


def test_integer_gold_is_scored_as_its_string() -> None:
    assert locomo_f1("In 2019", 2019, 2) == pytest.approx(2 / 3)  # type: ignore[arg-type]
    assert mem0_f1("2019", 2019) == 1.0  # type: ignore[arg-type]


def test_unknown_category_is_an_error() -> None:
    with pytest.raises(ValueError, match="1-5"):
        locomo_f1("a", "b", 6)


# ---------------------------------------------------------------- Mem0 harness F1 and BLEU-1


def test_mem0_f1_uses_sets_and_no_stemming() -> None:
    # sets: {"cat"} vs {"cat"} -> 1.0 (a multiset F1 would give 0.5)
    assert mem0_f1("cat cat cat", "cat") == 1.0
    # no stemming, articles kept: {"the","cats"} vs {"cat"} -> 0
    assert mem0_f1("The cats", "cat") == 0.0
    # ". , ! ?" become spaces; other punctuation stays part of a token
    assert mem0_f1("May 7, 2023.", "may 7 2023") == 1.0
    assert mem0_f1("'Bring'", "Bring") == 0.0


def test_mem0_f1_empty_side_scores_zero() -> None:
    assert mem0_f1("", "cat") == 0.0
    assert mem0_f1("...", "cat") == 0.0


def test_bleu1_matches_nltk_on_simple_case() -> None:
    # 2 of 3 unigrams match, brevity penalty 1 (hypothesis longer than reference)
    assert bleu1("the red fox", "the fox") == pytest.approx(2 / 3)
    assert bleu1("", "the fox") == 0.0


def test_bleu_tokenize_splits_sentences_without_punkt_data() -> None:
    assert bleu_tokenize("we met. then we left.") == ["we", "met", ".", "then", "we", "left", "."]


# ---------------------------------------------------------------- aggregation


def test_per_category_aggregation_and_overall_mean() -> None:
    values = [0.8, 0.6, 1.0, 0.5, 0.7]
    categories = [4, 4, 4, 1, 1]
    result = aggregate_by_category(values, categories)
    assert result["4"].mean == pytest.approx(0.8)
    assert (result["4"].count, result["4"].min, result["4"].max) == (3, 0.6, 1.0)
    assert result["1"].mean == pytest.approx(0.6)
    assert result["1"].count == 2
    assert result["overall"].mean == pytest.approx(3.6 / 5)  # mean over questions, not categories
    assert result["overall_1_4"].mean == pytest.approx(0.72)
    assert result["2"].count == 0 and result["2"].mean is None


def test_summarize_ignores_nan() -> None:
    assert summarize([1.0, float("nan")]).mean == 1.0
    assert summarize([]).mean is None


# ---------------------------------------------------------------- real published files


def test_honcho_official_f1_reproduced_for_every_question(shared_data) -> None:
    path = shared_data / "predictions" / "honcho_locomo10_qa.json"
    loaded = load_results(path, DataConfig(format="locomo"))
    assert loaded.prediction_key == "honcho_prediction"
    stored = [qa["honcho_f1"] for sample in json.loads(path.read_text()) for qa in sample["qa"]]
    scores = score_lexical(loaded.records, "locomo", with_bleu1=False)
    assert len(scores) == len(stored) == 1986
    matches = sum(abs(s["f1"] - ref) <= 1e-3 for s, ref in zip(scores, stored, strict=False))
    assert matches == 1986
    by_category: dict[int, list[float]] = defaultdict(list)
    for record, row in zip(loaded.records, scores, strict=False):
        by_category[record.category].append(row["f1"])
    means = {c: sum(v) / len(v) for c, v in by_category.items()}
    # category means from honcho_locomo10_qa_stats.json (LoCoMo's own aggregation)
    expected = {1: 0.2268, 2: 0.0222, 3: 0.1224, 4: 0.2141, 5: 0.9305}
    for category, value in expected.items():
        assert means[category] == pytest.approx(value, abs=5e-5)
    stats = json.loads((shared_data / "predictions" / "honcho_locomo10_qa_stats.json").read_text())
    cumulative = stats["honcho"]["cum_accuracy_by_category"]
    for category, total in cumulative.items():
        assert sum(by_category[int(category)]) == pytest.approx(total, abs=0.5)


def test_memobase_mem0_f1_and_bleu1_reproduced(shared_data) -> None:
    path = shared_data / "predictions" / "memobase_eval_0710.json"
    loaded = load_results(path, DataConfig(format="mem0"))
    raw = json.loads(path.read_text())
    stored = [item for key in raw for item in raw[key]]
    scores = score_lexical(loaded.records, "mem0")
    assert len(scores) == 1540
    assert all(s["f1"] == pytest.approx(r["f1_score"], abs=1e-12) for s, r in zip(scores, stored, strict=False))
    bleu_matches = sum(s["bleu1"] == r["bleu_score"] for s, r in zip(scores, stored, strict=False))
    assert bleu_matches == 1540  # punkt's English model + nltk<3.10.1 word rules: every value
    overall_f1 = sum(s["f1"] for s in scores) / 1540
    overall_bleu = sum(s["bleu1"] for s in scores) / 1540
    assert overall_f1 == pytest.approx(0.5145, abs=5e-5)
    assert round(overall_bleu, 4) == 0.3978
    per_category = aggregate_by_category([s["f1"] for s in scores], [r.category for r in loaded.records])
    published = {"1": 0.4629, "2": 0.6423, "3": 0.2293, "4": 0.5155}  # memobase README
    for key, value in published.items():
        assert per_category[key].mean == pytest.approx(value, abs=5e-5)


def _official_steps() -> object:
    """``benchmarks/f1_vs_official.py``: LoCoMo's official F1 steps written plainly."""
    import importlib.util

    from conftest import PROJECT_ROOT

    spec = importlib.util.spec_from_file_location(
        "f1_vs_official", PROJECT_ROOT / "benchmarks" / "f1_vs_official.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["honcho_locomo10_qa.json", "zep_locomo_grades.json"])
def test_locomo_f1_equals_the_official_steps_on_every_real_answer(shared_data, name: str) -> None:
    # == on floats, every question, from cold caches (the speed-ups change no value)
    from locomo_exp.scoring import f1 as f1_module

    official = _official_steps()
    records = load_results(shared_data / "predictions" / name).records
    for function in (f1_module.porter_stem, f1_module._locomo_tokens):
        function.cache_clear()
    got = [f1_module.locomo_f1(r.prediction, r.ground_truth, r.category) for r in records]
    expected = [official.reference_f1(r.prediction, r.ground_truth, r.category) for r in records]  # type: ignore[attr-defined]
    assert len(got) > 1500 and got == expected


def test_ascii_punctuation_is_deleted_the_same_way_in_ascii_and_unicode_text() -> None:
    from locomo_exp.scoring.f1 import normalize_answer_locomo

    assert normalize_answer_locomo("It's 3.5 (approx.), and the end!") == "its 35 approx end"
    # non-ASCII text: only ASCII punctuation goes; the en dash and curly quote stay
    assert normalize_answer_locomo("Chloé's 2–3 “cats”, a dog.") == "chloés 2–3 “cats” dog"
