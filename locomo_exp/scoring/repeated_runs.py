"""Several runs of one system (``data.runs``): each run scored, mean ± sample std across runs.

Papers print a system's score over 3 or 10 runs as "75.14 ± 0.17": the mean and the sample
standard deviation (n - 1) of the run-level scores (docs/field_notes.md §8). Every run file is
scored with every lexical metric; per category key the run means, their mean and their std
are kept.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from locomo_exp.results import QARecord
from locomo_exp.scoring import score_lexical
from locomo_exp.scoring.aggregate import lexical_aggregates


def mean_and_sample_std(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (n - 1) of the finite values.

    Args:
        values: run-level scores (``None``/NaN ignored).

    Returns:
        ``(mean, std)``; ``std`` is ``None`` with fewer than two values, both ``None`` with
        none. ``[0.5, 1.0]`` -> ``(0.75, 0.3536)``.
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return None, None
    return statistics.fmean(finite), (statistics.stdev(finite) if len(finite) > 1 else None)


def runs_section(
    runs: Sequence[Sequence[QARecord]],
    paths: Sequence[str | PurePath],
    variant: str = "locomo",
    with_bleu1: bool = True,
) -> dict[str, Any]:
    """Score every run and summarise each lexical metric across runs, per category key.

    Args:
        runs: the records of each run (same questions), in the order given.
        paths: each run's file, same order.
        variant: the F1 variant reported as ``f1``.
        with_bleu1: also BLEU-1.

    Returns:
        ``{"n_runs", "files": [name, ...], "lexical": {metric: {category key: {"per_run":
        [mean of run 1, ...], "mean", "std"}}}}``, scores 0-1, std the sample std across
        runs (``None`` for one run); ``f1_locomo_official`` included.

    Raises:
        ValueError: when ``runs`` and ``paths`` differ in length.
    """
    if len(runs) != len(paths):
        raise ValueError(f"{len(runs)} runs but {len(paths)} paths")
    per_run = [
        lexical_aggregates(
            score_lexical(list(records), variant, with_bleu1), [r.category for r in records]
        )
        for records in runs
    ]
    lexical: dict[str, dict[str, dict[str, Any]]] = {}
    for metric in per_run[0] if per_run else {}:
        lexical[metric] = {}
        for key in per_run[0][metric]:
            row = [run[metric][key].mean for run in per_run]
            mean, std = mean_and_sample_std(row)
            lexical[metric][key] = {"per_run": row, "mean": mean, "std": std}
    return {"n_runs": len(runs), "files": [PurePath(p).name for p in paths], "lexical": lexical}


__all__ = ["mean_and_sample_std", "runs_section"]
