"""mode=compare of two BEAM runs: paired per question, clustered by chat, per ability with Holm,
overall too; every statistic checked against an independent computation; the "not comparable"
warning when the runs' verdicts came from different judges or profiles."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from beam_helpers import RESULTS_10M, config, mem0_file, mem0_row

from locomo_exp.benchmarks import compare_plugin_for
from locomo_exp.benchmarks.beam.job import run_beam
from locomo_exp.cli.jobs import run_compare_from_cli

ABILITIES = ("abstention", "knowledge_update")
# per ability: 4 chats x 2 questions; each question's three item verdicts in run A and run B
ITEMS_A = {
    "abstention": [[1, 1, 0], [1, 0.5, 1], [0, 0, 1], [1, 1, 1],
                   [0.5, 0.5, 0], [1, 0, 0], [1, 1, 0.5], [0, 1, 1]],
    "knowledge_update": [[1, 1, 1], [0, 0, 0], [1, 0.5, 0.5], [1, 1, 0],
                         [0, 1, 0], [1, 1, 1], [0.5, 0, 0], [1, 1, 1]],
}
ITEMS_B = {
    "abstention": [[0, 1, 0], [0, 0.5, 0], [0, 0, 0], [1, 1, 0],
                   [0.5, 0, 0], [1, 0, 0], [0, 1, 0.5], [0, 0, 1]],
    "knowledge_update": [[1, 1, 1], [0, 1, 0], [1, 1, 0.5], [1, 0, 0],
                         [0, 1, 0], [1, 0.5, 1], [0.5, 0.5, 0], [0, 1, 1]],
}


def chat_of(k: int) -> int:
    return k // 2  # questions 0-1 in chat 0, 2-3 in chat 1, ...


def write_runs(tmp_path: Path, judge_b: str = "invented-judge") -> tuple[Path, Path]:
    dirs = []
    for name, items, judge in (("A", ITEMS_A, "invented-judge"), ("B", ITEMS_B, judge_b)):
        rows = [mem0_row(chat_of(k), 2 * n + k % 2, ability, scores)
                for n, ability in enumerate(ABILITIES)
                for k, scores in enumerate(items[ability])]
        path = mem0_file(tmp_path / f"{name}.json", rows, judge=judge)
        run_beam(config(path), tmp_path / f"run{name}", tmp_path)
        dirs.append(tmp_path / f"run{name}")
    return dirs[0], dirs[1]


def nugget(items: list[float]) -> float:  # mem0's rule by hand: mean of 0/0.5/1, 4 decimals
    return round(sum(items) / len(items), 4)


def official(items: list[float]) -> float:  # the authors' rule by hand: int() of each verdict
    return sum(int(s) for s in items) / len(items)


def exact_sign_flip(diff: list[float]) -> float:
    d = np.array(diff)
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(diff))))
    means = np.abs((signs * d).mean(axis=1))
    return float(np.mean(means >= abs(d.mean()) - 1e-12))


def cluster_ci(diff: list[float], clusters: list[str], draws: int = 40000) -> tuple[float, float]:
    rng = np.random.default_rng(98765)
    ids = sorted(set(clusters))
    sums = np.array([sum(d for d, c in zip(diff, clusters, strict=True) if c == i) for i in ids])
    counts = np.array([clusters.count(i) for i in ids], dtype=float)
    picks = rng.integers(0, len(ids), size=(draws, len(ids)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def holm(pvalues: list[float]) -> list[float]:  # Holm 1979 by hand: step-down, running maximum
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        out[i] = running
    return out


def test_two_runs_compare_per_ability_and_overall_against_an_independent_computation(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write_runs(tmp_path)
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]", "tracking.enabled=false",
                       "compare.labels=[sysA,sysB]", "compare.bootstrap_samples=20000",
                       "compare.permutation_samples=70000")
    assert compare_plugin_for(cfg, tmp_path) is not None
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["not_comparable"] == []
    for profile, rule in (("beam-nugget", nugget), ("beam-official", official)):
        groups = result["profiles"][profile]
        raw = []
        for ability in ABILITIES:
            xa = [rule(i) for i in ITEMS_A[ability]]
            xb = [rule(i) for i in ITEMS_B[ability]]
            diff = [x - y for x, y in zip(xa, xb, strict=True)]
            chats = [f"100K_{chat_of(k)}" for k in range(8)]
            g = groups[ability]
            assert (g["n_pairs"], g["unpaired"], g["chats"]) == (8, 0, 4)
            assert g["mean_a"] == pytest.approx(np.mean(xa))
            assert g["mean_b"] == pytest.approx(np.mean(xb))
            assert g["difference"] == pytest.approx(np.mean(diff))
            assert g["test"] == "sign_flip_exact"
            assert g["pvalue"] == pytest.approx(exact_sign_flip(diff))
            low, high = cluster_ci(diff, chats)
            assert g["ci"][0] == pytest.approx(low, abs=0.02)
            assert g["ci"][1] == pytest.approx(high, abs=0.02)
            raw.append(g["pvalue"])
        for ability, expected in zip(ABILITIES, holm(raw), strict=True):
            assert groups[ability]["pvalue_holm"] == pytest.approx(expected)
        xa = [rule(i) for ab in ABILITIES for i in ITEMS_A[ab]]
        xb = [rule(i) for ab in ABILITIES for i in ITEMS_B[ab]]
        diff = [x - y for x, y in zip(xa, xb, strict=True)]
        overall = groups["overall"]
        assert overall["n_pairs"] == 16 and overall["chats"] == 4
        assert overall["difference"] == pytest.approx(np.mean(diff))
        assert overall["test"] == "sign_flip_exact"  # 2**16 = 65,536 <= 70,000
        assert overall["pvalue"] == pytest.approx(exact_sign_flip(diff))
        low, high = cluster_ci(diff, [f"100K_{chat_of(k % 8)}" for k in range(16)])
        assert overall["ci"][0] == pytest.approx(low, abs=0.02)
        assert overall["ci"][1] == pytest.approx(high, abs=0.02)
        assert "pvalue_holm" not in overall
    ab = result["profiles"]["beam-nugget"]["abstention"]
    assert (round(ab["mean_a"], 4), round(ab["mean_b"], 4)) == (0.625, 0.3125)  # 5.0 / 8, 2.5 / 8
    assert "BEAM comparison: A = sysA" in out and "WARNING: NOT COMPARABLE" not in out
    assert "Profile beam-nugget" in out and "Profile beam-official" in out
    md = (tmp_path / "cmp" / "compare.md").read_text()
    assert "| abstention | 8 | 4 | 0.625 | 0.312 | +0.312 |" in md


def test_different_judges_are_flagged_not_comparable_and_still_paired(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write_runs(tmp_path, judge_b="another-judge")
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]", "tracking.enabled=false",
                       "compare.bootstrap_samples=200")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["not_comparable"] == ["different judges (invented-judge vs another-judge)"]
    assert ("WARNING: NOT COMPARABLE: different judges (invented-judge vs another-judge)"
            in out)
    # and each run against the published mem0 Platform baseline (judge gpt-5)
    assert ("run B vs published mem0 Platform, 10M tier (top 200) (beam-nugget, judge gpt-5): "
            "NOT COMPARABLE (judge another-judge vs gpt-5)") in out.replace(str(b), "B")
    assert result["profiles"]["beam-nugget"]["overall"]["n_pairs"] == 16


def test_judged_profiles_differ_is_flagged(tmp_path: Path) -> None:
    from locomo_exp.benchmarks.beam.compare import BeamRunScores, not_comparable

    a = BeamRunScores(tmp_path, "beam-nugget", False, "m")
    b = BeamRunScores(tmp_path, "beam-official", True, "m")
    assert not_comparable(a, b) == [
        "item verdicts judged under different profiles' prompts (beam-nugget vs beam-official)",
        "beam.strict differs (False vs True)",
    ]


def test_unscored_questions_are_counted_unpaired(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows_a = [mem0_row(0, 4, "event_ordering", [1, 0]), mem0_row(1, 4, "event_ordering", [1, 1])]
    rows_b = [mem0_row(0, 4, "event_ordering", [0, 0])]
    run_beam(config(mem0_file(tmp_path / "a.json", rows_a)), tmp_path / "ra", tmp_path)
    run_beam(config(mem0_file(tmp_path / "b.json", rows_b)), tmp_path / "rb", tmp_path)
    cfg = typed_config("mode=compare", f"compare.runs=[{tmp_path / 'ra'},{tmp_path / 'rb'}]",
                       "tracking.enabled=false", "compare.bootstrap_samples=100")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    eo = result["profiles"]["beam-nugget"]["event_ordering"]
    assert (eo["n_pairs"], eo["unpaired"], eo["difference"]) == (1, 1, 0.5)
    # stored verdicts hold no line alignment: beam-official's event ordering is unscored
    official = result["profiles"]["beam-official"]["event_ordering"]
    assert (official["n_pairs"], official["unpaired"]) == (0, 2)
    assert "event ordering" in capsys.readouterr().out


def test_three_runs_are_refused_in_one_line(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write_runs(tmp_path)
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b},{a}]", "tracking.enabled=false")
    with pytest.raises(SystemExit) as exc:
        run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "a BEAM comparison takes exactly two runs, got 3" in err
    assert "Traceback" not in err and not (tmp_path / "cmp" / "compare.json").exists()


@pytest.mark.skipif(not RESULTS_10M.is_file(), reason="shared BEAM data not found")
def test_the_published_run_against_itself_differs_by_nothing(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_beam(config(RESULTS_10M), tmp_path / "r1", tmp_path)
    run_beam(config(RESULTS_10M), tmp_path / "r2", tmp_path)
    cfg = typed_config("mode=compare", f"compare.runs=[{tmp_path / 'r1'},{tmp_path / 'r2'}]",
                       "tracking.enabled=false", "compare.bootstrap_samples=200")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    overall = result["profiles"]["beam-nugget"]["overall"]
    assert (overall["n_pairs"], overall["chats"]) == (200, 10)
    assert overall["mean_a"] == pytest.approx(0.4860235)
    assert (overall["difference"], overall["pvalue"]) == (0.0, 1.0)
    assert result["not_comparable"] == []
    assert "WARNING: NOT COMPARABLE" not in out
    assert "(beam-nugget, judge gpt-5): NOT COMPARABLE (judge gpt-5 vs gpt-5)" not in out
    assert result["baselines"]["mem0 Platform, 10M tier (top 200) (beam-nugget, judge gpt-5)"] \
        == [None, None]  # the published run, its own profile and judge: comparable
