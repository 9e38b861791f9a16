"""Paired, conversation-aware comparison of runs (issue 13, part 1).

:func:`run_compare` loads run directories (:mod:`.run_dirs`), matches their questions
(:mod:`locomo_exp.data.match`), checks their disclosure cards
(:mod:`locomo_exp.report.card`), computes per metric x category the difference with
cluster and question-level bootstrap intervals,
a paired test, Holm-adjusted p-values and the minimum detectable difference
(:mod:`.engine`), and writes ``compare.md``, ``compare.json`` and forest plots
(:mod:`.render`).
"""

from __future__ import annotations

from locomo_exp.benchmark.locomo import normalize_question
from locomo_exp.compare.comparison import CompareResult, PairInfo, run_compare
from locomo_exp.compare.engine import A_HIGHER, B_HIGHER, NOT_DISTINGUISHABLE, CompareRow
from locomo_exp.compare.run_dirs import CompareError, RunData, load_run
from locomo_exp.config.compare import CompareConfig
from locomo_exp.data.match import Matching, match_questions

__all__ = [
    "A_HIGHER",
    "B_HIGHER",
    "NOT_DISTINGUISHABLE",
    "CompareConfig",
    "CompareError",
    "CompareResult",
    "CompareRow",
    "Matching",
    "PairInfo",
    "RunData",
    "load_run",
    "match_questions",
    "normalize_question",
    "run_compare",
]
