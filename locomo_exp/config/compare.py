"""Settings of ``mode=compare`` (the lead registers them as the ``compare`` config group)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class CompareConfig:
    """What to compare and how.

    Attributes:
        runs: run directories written by locomo_exp (relative paths are resolved against
            the ``start_dir`` given to :func:`locomo_exp.compare.run_compare`). Two or more.
        allow_mismatch: compare runs whose cards differ in F1 variant, question set or
            answer key (the affected rows are marked) instead of refusing.
        bootstrap_samples: resamples of each bootstrap interval.
        permutation_samples: Monte Carlo budget of each sign-flip test (exact below
            ``2**n <= permutation_samples``).
        seed: seed of every resampling (each row derives its own stream from it).
        baseline: a run (as written in ``runs``, or its index) compared with every other
            run; ``None`` compares all pairs (Holm over pairs when three or more runs).
        alpha: family-wise significance level of the verdicts.
        min_overlap: share of questions shared by two runs below which the comparison is
            flagged (0.95).
        metrics: metrics to compare (default: every metric both runs carry among
            :data:`locomo_exp.compare.metrics.COMPARED_METRICS`: the lexical metrics
            (``f1_locomo``, ``f1_squad``, ``f1_mem0``, ``bleu1``), then ``j``, ``stored_j``).
        labels: display names of the runs, one per run in ``runs`` order (default: each
            run's input file name; the run directory's name where those collide).
    """

    runs: list[str] = field(default_factory=list)
    allow_mismatch: bool = False
    bootstrap_samples: int = 2000
    permutation_samples: int = 10000
    seed: int = 0
    baseline: Optional[str] = None
    alpha: float = 0.05
    min_overlap: float = 0.95
    metrics: Optional[list[str]] = None
    labels: Optional[list[str]] = None
