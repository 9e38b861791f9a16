"""compare: paired, conversation-aware comparison of run directories (issue 13, part 1)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from locomo_exp.compare import (
    A_HIGHER,
    B_HIGHER,
    NOT_DISTINGUISHABLE,
    CompareConfig,
    CompareError,
    match_questions,
    run_compare,
)

COUNTS_60 = {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0}


def _questions(n_conv: int = 6, per_conv: int = 10) -> list[dict[str, Any]]:
    cats = [1, 2, 4, 4, 1, 2, 4, 4, 3, 4]
    return [
        {
            "conversation_id": f"conv-{c}",
            "question": f"What did person {c} do on day {q}?",
            "category": cats[q % len(cats)],
            "ground_truth": f"thing {c}-{q}",
            "index": c * per_conv + q,
        }
        for c in range(n_conv)
        for q in range(per_conv)
    ]


def write_run(
    run_dir: Path,
    questions: list[dict[str, Any]],
    f1: list[float] | None = None,
    j: list[float] | None = None,
    *,
    variant: str = "locomo",
    ids: bool = True,
    conv_prefix: str = "",
) -> Path:
    """A run directory as locomo_exp writes it (scores.jsonl, summary.json, config.yaml)."""
    run_dir.mkdir(parents=True)
    rows = []
    for k, q in enumerate(questions):
        conv = conv_prefix + q["conversation_id"]
        row: dict[str, Any] = {
            "question_id": f"{conv}:{q['index']}" if ids else f"{conv_prefix}x{k}",
            "conversation_id": conv,
            "category": q["category"],
            "question": q["question"],
            "ground_truth": q["ground_truth"],
            "prediction": "p",
        }
        if f1 is not None:
            row.update({"f1": f1[k], "f1_locomo": f1[k]})
        if j is not None:
            row["j_mean"] = j[k]
        rows.append(row)
    (run_dir / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts = dict(COUNTS_60)
    for q in questions:
        counts[str(q["category"])] += 1
    summary = {
        # an input file named like the run, so compare names the run "A", "B"...
        "input": {"path": str(run_dir.parent / "inputs" / run_dir.name), "name": run_dir.name,
                  "sha256": "ab" * 32, "format": "qa_results"},
        "versions": {"f1_locomo": "locomo-official-f1/v2", f"f1_{variant}": f"{variant}-f1/v2"},
        "category_names": {"1": "multi_hop", "2": "temporal", "3": "open_domain", "4": "single_hop", "5": "adversarial"},
        "counts": counts,
        "metrics": {"f1": {}} if f1 is not None else {},
    }
    if j is not None:
        summary["judge"] = {"model": "claude-sonnet-4-6", "protocol": "binary", "prompt_version": "b1",
                            "parser_version": "p1", "temperature": 0.0, "runs": 1, "categories": [1, 2, 3, 4]}
    (run_dir / "summary.json").write_text(json.dumps(summary))
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"data": {"path": "in.json"}, "f1": {"variant": variant}}))
    return run_dir


def _known_difference() -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """60 questions, 6 conversations: F1 A = B + 6 points on average; J 70 vs 45 (18 vs 3 discordant)."""
    qs = _questions()
    rng = np.random.default_rng(5)
    f1_b = rng.uniform(0.1, 0.9, 60)
    f1_a = np.clip(f1_b + 0.06 + rng.normal(0.0, 0.2, 60), 0.0, 1.0)
    q = np.arange(60) % 10
    conv = np.arange(60) // 10
    both = np.isin(q, [2, 3, 4, 6])  # 24 questions right in both runs
    only_a = np.isin(q, [0, 1, 5])  # 18: 3 per conversation
    only_b = (q == 7) & np.isin(conv, [2, 4, 5])  # 3
    j_a = 100.0 * (both | only_a)
    j_b = 100.0 * (both | only_b)
    return qs, f1_a, f1_b, j_a, j_b


def _exact_cluster_interval(diff: np.ndarray, conv: np.ndarray) -> tuple[float, float]:
    ids = np.unique(conv)
    sums = np.array([diff[conv == c].sum() for c in ids])
    counts = np.array([np.sum(conv == c) for c in ids], dtype=float)
    stats = [sums[list(p)].sum() / counts[list(p)].sum() for p in itertools.product(range(len(ids)), repeat=len(ids))]
    low, high = np.quantile(stats, [0.025, 0.975])
    return float(low), float(high)


@pytest.fixture()
def known_runs(tmp_path: Path) -> tuple[Path, Path, tuple]:
    data = _known_difference()
    qs, f1_a, f1_b, j_a, j_b = data
    a = write_run(tmp_path / "A", qs, list(f1_a), list(j_a))
    b = write_run(tmp_path / "B", qs, list(f1_b), list(j_b))
    return a, b, data


def _row(result, metric: str, group: str, pair: tuple[str, str] = ("A", "B")):
    (row,) = [r for r in result.rows if r.metric == metric and r.group == group and (r.run_a, r.run_b) == pair]
    return row


def test_known_difference_matches_independent_cluster_interval_mcnemar_and_permutation(known_runs, tmp_path):
    a, b, (qs, f1_a, f1_b, j_a, j_b) = known_runs
    cfg = CompareConfig(runs=["A", "B"], bootstrap_samples=20000, permutation_samples=20000)
    result = run_compare(cfg, tmp_path / "out", tmp_path)
    conv = np.array([q["conversation_id"] for q in qs])

    f1_row = _row(result, "f1_locomo", "overall")
    diff = 100 * (f1_a - f1_b)
    assert (f1_row.n, f1_row.n_conversations) == (60, 6)
    assert f1_row.mean_a == pytest.approx(100 * f1_a.mean()) and f1_row.diff == pytest.approx(diff.mean())
    low, high = _exact_cluster_interval(diff, conv)  # all 6**6 conversation resamples
    assert f1_row.cluster_ci == pytest.approx([low, high], abs=0.5)
    hand_rng = np.random.default_rng(123)  # independent Monte Carlo sign flips
    flips = hand_rng.choice([-1.0, 1.0], size=(200000, 60))
    hand_p = np.mean(np.abs((flips * diff).mean(axis=1)) >= abs(diff.mean()) - 1e-9)
    assert f1_row.test == "sign_flip_monte_carlo"
    assert f1_row.p == pytest.approx(hand_p, abs=0.01)
    sd = np.std(diff, ddof=1)
    assert f1_row.mde == pytest.approx((sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sd / np.sqrt(60))

    j_row = _row(result, "j", "overall")
    assert (j_row.mean_a, j_row.mean_b, j_row.diff) == pytest.approx((70.0, 45.0, 25.0))
    assert j_row.test == "mcnemar_exact"
    assert j_row.p == pytest.approx(sps.binomtest(18, 21, 0.5).pvalue, abs=1e-12)
    jd = j_a - j_b
    assert j_row.cluster_ci == pytest.approx(list(_exact_cluster_interval(jd, conv)), abs=0.75)

    # Holm across the category rows of a metric, with statsmodels on the same raw p-values
    cat_rows = [r for r in result.rows if r.metric == "j" and r.group in {"1", "2", "3", "4"}]
    expected = multipletests([r.p for r in cat_rows], method="holm")[1]
    assert [r.p_holm for r in cat_rows] == pytest.approx(list(expected))
    assert j_row.p_holm == j_row.p  # one overall row in its family
    for row in result.rows:
        separated = row.cluster_ci[0] > 0 or row.cluster_ci[1] < 0
        expected_verdict = (A_HIGHER if row.diff > 0 else B_HIGHER) if row.p_holm < 0.05 and separated else NOT_DISTINGUISHABLE
        assert row.verdict == expected_verdict
    assert j_row.verdict == A_HIGHER


def test_discordance_in_one_conversation_is_not_distinguishable_despite_mcnemar(tmp_path):
    """12 of 15 discordant pairs in conversations 0-1: the question-level test says p < 0.05,
    the conversation-cluster interval includes 0, so the verdict is not distinguishable."""
    qs = _questions()
    j_a, j_b = np.zeros(60), np.zeros(60)
    j_a[:42] = 100.0
    j_b[12:42] = 100.0
    j_b[50:53] = 100.0
    write_run(tmp_path / "A", qs, j=list(j_a))
    write_run(tmp_path / "B", qs, j=list(j_b))
    result = run_compare(CompareConfig(runs=["A", "B"], bootstrap_samples=5000), tmp_path / "out", tmp_path, plots=False)
    row = _row(result, "j", "overall")
    assert row.p == pytest.approx(sps.binomtest(12, 15, 0.5).pvalue, abs=1e-12)  # 0.0352
    assert row.p < 0.05 and row.cluster_ci[0] < 0 < row.cluster_ci[1]
    assert row.question_ci[0] > 0  # the question-level interval alone would have said A higher
    assert row.verdict == NOT_DISTINGUISHABLE


def test_compare_writes_markdown_json_and_forest_plot(known_runs, tmp_path):
    result = run_compare(CompareConfig(runs=["A", "B"], bootstrap_samples=200, permutation_samples=200), tmp_path / "out", tmp_path)
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "compare.md", "compare_forest.png"]
    doc = json.loads((out / "compare.json").read_text())
    assert [p["counts"]["shared"] for p in doc["pairs"]] == [60]
    assert len(doc["rows"]) == len(result.rows) == 2 * 6  # f1_locomo and j x (1, 2, 3, 4, overall_1_4, overall)
    md = (out / "compare.md").read_text()
    assert "- Questions: 60 shared, 0 only in A, 0 only in B (overlap 100.0%, matched by question_id)" in md
    # no category-5 question: overall is overall 1-4, shown once (compare.json keeps both)
    assert "| J | overall 1-4 | 60 | 6 | 70.00 | 45.00 | +25.00 |" in md
    assert "| J | overall |" not in md
    assert (out / "compare_forest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result.mlflow_metrics()["compare/A_vs_B/j/overall/diff"] == pytest.approx(25.0)
    assert result.mlflow_tags() == {"compare.run.0": str(tmp_path / "A"), "compare.run.1": str(tmp_path / "B")}


def test_identical_runs_differ_by_zero_and_are_not_distinguishable(tmp_path):
    qs, f1_a, _, j_a, _ = _known_difference()
    write_run(tmp_path / "A", qs, list(f1_a), list(j_a))
    write_run(tmp_path / "B", qs, list(f1_a), list(j_a))
    result = run_compare(CompareConfig(runs=["A", "B"], bootstrap_samples=300), tmp_path / "out", tmp_path, plots=False)
    assert result.rows
    for row in result.rows:
        assert (row.diff, row.cluster_ci, row.question_ci, row.p) == (0.0, [0.0, 0.0], [0.0, 0.0], 1.0)
        assert row.verdict == NOT_DISTINGUISHABLE


def test_disjoint_question_sets_are_refused(tmp_path):
    qs = _questions()
    write_run(tmp_path / "A", qs[:30], [0.5] * 30)
    write_run(tmp_path / "B", qs[30:], [0.5] * 30)
    with pytest.raises(CompareError, match=r"^runs A and B share no question \(30 in A, 30 in B\): nothing to compare$"):
        run_compare(CompareConfig(runs=["A", "B"]), tmp_path / "out", tmp_path)
    assert not (tmp_path / "out").exists()


def test_locomo_f1_run_vs_mem0_f1_run_refused_unless_allow_mismatch(tmp_path):
    qs, f1_a, f1_b, j_a, j_b = _known_difference()
    write_run(tmp_path / "A", qs, list(f1_a), list(j_a), variant="locomo")
    write_run(tmp_path / "B", qs, list(f1_b), list(j_b), variant="mem0")
    with pytest.raises(CompareError) as err:
        run_compare(CompareConfig(runs=["A", "B"]), tmp_path / "out", tmp_path)
    assert str(err.value) == (
        "runs A and B are not comparable (f1.variant: locomo vs mem0); "
        "set compare.allow_mismatch=true to compare anyway (rows are marked)"
    )
    result = run_compare(CompareConfig(runs=["A", "B"], allow_mismatch=True, bootstrap_samples=200), tmp_path / "out", tmp_path)
    assert result.pairs[0].mismatches == ["f1.variant: locomo vs mem0"]
    assert all(r.marks == ["f1.variant: locomo vs mem0"] for r in result.rows if r.metric == "f1_locomo")
    assert all(r.marks == [] for r in result.rows if r.metric == "j")
    md = (tmp_path / "out" / "compare.md").read_text()
    assert "- ⚠ A vs B: compared only because allow_mismatch=true: f1.variant: locomo vs mem0" in md
    assert "⚠ f1.variant: locomo vs mem0 |" in md


def test_low_overlap_is_flagged_with_counts(tmp_path):
    qs = _questions()
    write_run(tmp_path / "A", qs, [0.5] * 60)
    write_run(tmp_path / "B", qs[:54], [0.4] * 54)
    cfg = CompareConfig(runs=["A", "B"], allow_mismatch=True, bootstrap_samples=100, permutation_samples=100)
    result = run_compare(cfg, tmp_path / "out", tmp_path, plots=False)
    pair = result.pairs[0]
    assert pair.mismatches == ["question_set: custom (60) vs custom (54)"]
    assert (pair.counts["shared"], pair.counts["only_a"], pair.counts["only_b"]) == (54, 6, 0)
    assert pair.low_overlap and pair.counts["overlap"] == pytest.approx(0.9)
    warning = "A vs B: only 90.0% of questions shared (below 95%): the runs answer different question sets"
    assert warning in result.warnings
    assert f"- ⚠ {warning}" in (tmp_path / "out" / "compare.md").read_text()


def test_questions_match_by_text_when_ids_and_conversation_names_differ(tmp_path):
    qs = _questions()
    write_run(tmp_path / "A", qs, [0.5] * 60)
    shuffled = [qs[i] for i in np.random.default_rng(0).permutation(60)]
    # B names conversations and ids differently, and writes questions in other case/spacing
    b_qs = [dict(q, question=q["question"].upper().replace("?", " ?")) for q in shuffled]
    write_run(tmp_path / "B", b_qs, [0.5] * 60, ids=False, conv_prefix="user_")
    from locomo_exp.compare.run_dirs import read_scores

    rows_a = read_scores(tmp_path / "A" / "scores.jsonl")
    rows_b = read_scores(tmp_path / "B" / "scores.jsonl")
    matching = match_questions(rows_a, rows_b)
    assert matching.matched_by == "conversation+question"
    assert len(matching.pairs) == 60 and not matching.only_a and not matching.only_b
    assert matching.conversation_map["user_conv-3"] == "conv-3"
    assert all(rows_a[i]["question"].upper() == rows_b[j]["question"].replace(" ?", "?") for i, j in matching.pairs)


def test_three_runs_compare_all_pairs_with_holm_over_pairs(tmp_path):
    qs, f1_a, f1_b, _, _ = _known_difference()
    write_run(tmp_path / "A", qs, list(f1_a))
    write_run(tmp_path / "B", qs, list(f1_b))
    write_run(tmp_path / "C", qs, list(np.clip(f1_b + 0.02, 0, 1)))
    result = run_compare(CompareConfig(runs=["A", "B", "C"], bootstrap_samples=200, permutation_samples=500), tmp_path / "out", tmp_path)
    assert [(p.run_a, p.run_b) for p in result.pairs] == [("A", "B"), ("A", "C"), ("B", "C")]
    overall = [r for r in result.rows if r.group == "overall"]
    assert [r.p_holm for r in overall] == pytest.approx(list(multipletests([r.p for r in overall], method="holm")[1]))
    cats = [r for r in result.rows if r.group in {"1", "2", "3", "4"}]
    assert len(cats) == 12
    assert [r.p_holm for r in cats] == pytest.approx(list(multipletests([r.p for r in cats], method="holm")[1]))
    assert len(list((tmp_path / "out").glob("compare_forest_*.png"))) == 3

    with_baseline = run_compare(
        CompareConfig(runs=["A", "B", "C"], baseline="B", bootstrap_samples=100, permutation_samples=100),
        tmp_path / "out2", tmp_path, plots=False,
    )
    assert [(p.run_a, p.run_b) for p in with_baseline.pairs] == [("B", "A"), ("B", "C")]
    with pytest.raises(CompareError, match=r"^compare.baseline=D: not one of compare.runs \(A, B, C\)$"):
        run_compare(CompareConfig(runs=["A", "B", "C"], baseline="D"), tmp_path / "out3", tmp_path)


def test_bad_run_inputs_name_file_line_and_field(tmp_path):
    qs = _questions()
    write_run(tmp_path / "A", qs, [0.5] * 60)
    with pytest.raises(CompareError, match=r"^compare.runs: give at least two run directories, got 1$"):
        run_compare(CompareConfig(runs=["A"]), tmp_path / "out", tmp_path)
    with pytest.raises(CompareError, match=r"nope: not a directory \(compare.runs takes run directories\)$"):
        run_compare(CompareConfig(runs=["A", "nope"]), tmp_path / "out", tmp_path)
    (tmp_path / "E").mkdir()
    with pytest.raises(CompareError, match=r"E/scores.jsonl: missing \(not a run directory written by locomo_exp\)$"):
        run_compare(CompareConfig(runs=["A", "E"]), tmp_path / "out", tmp_path)
    write_run(tmp_path / "B", qs, [0.5] * 60)
    lines = (tmp_path / "B" / "scores.jsonl").read_text().splitlines()
    row = json.loads(lines[2])
    del row["question"]
    lines[2] = json.dumps(row)
    (tmp_path / "B" / "scores.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(CompareError, match=r"B/scores.jsonl: line 3: field 'question' missing$"):
        run_compare(CompareConfig(runs=["A", "B"]), tmp_path / "out", tmp_path)
    row["question"], row["f1_locomo"] = "q", "high"
    lines[2] = json.dumps(row)
    (tmp_path / "B" / "scores.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(CompareError, match=r"B/scores.jsonl: line 3: field 'f1_locomo': expected a number, got 'high'$"):
        run_compare(CompareConfig(runs=["A", "B"]), tmp_path / "out", tmp_path)
