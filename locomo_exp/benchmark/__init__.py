"""The default benchmark's facts: LoCoMo's spec (:mod:`.spec`) and facts module (:mod:`.locomo`).

:mod:`.locomo` holds LoCoMo's category ids, names and sizes, the overall groups and the one
question normaliser; :class:`.spec.BenchmarkSpec` is the shape of a benchmark's facts, which a
benchmark plug-in fills in its own package. This package imports nothing from the rest of
``locomo_exp``, so every layer may read it.
"""

from __future__ import annotations

from locomo_exp.benchmark.spec import (
    LOCOMO,
    BenchmarkSpec,
    JudgeCheckLimits,
)

__all__ = [
    "LOCOMO",
    "BenchmarkSpec",
    "JudgeCheckLimits",
]
