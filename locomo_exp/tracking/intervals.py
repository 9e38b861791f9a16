"""The run's 95% intervals as a table: the per-category ones MLflow's headline leaves out.

The headline metrics (:func:`~locomo_exp.tracking.headline.headline_metrics`) keep the
intervals of ``overall`` and ``overall_1_4`` only (issue 20 §3: at most 60 metrics a run);
every interval is in ``metrics.json`` and, one row per metric and group, in the table
logged with ``mlflow.log_table`` (the UI's artifact view shows and filters it).

Pure functions (no MLflow import).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INTERVALS_TABLE = "intervals_table.json"
"""The run's 95% intervals, one row per metric and group (:func:`interval_rows`), logged
with ``mlflow.log_table`` so the UI shows the per-category ones left out of the headline."""


def interval_rows(metrics: Mapping[str, float]) -> list[dict[str, Any]]:
    """One row per metric and group with a 95% interval: the table :data:`INTERVALS_TABLE`.

    Args:
        metrics: every metric of the run (``tracking.run_metrics``; percent).

    Returns:
        ``{"metric": "f1", "group": "cat1_multi_hop", "value": 48.1, "ci_low": 31.5,
        "ci_high": 64.5}`` per ``<metric>/<group>_ci_low`` that has its ``_ci_high``, in
        the order of ``metrics``; ``value`` is ``None`` when the point estimate is absent.
    """
    rows = []
    for name, low in metrics.items():
        if not name.endswith("_ci_low") or name.startswith("question_ci/"):
            continue
        base = name.removesuffix("_ci_low")
        high = metrics.get(f"{base}_ci_high")
        if high is None:
            continue
        metric, _, group = base.rpartition("/")
        rows.append({"metric": metric, "group": group, "value": metrics.get(base),
                     "ci_low": low, "ci_high": high})
    return rows


__all__ = ["INTERVALS_TABLE", "interval_rows"]
