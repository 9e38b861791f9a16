"""The benchmarks' facts: one spec per benchmark (:mod:`.spec`), one facts module each.

:mod:`.longmemeval` holds LongMemEval's (question types and sizes, abstention ids, dataset
variants, judge kinds); :mod:`.locomo` holds LoCoMo's category ids, names and sizes, the
overall groups and the one question normaliser; :data:`.spec.BENCHMARKS` lists every
benchmark. This package imports nothing from the rest of ``locomo_exp``, so every layer may read it.
"""

from __future__ import annotations

from locomo_exp.benchmark.spec import (
    BENCHMARKS,
    LOCOMO,
    LONGMEMEVAL,
    BenchmarkSpec,
    JudgeCheckLimits,
    get_benchmark,
)

__all__ = [
    "BENCHMARKS",
    "LOCOMO",
    "LONGMEMEVAL",
    "BenchmarkSpec",
    "JudgeCheckLimits",
    "get_benchmark",
]
