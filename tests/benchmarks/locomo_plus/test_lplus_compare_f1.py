"""``mode=compare`` of two LoCoMo-Plus runs scored with ``scorer=both``: each factual category's
paired F1 difference with its cluster-bootstrap interval by conversation, as J's (issue 29).

Invented per-item F1 (no benchmark text), so every figure is worked out by hand: with two
conversations the cluster bootstrap draws {c0, c0} and {c1, c1} a quarter of the time each, so
its 2.5% and 97.5% percentiles are exactly the two conversations' own mean differences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from locomo_exp.benchmarks.locomo_plus.compare import compare_runs, read_run, render_lines

# (item, category, conversation, F1 of A, F1 of B)
ITEMS = (
    ("s0", "single-hop", 0, 1.0, 0.5),
    ("s1", "single-hop", 0, 0.5, 0.5),
    ("s2", "single-hop", 0, 0.0, 0.0),
    ("s3", "single-hop", 1, 0.8, 0.2),
    ("s4", "single-hop", 1, 0.6, 0.6),
    ("s5", "single-hop", 1, 0.4, 0.1),
    ("m0", "multi-hop", 0, 0.7, 0.5),
    ("m1", "multi-hop", 0, 0.9, 0.7),
    ("c0", "Cognitive", 1, None, None),
)


def _run(path: Path, side: int, variant: str | None = "locomo") -> Path:
    path.mkdir()
    summary: dict[str, Any] = {"benchmark": "locomo_plus", "headline": "ours"}
    if variant is not None:
        summary["f1"] = {"variant": variant}
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    rows = []
    for item, category, conv, *f1 in ITEMS:
        row: dict[str, Any] = {"item_id": item, "category": category, "conversation": conv,
                               "score": 1.0}
        if variant is not None:
            row[f"f1_{variant}"] = f1[side]
        rows.append(json.dumps(row))
    (path / "scores.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _compare(a: Path, b: Path) -> dict[str, Any]:
    return compare_runs(read_run(a), read_run(b), samples=2000, permutations=10000, seed=0)


def test_each_factual_category_gets_the_paired_f1_difference_clustered_by_conversation(
    tmp_path: Path,
) -> None:
    result = _compare(_run(tmp_path / "a", 0), _run(tmp_path / "b", 1))
    f1 = result["f1"]
    assert f1["variant"] == "locomo"
    single = f1["by_category"]["single-hop"]
    # differences: conversation 0: 0.5, 0, 0 (mean 1/6); conversation 1: 0.6, 0, 0.3 (0.3)
    assert single["n_pairs"] == 6 and single["unit"] == "conversation"
    assert single["clusters"] == 2
    assert single["mean_a"] == pytest.approx(3.3 / 6)
    assert single["mean_b"] == pytest.approx(1.9 / 6)
    assert single["difference"] == pytest.approx(1.4 / 6)
    assert single["ci"] == [pytest.approx(1 / 6), pytest.approx(0.3)]
    # exact sign-flip test: of the 8 sign patterns of 0.5, 0.6, 0.3 only ± all reach 1.4
    assert "exact" in single["test"]
    assert single["pvalue"] == pytest.approx(2 / 8)
    multi = f1["by_category"]["multi-hop"]
    # one conversation: the interval collapses to the estimate; patterns ++ and -- of 0.2, 0.2
    assert multi["difference"] == pytest.approx(0.2)
    assert multi["ci"] == [pytest.approx(0.2), pytest.approx(0.2)]
    assert multi["pvalue"] == pytest.approx(0.5)
    # Holm over the two measured categories: 0.25 x 2 = 0.5, then max(0.5, 0.5 x 1)
    assert (single["pvalue_holm"], multi["pvalue_holm"]) == (pytest.approx(0.5),
                                                             pytest.approx(0.5))
    for cat in ("temporal", "common-sense", "adversarial"):
        assert f1["by_category"][cat]["n_pairs"] == 0
        assert f1["by_category"][cat]["pvalue_holm"] is None
    assert "Cognitive" not in f1["by_category"]  # no gold answer, no F1
    lines = render_lines(result, ("A", "B"))
    assert ("    single-hop: A 0.5500, B 0.3167, A - B +0.2333, 95% CI +0.1667 to +0.3000 "
            "(by conversation, 2 units), n=6;") in "\n".join(lines)
    assert "    temporal: no paired items; not measured" in lines


def test_f1_is_not_measured_without_scorer_both_or_across_variants(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", 0)
    no_f1 = _compare(a, _run(tmp_path / "b", 1, variant=None))
    assert no_f1["f1"] == {"variant": None,
                           "not_measured": f"{tmp_path / 'b'}: no F1 (run with scorer=both)"}
    assert (f"  F1: not measured ({tmp_path / 'b'}: no F1 (run with scorer=both))"
            in render_lines(no_f1, ("A", "B")))
    other = _compare(a, _run(tmp_path / "c", 1, variant="squad"))
    assert other["f1"]["not_measured"] == "different F1 variants (locomo vs squad): not comparable"
