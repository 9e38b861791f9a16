"""Comparisons refuse unlike things and say so where the user looks (issue 18 §2)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from scipy import stats
from test_compare import _questions, write_run

from locomo_exp.compare import CompareConfig, CompareError, run_compare
from locomo_exp.compare.engine import NOT_DISTINGUISHABLE


def _rewrite(run: Path, change) -> None:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    for k, row in enumerate(rows):
        change(k, row)
    (run / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _summary(run: Path, **changes) -> None:  # type: ignore[no-untyped-def]
    summary = json.loads((run / "summary.json").read_text())
    for key, value in changes.items():
        target = summary
        *parents, last = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    (run / "summary.json").write_text(json.dumps(summary))


def _cfg(*runs: str, **kw) -> CompareConfig:  # type: ignore[no-untyped-def]
    return CompareConfig(runs=list(runs), bootstrap_samples=200, permutation_samples=200, **kw)


# -- another answer key -----------------------------------------------------------------


def test_runs_whose_golds_differ_are_refused_unless_allow_mismatch(tmp_path: Path) -> None:
    qs = _questions()[:40]
    write_run(tmp_path / "A", qs, [0.9] * 40)
    write_run(tmp_path / "B", qs, [0.2] * 40)

    def other_key(k: int, row: dict) -> None:  # type: ignore[type-arg]
        if k % 2:
            row["ground_truth"] = "another answer " + str(k)

    _rewrite(tmp_path / "B", other_key)
    with pytest.raises(CompareError) as refused:
        run_compare(_cfg("A", "B"), tmp_path / "out", tmp_path, plots=False)
    assert str(refused.value) == (
        "runs A and B are not comparable (ground truths differ for 20 of 40 shared questions "
        "(another answer key)); set compare.allow_mismatch=true to compare anyway (rows are "
        "marked)"
    )
    result = run_compare(_cfg("A", "B", allow_mismatch=True), tmp_path / "out", tmp_path,
                         plots=False)
    assert all(row.marks for row in result.rows)
    assert (
        "A vs B: compared only because allow_mismatch=true: ground truths differ for 20 of 40 "
        "shared questions (another answer key)" in result.warnings
    )


# -- what a row covers --------------------------------------------------------------------


def test_runs_judged_on_different_categories_say_what_each_row_covers(tmp_path: Path) -> None:
    qs = _questions()
    j_a = [100.0 if k % 2 else 0.0 for k in range(60)]
    write_run(tmp_path / "A", qs, j=j_a)
    write_run(tmp_path / "B", qs, j=[0.0] * 60)

    def judged_1_2(k: int, row: dict) -> None:  # type: ignore[type-arg]
        if row["category"] not in (1, 2):
            row["j_mean"] = None

    _rewrite(tmp_path / "B", judged_1_2)
    _summary(tmp_path / "B", **{"judge.categories": [1, 2]})
    result = run_compare(_cfg("A", "B"), tmp_path / "out", tmp_path, plots=False)
    overall = next(r for r in result.rows if r.metric == "j" and r.group == "overall_1_4")
    in_1_2 = [k for k, q in enumerate(qs) if q["category"] in (1, 2)]
    assert overall.categories == [1, 2] and overall.n == len(in_1_2)
    assert overall.mean_a == pytest.approx(np.mean([j_a[k] for k in in_1_2]))
    markdown = (tmp_path / "out" / "compare.md").read_text()
    assert "| J | overall 1-4 (covers 1, 2 only) |" in markdown
    assert "judge.categories: [1, 2, 3, 4] vs [1, 2]" in markdown
    assert "A vs B: card fields differ: judge.categories: [1, 2, 3, 4] vs [1, 2]" in (
        result.warnings
    )
    cat1 = next(r for r in result.rows if r.metric == "j" and r.group == "1")
    assert cat1.categories == []  # a row covering its whole group says nothing more


# -- metrics asked for ---------------------------------------------------------------------


def test_a_metric_no_run_has_is_an_error_and_a_dropped_metric_gets_a_note(
    tmp_path: Path,
) -> None:
    qs = _questions()
    write_run(tmp_path / "A", qs, [0.5] * 60)
    write_run(tmp_path / "B", qs, [0.4] * 60)
    with pytest.raises(CompareError) as refused:
        run_compare(_cfg("A", "B", metrics=["j"]), tmp_path / "out", tmp_path, plots=False)
    assert str(refused.value) == "compare.metrics: no run has j (the runs carry f1_locomo)"
    write_run(tmp_path / "C", qs, [0.4] * 60, [100.0] * 60)
    result = run_compare(_cfg("A", "C"), tmp_path / "out2", tmp_path, plots=False)
    assert result.pairs[0].dropped == ["j not compared: A has no j values"]
    assert "A vs C: j not compared: A has no j values" in result.warnings
    assert "- ⚠ A vs C: j not compared: A has no j values" in (tmp_path / "out2" / "compare.md").read_text()


# -- one conversation ------------------------------------------------------------------------


def test_one_conversation_gives_no_cluster_interval_and_says_why(tmp_path: Path) -> None:
    qs = [q for q in _questions() if q["conversation_id"] == "conv-0"]
    f1_a = [0.9] * 10
    f1_b = [0.1 * (k % 3) for k in range(10)]
    write_run(tmp_path / "A", qs, f1_a)
    write_run(tmp_path / "B", qs, f1_b)
    result = run_compare(CompareConfig(runs=["A", "B"], bootstrap_samples=2000,
                                       permutation_samples=2000),
                         tmp_path / "out", tmp_path)
    row = next(r for r in result.rows if r.metric == "f1_locomo" and r.group == "overall")
    assert row.n_conversations == 1
    assert all(math.isnan(bound) for bound in row.cluster_ci)
    assert row.note == (
        "1 conversation: a conversation-cluster interval needs at least 5 (fewer give too few "
        "distinct resamples); the verdict uses the question-level paired interval and test"
    )
    d = 100 * (np.array(f1_a) - np.array(f1_b))
    assert row.diff == pytest.approx(d.mean())
    assert stats.ttest_1samp(d, 0.0).pvalue < 1e-4  # an independent check: clearly above 0
    assert row.question_ci[0] > 0 and row.verdict == "A higher"
    markdown = (tmp_path / "out" / "compare.md").read_text()
    assert "| n/a |" in markdown and "A higher (question-level)" in markdown
    assert f"- {row.note}." in markdown
    assert any(w.endswith(row.note) for w in result.warnings)


def test_one_conversation_without_a_difference_stays_not_distinguishable(tmp_path: Path) -> None:
    qs = [q for q in _questions() if q["conversation_id"] == "conv-0"]
    write_run(tmp_path / "A", qs, [0.5] * 10)
    write_run(tmp_path / "B", qs, [0.5] * 10)
    result = run_compare(_cfg("A", "B"), tmp_path / "out", tmp_path, plots=False)
    assert {r.verdict for r in result.rows} == {NOT_DISTINGUISHABLE}


# -- names ---------------------------------------------------------------------------------


def test_runs_are_named_by_their_input_file_or_by_compare_labels(tmp_path: Path) -> None:
    qs = _questions()
    for name, stem in (("13-35-16", "mem0_answers.json"), ("13-35-34", "zep_answers.json")):
        write_run(tmp_path / name, qs, [0.5] * 60)
        _summary(tmp_path / name, **{"input.path": f"/data/{stem}"})
    result = run_compare(_cfg("13-35-16", "13-35-34"), tmp_path / "out", tmp_path, plots=False)
    assert [r.name for r in result.runs] == ["mem0_answers.json", "zep_answers.json"]
    assert "## mem0_answers.json (A) vs zep_answers.json (B)" in (
        tmp_path / "out" / "compare.md"
    ).read_text()
    labelled = run_compare(_cfg("13-35-16", "13-35-34", labels=["mem0", "zep"]),
                           tmp_path / "out2", tmp_path, plots=False)
    assert [r.name for r in labelled.runs] == ["mem0", "zep"]
    _summary(tmp_path / "13-35-34", **{"input.path": "/other/mem0_answers.json"})
    same = run_compare(_cfg("13-35-16", "13-35-34"), tmp_path / "out3", tmp_path, plots=False)
    assert [r.name for r in same.runs] == [
        "mem0_answers.json (13-35-16)", "mem0_answers.json (13-35-34)"
    ]


@pytest.mark.parametrize(
    ("runs", "labels", "message"),
    [
        pytest.param(["A", "A"], None, "compare.runs names A twice (as A and A): a run compared "
                     "with itself measures nothing; give two different runs", id="same-run"),
        pytest.param(["A", "B"], ["x"], "compare.labels: give 2 distinct non-empty names, one "
                     "per run in compare.runs (got ['x'])", id="labels-count"),
        pytest.param(["A", "B"], ["x", "x"], "compare.labels: give 2 distinct non-empty names, "
                     "one per run in compare.runs (got ['x', 'x'])", id="labels-repeated"),
    ],
)
def test_a_run_given_twice_or_bad_labels_are_refused_before_loading(
    tmp_path: Path, runs: list[str], labels: list[str] | None, message: str
) -> None:
    write_run(tmp_path / "A", _questions(), [0.5] * 60)
    write_run(tmp_path / "B", _questions(), [0.5] * 60)
    with pytest.raises(CompareError) as refused:
        run_compare(_cfg(*runs, labels=labels), tmp_path / "out", tmp_path, plots=False)
    assert str(refused.value) == message


def test_the_forest_plot_has_a_legend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    seen: list[list[str]] = []
    real = Figure.savefig

    def keep(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append([t.get_text() for legend in self.legends for t in legend.get_texts()])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    write_run(tmp_path / "A", _questions(), [0.5] * 60)
    write_run(tmp_path / "B", _questions(), [0.4] * 60)
    run_compare(_cfg("A", "B"), tmp_path / "out", tmp_path)
    assert seen == [[
        "95% CI, conversations", "95% CI, questions", "A - B", "A higher", "B higher",
        "not distinguishable",
    ]]


# -- the console -----------------------------------------------------------------------------


def test_warnings_are_printed_on_the_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_compare_cli import _typed

    from locomo_exp.cli import run_compare_from_cli

    qs = _questions()
    write_run(tmp_path / "A", qs, [0.5] * 60)
    write_run(tmp_path / "B", qs[:40], [0.4] * 40)  # overlap 40/60
    cfg = _typed("mode=compare", f"compare.runs=[{tmp_path / 'A'},{tmp_path / 'B'}]",
                 "tracking=none", "compare.bootstrap_samples=100",
                 "compare.permutation_samples=100", "compare.allow_mismatch=true")
    run_compare_from_cli(cfg, tmp_path / "out", tmp_path)
    out = capsys.readouterr().out
    assert (
        "warning: A vs B: only 66.7% of questions shared (below 95%): the runs answer different "
        "question sets" in out
    )
    assert (
        "warning: A vs B: compared only because allow_mismatch=true: question_set: custom (60) "
        "vs custom (40)" in out
    )


def test_a_sign_flip_test_of_one_question_is_exact_with_p_one() -> None:
    from locomo_exp.stats.paired import sign_flip_test

    # two sign patterns, +d and -d, both as extreme as the observed: p = 2/2
    result = sign_flip_test([0.9], [0.1])
    assert (result.test, result.pvalue, result.n) == ("sign_flip_exact", 1.0, 1)


# -- sweeps -----------------------------------------------------------------------------------


def test_a_dash_in_the_vs_baseline_columns_says_why_in_the_markdown(tmp_path: Path) -> None:
    from locomo_exp import sweep
    from locomo_exp.sweep.vs_baseline import compare_with_baseline

    qs = _questions()
    runs = [
        write_run(tmp_path / "a", qs, [0.5] * 60),
        write_run(tmp_path / "b", qs, [0.5] * 60, variant="mem0"),
        write_run(tmp_path / "c", qs, [0.4] * 60),
    ]
    rows = []
    for i, (variant, run) in enumerate(zip(("locomo", "mem0", "locomo"), runs, strict=True)):
        record = sweep.JobRecord(i, [f"f1={variant}{i}"], {"f1": f"{variant}{i}"}, "x",
                                 sweep.COMPLETED if i < 2 else sweep.FAILED, str(run),
                                 f1_variant=variant)
        rows.append(sweep.summary_row(record, json.loads((run / "summary.json").read_text())))
    base = compare_with_baseline(rows, None, tmp_path, bootstrap_samples=50,
                                 permutation_samples=50)
    context = sweep.SweepContext(name="s", sweep_dir=str(tmp_path), swept_keys=["f1"],
                                 swept_overrides=["f1=a,b,c"])
    summary = sweep.build_sweep_summary(context, rows)
    summary["baseline"] = base
    markdown = sweep.render_sweep_summary(summary)
    # trial 4, finding 16: never an invitation to compare.allow_mismatch=true for this
    assert (
        "- job 1: — vs baseline: the comparison was refused: the jobs score different F1 "
        "variants (mem0 vs locomo): a difference between two F1 variants says nothing about "
        "the answers" in markdown
    )
    assert "allow_mismatch" not in markdown
    assert "- job 2: — vs baseline: the job did not complete (FAILED)" in markdown


@pytest.mark.slow
def test_a_sweep_baseline_that_is_not_swept_is_refused_before_any_job(tmp_path: Path) -> None:
    proc = run_cli("-m", "f1=locomo,squad", "sweep.baseline=mem0", "tracking=none", "hydra.sweep.dir=sw",
                   cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "sweep.baseline=mem0: no job has this value (jobs: f1=locomo; f1=squad)" in proc.stderr
    assert not (tmp_path / "sw" / "0").exists()


def test_runs_whose_input_had_no_conversation_ids_are_compared_question_level(tmp_path: Path) -> None:
    # found by the registries helper: a null conversation_id in scores.jsonl used to refuse
    # the run ("field 'conversation_id' missing"), so such runs could never be compared
    qs = _questions()[:10]
    f1_a = [0.9] * 10
    f1_b = [0.1 * (k % 3) for k in range(10)]
    for name, f1 in (("A", f1_a), ("B", f1_b)):
        scores = write_run(tmp_path / name, qs, f1) / "scores.jsonl"
        rows = [json.loads(line) for line in scores.read_text().splitlines()]
        for k, row in enumerate(rows):
            row.update(conversation_id=None, question_id=f"q{k}")
        scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_compare(CompareConfig(runs=["A", "B"], bootstrap_samples=2000,
                                       permutation_samples=2000),
                         tmp_path / "out", tmp_path)
    row = next(r for r in result.rows if r.metric == "f1_locomo" and r.group == "overall")
    assert row.n == 10 and row.n_conversations == 1
    assert all(math.isnan(bound) for bound in row.cluster_ci)
    d = 100 * (np.array(f1_a) - np.array(f1_b))
    assert row.diff == pytest.approx(d.mean())
    assert row.verdict == "A higher"


# -- runs whose own judge checks flagged their J (trial 5 #7) -----------------------------

INFLATED = "J inflated (the judge accepted 7/7 known-wrong controls: false-accept 100.0%)"
DEFLATED = "J deflated (the judge rejected 50/50 known-right gold_as_answer controls)"


def test_a_j_verdict_between_flagged_runs_carries_their_warnings(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from locomo_exp.compare.job import headline_table

    qs = _questions()
    write_run(tmp_path / "A", qs, [0.5] * 60, j=[80.0] * 60)
    write_run(tmp_path / "B", qs, j=[0.0 if k % 3 else 100.0 for k in range(60)])
    write_run(tmp_path / "C", qs, j=[80.0] * 60)
    _summary(tmp_path / "A", **{"judge.trust": {"warnings": [INFLATED]},
                                "status": {"judge": "warning: " + INFLATED}})
    _summary(tmp_path / "B", **{"judge.trust": {"warnings": [DEFLATED]}})

    result = run_compare(_cfg("A", "B"), tmp_path / "out", tmp_path, plots=False)
    j_row = next(r for r in result.rows if r.metric == "j" and r.group == "overall_1_4")
    assert j_row.marks == ["A's J flagged by its judge checks: J inflated",
                           "B's J flagged by its judge checks: J deflated"]
    assert any(line.endswith(f": {INFLATED}") and line.startswith("A: ")
               for line in result.warnings)
    assert any(line.endswith(f": {DEFLATED}") and line.startswith("B: ")
               for line in result.warnings)
    console = [line for line in headline_table(result).splitlines() if line.startswith("J ")]
    assert console and all(line.endswith(
        "⚠ A's J flagged by its judge checks: J inflated; B's J flagged by its judge checks: "
        "J deflated") for line in console)
    markdown = (tmp_path / "out" / "compare.md").read_text()
    assert "| ⚠ WARNING: J inflated |" in markdown and "| ⚠ WARNING: J deflated |" in markdown
    saved = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert [r["warnings"] for r in saved["runs"]] == [[INFLATED], [DEFLATED]]

    clean = run_compare(_cfg("C", "B"), tmp_path / "out2", tmp_path, plots=False)
    row = next(r for r in clean.rows if r.metric == "j" and r.group == "overall_1_4")
    assert row.marks == ["B's J flagged by its judge checks: J deflated"]
    (c_line,) = [line for line in (tmp_path / "out2" / "compare.md").read_text().splitlines()
                 if line.startswith("| C |")]
    assert "| no warning |" in c_line


def test_card_fields_of_a_metric_one_run_did_not_compute_are_not_differences() -> None:
    from locomo_exp.report.card import card_differences

    judged = {"f1": None, "bleu1": None, "question_set": "1,540",
              "judge": {"model": "gpt-4o-mini", "temperature": 0.0}}
    both = {"f1": {"variant": "locomo", "version": "v2"}, "bleu1": {"version": "b1"},
            "question_set": "1,540", "judge": {"model": "claude-sonnet-4-6", "temperature": 0.0}}
    assert card_differences(both, judged) == ["judge.model: claude-sonnet-4-6 vs gpt-4o-mini"]
    f1_only = {**both, "judge": None}
    assert card_differences(f1_only, judged) == []
