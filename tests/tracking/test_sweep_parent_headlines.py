"""A benchmark plug-in's sweep rows put its own headline figures on the sweep's MLflow parent."""

from __future__ import annotations

import math

from locomo_exp.tracking.metrics import parent_metrics


def test_a_plugin_rows_headlines_reach_the_parent_by_swept_value() -> None:
    rows = [
        {"status": "COMPLETED", "swept": {"data.path": "a.json"},
         "headlines": {"beam-nugget/pass_rate/overall": 50.5, "beam-official/mean": None}},
        {"status": "COMPLETED", "swept": {"data.path": "b.json"},
         "headlines": {"beam-nugget/pass_rate/overall": 56.5, "beam-official/mean": math.nan}},
        {"status": "FAILED", "swept": {"data.path": "c.json"},
         "headlines": {"beam-nugget/pass_rate/overall": 99.0}},
    ]
    found = {k: v for k, v in parent_metrics(rows).items() if k.endswith("pass_rate/overall")}
    assert sorted(found.values()) == [50.5, 56.5]  # the failed job's figure is not logged
    assert not [k for k in parent_metrics(rows) if "beam-official" in k]  # not measured: none
