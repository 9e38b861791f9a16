"""compare end to end on real files: Memobase vs Zep stored J (1,540 questions each)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import SHARED_DATA, run_cli
from scipy import stats as sps

from locomo_exp.compare import NOT_DISTINGUISHABLE, CompareConfig, run_compare

PREDICTIONS = SHARED_DATA / "predictions"
MEMOBASE = PREDICTIONS / "memobase_eval_0710.json"
ZEP = PREDICTIONS / "zep_locomo_grades.json"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (MEMOBASE.is_file() and ZEP.is_file()), reason="../shared/data not present"),
]


def _score(run_dir: Path, *overrides: str) -> Path:
    done = run_cli(*overrides, "tracking=none", f"hydra.run.dir={run_dir}", cwd=run_dir.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return run_dir


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def _independent_discordant() -> tuple[int, int]:
    """Discordant pairs read straight from the two published files (conversation index + question)."""
    memobase = json.loads(MEMOBASE.read_text())
    zep = json.loads(ZEP.read_text())
    seen: Counter = Counter()
    mem = {}
    for conv, items in memobase.items():
        for item in items:
            key = (int(conv), _norm(item["question"]))
            mem[(*key, seen[key])] = bool(item["llm_score"])
            seen[key] += 1
    seen.clear()
    only_m = only_z = 0
    for user, items in zep.items():
        for item in items:
            key = (int(user.rsplit("_", 1)[1]), _norm(item["question"]))
            m = mem[(*key, seen[key])]
            seen[key] += 1
            only_m += m and not item["grade"]
            only_z += item["grade"] and not m
    return only_m, only_z


def test_memobase_vs_zep_stored_j_end_to_end(tmp_path):
    _score(tmp_path / "memobase", "data=file", f"data.path={MEMOBASE}")
    _score(tmp_path / "zep", "data=zep", f"data.path={ZEP}")
    cfg = CompareConfig(runs=["memobase", "zep"], metrics=["stored_j"], bootstrap_samples=2000)
    result = run_compare(cfg, tmp_path / "compare", tmp_path)

    pair = result.pairs[0]
    assert (pair.counts["shared"], pair.counts["only_a"], pair.counts["only_b"]) == (1540, 0, 0)
    assert pair.counts["matched_by"] == "conversation+question"
    assert not pair.low_overlap and pair.mismatches == []
    rows = {r.group: r for r in result.rows}
    means = {g: (round(r.mean_a, 2), round(r.mean_b, 2)) for g, r in rows.items()}
    assert means == {
        "1": (70.92, 74.11), "2": (85.05, 66.04), "3": (46.88, 67.71), "4": (77.17, 79.79),
        "overall_1_4": (75.78, 75.13), "overall": (75.78, 75.13),
    }
    overall = rows["overall"]
    only_m, only_z = _independent_discordant()
    assert all(r.test == "mcnemar_exact" for r in rows.values())
    assert overall.p == pytest.approx(sps.binomtest(only_m, only_m + only_z, 0.5).pvalue, abs=1e-12)
    assert overall.verdict == NOT_DISTINGUISHABLE
    assert overall.cluster_ci[0] < 0 < overall.cluster_ci[1]
    assert [rows[g].verdict for g in ("1", "2", "3", "4")] == [
        NOT_DISTINGUISHABLE, "A higher", "B higher", NOT_DISTINGUISHABLE,
    ]
    md = (tmp_path / "compare" / "compare.md").read_text()
    assert "- Questions: 1540 shared, 0 only in A, 0 only in B (overlap 100.0%, matched by conversation+question)" in md
