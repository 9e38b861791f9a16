"""LoCoMo-only data settings on a LongMemEval run are refused, never silently ignored (trial finding).

From a new user's trial: ``data.limit=50`` on a LongMemEval file scored all 500 questions with
no word, so a "cheap trial" of a judge would have paid for the whole file.
"""

from __future__ import annotations

import pytest
from lme_helpers import GPT4O, REFERENCE, need_shared

from locomo_exp.benchmarks.longmemeval.job import locomo_only_settings, run_longmemeval

PLAIN = ("data=file", "tracking=none")


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("data.limit=50", "data.limit=50"),
        ("data.runs=[a.json,b.json]", "data.runs=['a.json', 'b.json']"),
        ("data.errata=errors.json", "data.errata=errors.json"),
        ("data.categories_from=grades.json", "data.categories_from=grades.json"),
        ("data.setting=top_50", "data.setting=top_50"),
    ],
)
def test_each_locomo_only_setting_is_named(typed_config, override, named):
    cfg = typed_config(*PLAIN, f"data.path={GPT4O}", override)
    assert locomo_only_settings(cfg) == (
        f"{named}: not available for LongMemEval answers, which are scored whole against "
        "data.reference; drop the setting"
    )


def test_none_set_is_no_refusal(typed_config):
    assert locomo_only_settings(typed_config(*PLAIN, f"data.path={GPT4O}", "data.seed=3")) is None


def test_a_sample_asked_for_stops_the_run_before_anything_is_written(typed_config, tmp_path):
    need_shared()
    cfg = typed_config(*PLAIN, f"data.path={GPT4O}", f"data.reference={REFERENCE}", "data.limit=50")
    with pytest.raises(ValueError, match=r"^data\.limit=50: not available for LongMemEval"):
        run_longmemeval(cfg, tmp_path / "out", tmp_path)
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == []  # nothing written
