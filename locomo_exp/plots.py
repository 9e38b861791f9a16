"""Deprecated location of the report's plots: use :mod:`locomo_exp.report.plots`.

Kept so code written against ``locomo_exp.plots`` (e.g. the sweep summary plot) keeps
working until it imports :func:`locomo_exp.report.plots.pyplot` directly.
"""

from __future__ import annotations

from locomo_exp.report.plots import (
    CATEGORY_PLOT,
    J_DISTRIBUTION_PLOT,
    plot_category_scores,
    plot_j_distribution,
    pyplot,
)

_pyplot = pyplot  # old private name, still imported by sweep.py; new code uses ``pyplot``

__all__ = [
    "CATEGORY_PLOT",
    "J_DISTRIBUTION_PLOT",
    "plot_category_scores",
    "plot_j_distribution",
    "pyplot",
]
