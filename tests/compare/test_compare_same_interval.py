"""One comparison, one interval; every compare warning on the console and in compare.md.

A sweep's baseline comparison and ``mode=compare`` of the same two run directories use the
one engine with the same settings, so they give the identical interval (trial report item 9:
the row's random stream used to depend on the metric's position in the compared list).
The warning list compare.md renders is the one the console prints (item 4).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from test_compare import _questions, write_run
from test_compare_cli import _typed

from locomo_exp import sweep
from locomo_exp.cli import run_compare_from_cli
from locomo_exp.compare import CompareConfig, run_compare
from locomo_exp.sweep.vs_baseline import compare_with_baseline

METHOD = (
    "95% percentile intervals, paired bootstrap resampling conversations (clusters) and "
    "questions: 2000 resamples, seed 0 (each row's stream from the seed, metric and group); a "
    "row's headline interval is the conversation one when it has at least 5 conversations, "
    "else the question-level one"
)


def _invented_pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two invented runs on 60 questions (6 conversations): F1 and J differ by noise."""
    questions = _questions()
    rng = np.random.default_rng(11)
    f1_base = rng.uniform(0.0, 1.0, 60)
    f1_job = np.clip(f1_base + rng.normal(0.02, 0.25, 60), 0.0, 1.0)
    j_base = 100.0 * (rng.uniform(size=60) < 0.6)
    j_job = 100.0 * (rng.uniform(size=60) < 0.65)
    base = write_run(tmp_path / "base", questions, list(f1_base), list(j_base))
    job = write_run(tmp_path / "job", questions, list(f1_job), list(j_job))
    return job, base


def _sweep_rows(job: Path, base: Path) -> list[dict]:  # type: ignore[type-arg]
    rows = []
    for k, run in enumerate((base, job)):
        record = sweep.JobRecord(
            job=k,
            overrides=[f"data.path={run.name}"],
            swept={"data.path": run.name},
            run_name=run.name,
            status=sweep.COMPLETED,
            output_dir=str(run),
            f1_variant="locomo",
        )
        rows.append(sweep.summary_row(record, json.loads((run / "summary.json").read_text())))
    return rows


def test_sweep_baseline_and_mode_compare_give_the_identical_interval(tmp_path: Path) -> None:
    job, base = _invented_pair(tmp_path)
    rows = _sweep_rows(job, base)
    baseline = compare_with_baseline(rows, None, tmp_path / "sweep")
    assert baseline == {"job": 0, "label": "data.path=base", "method": METHOD}
    cells = rows[1]["vs_baseline"]

    # mode=compare of every metric (the sweep compares only f1_locomo, j and stored_j)
    result = run_compare(CompareConfig(runs=[str(job), str(base)]), tmp_path / "cmp", tmp_path)
    for column, metric in (("f1", "f1_locomo"), ("j", "j")):
        (row,) = [r for r in result.rows if r.metric == metric and r.group == "overall"]
        assert cells[column]["ci"] == row.cluster_ci  # exactly, not approximately
        assert (cells[column]["diff"], cells[column]["p_holm"]) == (row.diff, row.p_holm)
    # and a comparison of J alone gives the same J rows as the comparison of everything
    alone = run_compare(
        CompareConfig(runs=[str(job), str(base)], metrics=["j"]), tmp_path / "j", tmp_path
    )
    everything = [r for r in result.rows if r.metric == "j"]
    assert [(r.cluster_ci, r.question_ci, r.p) for r in alone.rows] == [
        (r.cluster_ci, r.question_ci, r.p) for r in everything
    ]

    # both outputs say how, in one line
    assert f"Method: {METHOD}" in (tmp_path / "cmp" / "compare.md").read_text()
    context = sweep.SweepContext(
        name="s", sweep_dir=str(tmp_path / "sweep"), swept_keys=["data.path"],
        swept_overrides=["data.path=base,job"],
    )
    summary = sweep.build_sweep_summary(context, rows)
    summary["baseline"] = baseline
    text = sweep.render_sweep_summary(summary)
    assert f"- method (as `mode=compare` of the two runs): {METHOD}" in text


def test_swapping_a_and_b_mirrors_the_conversation_interval(tmp_path: Path) -> None:
    job, base = _invented_pair(tmp_path)
    ab = run_compare(CompareConfig(runs=[str(job), str(base)], metrics=["j"]), tmp_path / "1", tmp_path)
    ba = run_compare(CompareConfig(runs=[str(base), str(job)], metrics=["j"]), tmp_path / "2", tmp_path)
    for x, y in zip(ab.rows, ba.rows, strict=True):
        assert x.group == y.group
        assert x.cluster_ci == [-y.cluster_ci[1], -y.cluster_ci[0]]


def _with_stored_j(run: Path, field: str, values: list[float]) -> None:
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    for row, value in zip(rows, values, strict=True):
        row["stored_judge_score"] = value
    (run / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = json.loads((run / "summary.json").read_text())
    summary["input"]["judge_field"] = field
    (run / "summary.json").write_text(json.dumps(summary))


def test_every_compare_warning_is_printed_and_rendered_from_one_list(tmp_path, capsys):
    questions = _questions()
    a = write_run(tmp_path / "A", questions, [0.5] * 60)
    b = write_run(tmp_path / "B", questions[:54], [0.4] * 54)
    _with_stored_j(a, "grade", [100.0 if k % 3 else 0.0 for k in range(60)])
    _with_stored_j(b, "llm_score", [100.0 if k % 2 else 0.0 for k in range(54)])
    cfg = _typed(
        "mode=compare", f"compare.runs=[{a},{b}]", "tracking=none", "compare.allow_mismatch=true",
        "compare.bootstrap_samples=100", "compare.permutation_samples=100",
    )
    run_compare_from_cli(cfg, tmp_path / "out", tmp_path)
    printed = [
        line.removeprefix("warning: ")
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("warning: ")
    ]
    assert printed == [
        "stored J read from different fields (grade vs llm_score): the judges' prompts/models "
        "may differ; not verified. A stored-J difference may mix the systems with their judges: "
        "re-judge both with one judge (scorer=judge) for a like-for-like J",
        "A vs B: only 90.0% of questions shared (below 95%): the runs answer different question "
        "sets",
        "A vs B: compared only because allow_mismatch=true: question_set: custom (60) vs custom "
        "(54)",
        "A vs B: card fields differ: question_set: custom (60) vs custom (54)",
    ]
    md = (tmp_path / "out" / "compare.md").read_text()
    section = md.split("## Warnings\n\n")[1].split("\n\n")[0]
    assert section.splitlines() == [f"- ⚠ {line}" for line in printed]
    assert "different judges" not in md
