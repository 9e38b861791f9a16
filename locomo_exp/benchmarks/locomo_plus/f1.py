"""Token F1 of a LoCoMo-Plus run's factual items (``scorer=both``), reported beside J.

LoCoMo-Plus reuses LoCoMo's 1,986 questions, and a user may ask for LoCoMo's lexical score on
them beside the judge's verdicts: ``scorer=both`` judges every item (as ``scorer=judge``) and
scores each factual item with the F1 variant ``f1.variant`` names (default ``locomo``: LoCoMo's
official per-category rules, ``locomo_exp.scoring.f1.locomo_f1`` after snap-research/LoCoMo
``task_eval/evaluation.py``), computed by the project's one metric registry
(:func:`locomo_exp.scoring.specs.f1_variant`), nothing re-implemented here.

The Cognitive items have no gold answer (the judge compares the reply with the cue), so they
get no F1: their per-item F1 is ``None`` and the reason is written beside it. Figures are 0-1:
per category the mean of the unrounded per-item F1, rounded to 4 decimals; the factual
average both ways (unweighted over the five categories, item-weighted over every factual item),
as for the label score (:mod:`.figures`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import CATEGORY_OF_ID, COGNITIVE, FACTUAL
from locomo_exp.benchmarks.locomo_plus.runs import StoredRun
from locomo_exp.data.input_file import DataValidationError, RecordProblem
from locomo_exp.scoring.specs import f1_variant, output_version

DECIMALS = 4
"""Decimals of every F1 figure (as the label figures: the authors print 4)."""

NO_GOLD = "Cognitive item: no gold answer (judged against its cue), so no F1"
"""Why a Cognitive item has no F1 (``scores.jsonl``'s ``f1_unscored``)."""

ADVERSARIAL = CATEGORY_OF_ID[5]
"""The one factual category whose official F1 reads no gold answer (a phrase test)."""

ID_OF_CATEGORY: dict[str, int] = {name: cid for cid, name in CATEGORY_OF_ID.items()}
"""LoCoMo's category id of each factual category string (the F1 rules are keyed by it)."""


@dataclass(frozen=True)
class PlusF1:
    """Every item's token F1 under one variant.

    Attributes:
        variant: the ``f1.variant`` name (``locomo``, ``mem0``, ``squad``).
        version: its semantics' version, as every LoCoMo output writes it.
        title: the variant's report title.
        source: where its definition comes from.
        scores: per row of the run, in order: F1 in [0, 1], ``None`` for a Cognitive item.
    """

    variant: str
    version: str
    title: str
    source: str
    scores: tuple[float | None, ...]


def check_gold(run: StoredRun) -> None:
    """Refuse a factual item F1 cannot score: an empty gold answer (adversarial needs none).

    Args:
        run: the answers file, read (rows in file order: record ``i`` is row ``i``).

    Raises:
        DataValidationError: a multi-hop, temporal, common-sense or single-hop item with an
            empty ``ground_truth`` (one line per item: file, record, field), before any call.
    """
    problems = [
        RecordProblem(str(run.path), f"[{i}]", "ground_truth",
                      f"empty on a {row.category} item: scorer=both scores its F1 against it "
                      "(use scorer=judge for the judge alone)", i)
        for i, row in enumerate(run.rows)
        if row.category in FACTUAL and row.category != ADVERSARIAL and not row.ground_truth.strip()
    ]
    if problems:
        raise DataValidationError(problems, hint="Fix the file; no item was scored.")


def score_f1(run: StoredRun, variant: str) -> PlusF1:
    """Score every factual item of ``run`` with F1 variant ``variant``; Cognitive items get none.

    Args:
        run: the answers file, read.
        variant: an ``f1.variant`` name.

    Returns:
        :class:`PlusF1`: per item F1 (0-1) or ``None`` (Cognitive).

    Raises:
        DataValidationError: as :func:`check_gold`.
        locomo_exp.scoring.specs.UnknownMetricError: an unknown variant.
    """
    spec = f1_variant(variant)
    check_gold(run)
    scores = tuple(
        None if row.category == COGNITIVE
        else spec.function(row.prediction, row.ground_truth, ID_OF_CATEGORY[row.category])
        for row in run.rows)
    return PlusF1(variant=spec.name, version=output_version(spec), title=spec.title,
                  source=spec.source, scores=scores)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), DECIMALS) if values else None


def f1_section(run: StoredRun, f1: PlusF1) -> dict[str, Any]:
    """The ``f1`` section of ``summary.json``: F1 per factual category and both averages.

    Args:
        run: the answers file, read.
        f1: its per-item F1 (:func:`score_f1`).

    Returns:
        ``{variant, version, title, source, scale, by_category: {<category>: {mean, n}},
        factual: {unweighted, item_weighted, definitions}, n_items, cognitive}``; figures 0-1,
        4 decimals; ``None`` where not measured (no such item; the unweighted average needs
        all five categories). ``cognitive`` says why the Cognitive items have none.
    """
    by_cat: dict[str, list[float]] = {}
    for row, score in zip(run.rows, f1.scores, strict=True):
        if score is not None:
            by_cat.setdefault(row.category, []).append(score)
    every = [s for cat in FACTUAL for s in by_cat.get(cat, [])]
    means = [sum(by_cat[c]) / len(by_cat[c]) for c in FACTUAL if c in by_cat]
    n_cognitive = sum(row.category == COGNITIVE for row in run.rows)
    return {
        "variant": f1.variant, "version": f1.version, "title": f1.title, "source": f1.source,
        "scale": "0-1 (mean of each item's unrounded F1, rounded to 4 decimals)",
        "by_category": {cat: {"mean": _mean(by_cat[cat]), "n": len(by_cat[cat])}
                        for cat in FACTUAL if cat in by_cat},
        "factual": {
            "unweighted": (round(sum(means) / len(means), DECIMALS)
                           if len(means) == len(FACTUAL) else None),
            "item_weighted": _mean(every),
            "definitions": {
                "unweighted": "mean of the five LoCoMo categories' F1 means (each counts once)",
                "item_weighted": "mean F1 over every LoCoMo item",
            },
        },
        "n_items": len(every),
        "cognitive": f"{n_cognitive:,} Cognitive items: no gold answer (the judge compares the "
                     "reply with the cue), so no F1",
    }


__all__ = ["NO_GOLD", "PlusF1", "check_gold", "f1_section", "score_f1"]
