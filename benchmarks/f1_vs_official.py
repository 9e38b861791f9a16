"""LoCoMo-official token F1 on the 1,986 Honcho answers: this project against the official logic.

The reference below follows the steps of LoCoMo's ``task_eval/evaluation.py`` as
docs/field_notes.md §1 states them (delete ``,``; lowercase; delete ASCII punctuation
character by character; delete a/an/the/and; collapse whitespace; Porter-stem every token
with a fresh ``PorterStemmer().stem`` call; Counter overlap; category 1 comma-split mean of
best matches, category 3 gold cut at ``;``, category 5 phrase rule), written plainly, one
question after another, as the official script runs them. This project's
:func:`locomo_exp.scoring.f1.locomo_f1` is timed on the same answers in the same process,
from a cold start (every cache cleared) and warm; every per-question value must be
identical (``==`` on floats). The cold pass is one ~40 ms pass: on a busy machine the ratio
of the medians moves by +-1x between runs; the median of the per-repeat ratios (each
reference pass and cold pass back to back) is printed too.

Usage::

    .venv/bin/python benchmarks/f1_vs_official.py [--repeats 9] [--path FILE]

Target (issue 20 §1): >= 5x the reference, identical values.
"""

from __future__ import annotations

import argparse
import re
import statistics
import string
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from nltk.stem.porter import PorterStemmer

from locomo_exp.data import load_results
from locomo_exp.scoring import f1 as f1_module

DEFAULT_PATH = (
    Path(__file__).resolve().parents[1].parent / "shared/data/predictions/honcho_locomo10_qa.json"
)

_STEMMER = PorterStemmer()
_EXCLUDE = set(string.punctuation)


def _reference_normalize(text: str) -> str:
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _EXCLUDE)
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


def _reference_token_f1(prediction: str, gold: str) -> float:
    pred = [_STEMMER.stem(w) for w in _reference_normalize(prediction).split()]
    ref = [_STEMMER.stem(w) for w in _reference_normalize(gold).split()]
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return (2 * precision * recall) / (precision + recall)


def reference_f1(prediction: str, gold: str, category: int) -> float:
    """One question's F1 by the official steps (no caching)."""
    if category == 5:
        low = prediction.lower()
        return 1.0 if ("no information available" in low or "not mentioned" in low) else 0.0
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        preds = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        best = [max(_reference_token_f1(p, g) for p in preds) for g in golds]
        return sum(best) / len(best)
    return _reference_token_f1(prediction, gold)


def _clear_caches() -> None:
    for name in dir(f1_module):
        function = getattr(f1_module, name)
        if callable(function) and hasattr(function, "cache_clear"):
            function.cache_clear()


def _timed(fn: Callable[[], list[float]]) -> tuple[float, list[float]]:
    start = time.perf_counter()
    values = fn()
    return time.perf_counter() - start, values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    if not args.path.is_file():
        print(f"not found: {args.path} (the read-only ../shared/data folder)", file=sys.stderr)
        return 2
    records = load_results(args.path).records
    items = [(r.prediction, r.ground_truth, r.category) for r in records]
    print(f"{args.path.name}: {len(items)} answers; python {sys.version.split()[0]}")

    reference_times, ours_cold, ours_warm = [], [], []
    identical = True
    for _ in range(args.repeats):
        seconds, expected = _timed(lambda: [reference_f1(p, g, c) for p, g, c in items])
        reference_times.append(seconds)
        _clear_caches()
        seconds, got = _timed(lambda: [f1_module.locomo_f1(p, g, c) for p, g, c in items])
        ours_cold.append(seconds)
        seconds, again = _timed(lambda: [f1_module.locomo_f1(p, g, c) for p, g, c in items])
        ours_warm.append(seconds)
        identical = identical and got == expected and again == expected
    ref, cold, warm = (statistics.median(t) * 1e3 for t in (reference_times, ours_cold, ours_warm))
    print(f"  official logic (reference)   median {ref:7.1f} ms")
    print(f"  locomo_f1, caches cleared    median {cold:7.1f} ms   {ref / cold:5.1f}x reference")
    print(f"  locomo_f1, warm caches       median {warm:7.1f} ms   {ref / warm:5.1f}x reference")
    paired = statistics.median(r / c for r, c in zip(reference_times, ours_cold, strict=True))
    print(f"  caches cleared, median of the {args.repeats} paired ratios (reference and cold pass "
          f"run back to back): {paired:.1f}x")
    print(f"  values identical to the reference on every question: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
