"""Below MIN_RUN_CLUSTERS conversations a comparison's headline interval is question-level.

Two conversations give a cluster bootstrap only three distinct resample means, so its 95%
interval is the span between the two conversations' mean differences: falsely narrow. The
compare and sweep paths use the run path's threshold (one constant) and say so.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from test_compare import _questions, write_run
from test_compare_same_interval import _sweep_rows

from locomo_exp.compare import CompareConfig, run_compare
from locomo_exp.compare.engine import INTERVAL_METHODS, QUESTION, few_clusters_note
from locomo_exp.compare.job import headline_table
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS
from locomo_exp.sweep.vs_baseline import compare_with_baseline, vs_baseline_cells


def _two_conversation_runs(tmp_path: Path, n_conv: int = 2) -> tuple[Path, Path]:
    qs = _questions(n_conv=n_conv)
    # A - B per question: 0.9 or 0.1 alternating in every conversation, so the conversations'
    # mean differences are equal (50 points) and the cluster bootstrap sees no spread at all
    f1_a = [0.9 if k % 2 else 0.1 for k in range(len(qs))]
    f1_b = [0.0] * len(qs)
    write_run(tmp_path / "A", qs, f1_a)
    write_run(tmp_path / "B", qs, f1_b)
    return tmp_path / "A", tmp_path / "B"


def test_the_threshold_is_the_run_paths() -> None:
    from locomo_exp.compare import engine
    from locomo_exp.scoring import summary

    assert engine.MIN_RUN_CLUSTERS is summary.MIN_RUN_CLUSTERS is MIN_RUN_CLUSTERS == 5


def test_two_conversations_give_the_question_level_interval_and_say_so(tmp_path: Path) -> None:
    a, b = _two_conversation_runs(tmp_path)
    result = run_compare(
        CompareConfig(runs=[str(a), str(b)], bootstrap_samples=2000, permutation_samples=2000),
        tmp_path / "out",
        tmp_path,
        plots=False,
    )
    row = next(r for r in result.rows if r.metric == "f1_locomo" and r.group == "overall")
    assert (row.n, row.n_conversations, row.diff) == (20, 2, pytest.approx(50.0))
    # the cluster interval it replaces, worked by hand: both conversations' mean difference
    # is 50, so each of the 2**2 equally likely resamples has mean 50 -> [50, 50], width 0
    assert all(math.isnan(v) for v in row.cluster_ci) and row.mde_cluster is None
    assert row.interval == QUESTION and row.headline_ci == row.question_ci
    d = np.array([90.0 if k % 2 else 10.0 for k in range(20)])
    se = d.std(ddof=0) / math.sqrt(d.size)  # 40 / sqrt(20) = 8.94 points
    low, high = row.question_ci
    assert low == pytest.approx(50 - 1.96 * se, abs=2.0) and high == pytest.approx(
        50 + 1.96 * se, abs=2.0
    )  # percentile bootstrap ~ normal interval at n=20 (independent check)
    assert row.note == few_clusters_note(2) == (
        "2 conversations: a conversation-cluster interval needs at least 5 (fewer give too few "
        "distinct resamples); the verdict uses the question-level paired interval and test"
    )
    # compare.json: a labelled method per row
    saved = json.loads((tmp_path / "out" / "compare.json").read_text())
    (json_row,) = [
        r for r in saved["rows"] if r["metric"] == "f1_locomo" and r["group"] == "overall"
    ]
    assert (json_row["interval"], json_row["interval_method"]) == (
        "question",
        "question-level paired bootstrap",
    )
    # compare.md: the note once under the table, once in Warnings; verdict marked
    markdown = (tmp_path / "out" / "compare.md").read_text()
    assert markdown.count(f"- {row.note}.") == 1
    assert f"- ⚠ A vs B: every row: {row.note}" in markdown
    assert "(question-level)" in markdown
    # console: the row's interval is the question-level one, marked q, and one line says why
    lines = headline_table(result).splitlines()
    f1_line = next(x for x in lines if x.startswith("F1") and "overall 1-4" in x)
    assert f"[{low:+.2f}, {high:+.2f}] q" in f1_line
    assert lines.count(
        "q: question-level paired interval (fewer than 5 conversations: a conversation-cluster "
        "interval would be falsely narrow)"
    ) == 1


@pytest.mark.parametrize(("n_conv", "method"), [(4, "question"), (5, "conversation")])
def test_the_threshold_boundary(tmp_path: Path, n_conv: int, method: str) -> None:
    a, b = _two_conversation_runs(tmp_path, n_conv)
    result = run_compare(
        CompareConfig(runs=[str(a), str(b)], bootstrap_samples=200, permutation_samples=200),
        tmp_path / "out",
        tmp_path,
        plots=False,
    )
    row = next(r for r in result.rows if r.metric == "f1_locomo" and r.group == "overall")
    assert row.n_conversations == n_conv and row.interval == method
    assert row.to_dict()["interval_method"] == INTERVAL_METHODS[method]
    assert all(math.isnan(v) for v in row.cluster_ci) == (method == "question")
    assert bool(row.note) == (method == "question")
    console = headline_table(result)
    assert ("q: question-level" in console) == (method == "question")


def test_sweep_vs_baseline_cell_uses_and_labels_the_question_level_interval(
    tmp_path: Path,
) -> None:
    job, base = _two_conversation_runs(tmp_path)
    rows = _sweep_rows(job, base)
    compare_with_baseline(rows, None, tmp_path / "sweep", bootstrap_samples=200)
    cell = rows[1]["vs_baseline"]["f1"]
    alone = run_compare(
        CompareConfig(runs=[str(job), str(base)], bootstrap_samples=200),
        tmp_path / "cmp",
        tmp_path,
        plots=False,
    )
    (row,) = [r for r in alone.rows if r.metric == "f1_locomo" and r.group == "overall"]
    assert cell["ci"] == row.question_ci  # the same interval as mode=compare's headline
    assert cell["interval_method"] == "question-level paired bootstrap"
    assert cell["note"] == few_clusters_note(2)
    low, high = row.question_ci
    assert vs_baseline_cells(rows[1], "f1") == [
        "+50.00",
        f"[{low:+.2f}, {high:+.2f}] (questions)",
        row.verdict.replace("A higher", "higher"),
    ]


@pytest.mark.slow  # an MLflow store and two logged runs: ~15 s on a loaded 2-CPU machine
def test_mlflow_logs_no_unmeasured_bound_and_says_why(tmp_path: Path) -> None:
    import mlflow

    from locomo_exp.compare.job import run_compare_job

    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = mlflow.MlflowClient(tracking_uri=store)
    logged = {}
    for n_conv in (2, 5):
        a, b = _two_conversation_runs(tmp_path / str(n_conv), n_conv)
        job = run_compare_job(
            CompareConfig(runs=[str(a), str(b)], bootstrap_samples=200, permutation_samples=200),
            tmp_path / f"out{n_conv}", tmp_path, tracking_uri=store,
        )
        logged[n_conv] = (job.result, client.get_run(job.run_id).data)

    result, few = logged[2]
    groups = [(r.metric, r.group) for r in result.rows]
    assert len(groups) == 6  # f1_locomo: categories 1-4, overall_1_4, overall
    assert all(math.isfinite(v) for v in few.metrics.values())
    assert not [name for name in few.metrics if name.endswith(("/ci_low", "/ci_high"))]
    assert {name.rsplit("/", 1)[1] for name in few.metrics} == {"diff", "p_holm"}
    assert few.params == {
        f"compare/A_vs_B/{metric}/{group}/ci": "not measured: 2 conversations < 5"
        for metric, group in groups
    }
    assert few.tags["mlflow.note.content"] == (
        "ci_low/ci_high not logged for 6 of 6 rows (f1_locomo 1, f1_locomo 2, f1_locomo 3, "
        "f1_locomo 4, f1_locomo overall_1_4, f1_locomo overall): not measured: 2 conversations "
        "< 5; a conversation-cluster interval needs at least 5, so these rows' verdicts use "
        "the question-level paired interval (compare.md, compare.json)."
    )

    result, enough = logged[5]
    row = next(r for r in result.rows if r.metric == "f1_locomo" and r.group == "overall")
    prefix = "compare/A_vs_B/f1_locomo/overall"
    assert (enough.metrics[f"{prefix}/ci_low"], enough.metrics[f"{prefix}/ci_high"]) == (
        pytest.approx(row.cluster_ci[0]), pytest.approx(row.cluster_ci[1])
    )
    assert enough.params == {} and "mlflow.note.content" not in enough.tags
