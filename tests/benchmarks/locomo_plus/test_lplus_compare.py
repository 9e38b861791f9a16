"""mode=compare of two LoCoMo-Plus runs: paired by item, clustered by conversation, Cognitive
and factual separately; statistics checked against an independent computation."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from locomo_exp.benchmarks import compare_plugin_for
from locomo_exp.cli.jobs import run_compare_from_cli

FACTUAL = ["multi-hop", "temporal", "common-sense", "single-hop", "adversarial"]


def make_run(path: Path, scores: list[tuple[str, int, float | None]], headline: str = "ours",
             field: str = "score") -> Path:
    path.mkdir(parents=True)
    (path / "summary.json").write_text(json.dumps(
        {"schema_version": 1, "benchmark": "locomo_plus", "headline": headline}, indent=2))
    rows = [{"item_id": f"i{n}", "category": cat, "conversation": conv, field: score,
             "score": score if field == "score" else 0.0}
            for n, (cat, conv, score) in enumerate(scores)]
    (path / "scores.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


# 12 factual items over 4 conversations, 10 Cognitive items over 5 conversations
FACT_CONV = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
FACT_A = [1, 1, 0.5, 1, 0, 1, 1, 1, 0, 1, 1, 1]
FACT_B = [1, 0, 0.5, 0, 0, 1, 1, 0, 0, 1, 0, 1]
COG_CONV = [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
COG_A = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
COG_B = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1]


def runs(tmp_path: Path) -> tuple[Path, Path]:
    a = [(FACTUAL[n % 5], c, s) for n, (c, s) in enumerate(zip(FACT_CONV, FACT_A, strict=True))]
    b = [(FACTUAL[n % 5], c, s) for n, (c, s) in enumerate(zip(FACT_CONV, FACT_B, strict=True))]
    a += [("Cognitive", c, s) for c, s in zip(COG_CONV, COG_A, strict=True)]
    b += [("Cognitive", c, s) for c, s in zip(COG_CONV, COG_B, strict=True)]
    b.append(("Cognitive", 0, None))  # unscored in B, absent from A: not a pair
    return make_run(tmp_path / "runA", a), make_run(tmp_path / "runB", b)


def exact_sign_flip(diff: list[float]) -> float:
    observed = abs(np.mean(diff))
    hits = [abs(np.mean([s * d for s, d in zip(signs, diff, strict=True)])) >= observed - 1e-12
            for signs in itertools.product([1, -1], repeat=len(diff))]
    return float(np.mean(hits))


def cluster_ci(diff: list[float], clusters: list[int], draws: int = 40000) -> tuple[float, float]:
    rng = np.random.default_rng(12345)
    ids = sorted(set(clusters))
    sums = {c: sum(d for d, k in zip(diff, clusters, strict=True) if k == c) for c in ids}
    counts = {c: clusters.count(c) for c in ids}
    picks = rng.integers(0, len(ids), size=(draws, len(ids)))
    total = np.array([[sums[ids[j]] for j in row] for row in picks]).sum(axis=1)
    n = np.array([[counts[ids[j]] for j in row] for row in picks]).sum(axis=1)
    means = total / n
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def test_two_runs_compare_cognitive_and_factual_against_an_independent_computation(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs(tmp_path)
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]", "tracking.enabled=false",
                       "compare.bootstrap_samples=20000", "compare.permutation_samples=10000")
    assert compare_plugin_for(cfg, tmp_path) is not None
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    for name, xa, xb, conv in (("factual", FACT_A, FACT_B, FACT_CONV),
                               ("Cognitive", COG_A, COG_B, COG_CONV)):
        g = result["groups"][name]
        diff = [x - y for x, y in zip(xa, xb, strict=True)]
        assert g["n_pairs"] == len(xa)
        assert g["mean_a"] == pytest.approx(np.mean(xa))
        assert g["mean_b"] == pytest.approx(np.mean(xb))
        assert g["difference"] == pytest.approx(np.mean(diff))
        assert g["unit"] == "conversation" and g["clusters"] == len(set(conv))
        assert g["test"] == "sign_flip_exact"  # 2**12 and 2**10 <= 10,000 patterns
        assert g["pvalue"] == pytest.approx(exact_sign_flip(diff))
        low, high = cluster_ci(diff, conv)
        assert g["ci"][0] == pytest.approx(low, abs=0.03)
        assert g["ci"][1] == pytest.approx(high, abs=0.03)
    assert result["groups"]["Cognitive"]["unpaired"] == 1
    p = sorted([result["groups"]["factual"]["pvalue"], result["groups"]["Cognitive"]["pvalue"]])
    holm = sorted([result["groups"]["factual"]["pvalue_holm"],
                   result["groups"]["Cognitive"]["pvalue_holm"]])
    assert holm[0] == pytest.approx(min(1.0, 2 * p[0]))
    assert "factual: A 79.2%, B 45.8%, A - B +33.3 points" in out
    assert "Cognitive: A 70.0%, B 90.0%, A - B -20.0 points" in out
    assert "(by conversation, 5 units), n=10 (1 unpaired)" in out


def test_runs_without_conversations_fall_back_to_items_and_say_so(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = make_run(tmp_path / "a", [("Cognitive", None, 1.0), ("Cognitive", None, 0.0)])  # type: ignore[list-item]
    b = make_run(tmp_path / "b", [("Cognitive", None, 0.0), ("Cognitive", None, 0.0)],  # type: ignore[list-item]
                 headline="authors", field="score_authors")
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]", "tracking.enabled=false")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    assert "by item: a run does not record every item's conversation" in out
    assert "factual: no paired items; not measured" in out
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["readings"] == ["ours", "authors"]
    assert result["groups"]["Cognitive"]["difference"] == pytest.approx(0.5)


def test_three_runs_are_refused_in_one_line(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = runs(tmp_path)
    c = make_run(tmp_path / "runC", [("Cognitive", 0, 1.0)])
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b},{c}]", "tracking.enabled=false")
    with pytest.raises(SystemExit):
        run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    err = capsys.readouterr().err
    assert err.strip() == ("error: compare.runs: a LoCoMo-Plus comparison takes exactly two "
                           "runs, got 3")
    assert not (tmp_path / "cmp").exists()
