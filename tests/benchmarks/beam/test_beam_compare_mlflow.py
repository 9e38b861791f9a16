"""mode=compare of two BEAM runs logs an MLflow run and tags the changed questions (issue 29
"MLflow run for its compare", issue 30 §2); ``tracking=none`` writes no MLflow.

BEAM's question score is partial (no pass/fail verdict): its flips are the questions whose
headline score (beam-nugget) differs between the runs, counted here by hand.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from beam_helpers import config, mem0_file, mem0_row
from mlflow import MlflowClient
from test_beam_compare import ABILITIES, ITEMS_A, ITEMS_B, chat_of

from locomo_exp.benchmarks.beam import PLUGIN
from locomo_exp.cli.jobs import run_compare_from_cli
from locomo_exp.config import TrackingConfig

# beam-nugget score per question (mean of the item verdicts, 4 decimals), B against A:
# abstention        A .6667 .8333 .3333 1     .3333 .3333 .8333 .6667
#                   B .3333 .1667 0     .6667 .1667 .3333 .5    .3333  -> 7 lost, 1 same
# knowledge_update  A 1     0     .6667 .6667 .3333 1     .1667 1
#                   B 1     .3333 .8333 .3333 .3333 .8333 .3333 .6667  -> 3 gained, 3 lost
GAINED, LOST = 3, 10
GAINED_IDS = {"100K_0_q3_knowledge_update", "100K_1_q2_knowledge_update",
              "100K_3_q2_knowledge_update"}


def logged_runs(tmp_path: Path) -> list[Path]:
    """Runs A and B, each logged to the tmp store with its question traces."""
    dirs = []
    for name, items in (("A", ITEMS_A), ("B", ITEMS_B)):
        rows = [mem0_row(chat_of(k), 2 * n + k % 2, ability, scores)
                for n, ability in enumerate(ABILITIES) for k, scores in enumerate(items[ability])]
        cfg = dataclasses.replace(config(mem0_file(tmp_path / f"{name}.json", rows)),
                                  tracking=TrackingConfig(questions=True))
        assert PLUGIN.run(cfg, tmp_path / f"run{name}", tmp_path).exit_status == 0
        dirs.append(tmp_path / f"run{name}")
    return dirs


def test_compare_logs_a_run_with_the_differences_and_tags_the_flips(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = logged_runs(tmp_path)
    cfg = typed_config("mode=compare", f"compare.runs=[{a},{b}]",
                       "compare.bootstrap_samples=200", "compare.permutation_samples=200")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    assert f"Flipped verdicts runB vs runA: {GAINED} gained, {LOST} lost" in out
    body = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    client = MlflowClient(os.environ["MLFLOW_TRACKING_URI"])
    experiment = client.get_experiment_by_name("locomo_exp")
    [run] = client.search_runs([experiment.experiment_id],
                               filter_string="tags.`locomo_exp.kind` = 'compare'")
    assert run.data.params["compare.run.0"] == str(a)
    assert run.data.params["compare.run.1"] == str(b)
    assert run.data.params["benchmark"] == "beam"
    prefix = "compare/runA_vs_runB"
    metrics = run.data.metrics
    overall = body["profiles"]["beam-nugget"]["overall"]
    assert metrics[f"{prefix}/beam-nugget/overall/diff"] == pytest.approx(
        100 * overall["difference"])  # points
    assert metrics[f"{prefix}/beam-nugget/overall/ci_low"] == pytest.approx(100 * overall["ci"][0])
    assert metrics[f"{prefix}/beam-nugget/overall/ci_high"] == pytest.approx(
        100 * overall["ci"][1])
    assert metrics[f"{prefix}/beam-nugget/overall/p"] == pytest.approx(overall["pvalue"])
    ab = body["profiles"]["beam-official"]["abstention"]
    assert metrics[f"{prefix}/beam-official/abstention/p_holm"] == pytest.approx(
        ab["pvalue_holm"])
    assert (metrics[f"{prefix}/flips/gained"], metrics[f"{prefix}/flips/lost"]) == (GAINED, LOST)
    artifacts = {f.path for f in client.list_artifacts(run.info.run_id)}
    assert {"compare.json", "compare.md", "questions.html"} <= artifacts
    # the flips, tagged in each compared run's traces in that run's own view
    for path, seen in ((b, {"gained": GAINED, "lost": LOST}),
                       (a, {"gained": LOST, "lost": GAINED})):
        [logged] = client.search_runs(
            [experiment.experiment_id],
            filter_string=f"tags.`locomo_exp.output_dir` = '{path.resolve()}'")
        flipped = client.search_traces(locations=[experiment.experiment_id],
                                       run_id=logged.info.run_id,
                                       filter_string="tag.flipped = 'true'")
        directions = [t.info.tags["flip"] for t in flipped]
        assert {d: directions.count(d) for d in ("gained", "lost")} == seen
        if path == b:
            assert {t.info.tags["question_id"] for t in flipped
                    if t.info.tags["flip"] == "gained"} == GAINED_IDS
    assert "/evaluations?compareToRunUuid=" in out and "filter=TAG::=::true::flipped" in out
    page = (tmp_path / "cmp" / "questions.html").read_text(encoding="utf-8")
    assert page.count('"gained"') == GAINED and page.count('"lost"') == LOST


def test_tracking_none_writes_no_mlflow_but_still_counts_the_flips(
    typed_config: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = []
    for name, items in (("A", ITEMS_A), ("B", ITEMS_B)):
        rows = [mem0_row(chat_of(k), 2 * n + k % 2, ability, scores)
                for n, ability in enumerate(ABILITIES) for k, scores in enumerate(items[ability])]
        PLUGIN.run(config(mem0_file(tmp_path / f"{name}.json", rows)), tmp_path / name, tmp_path)
        dirs.append(tmp_path / name)
    cfg = typed_config("mode=compare", f"compare.runs=[{dirs[0]},{dirs[1]}]", "tracking=none",
                       "compare.bootstrap_samples=100")
    run_compare_from_cli(cfg, tmp_path / "cmp", tmp_path)
    out = capsys.readouterr().out
    assert f"Flipped verdicts B vs A: {GAINED} gained, {LOST} lost" in out
    assert "MLflow" not in out and (tmp_path / "cmp" / "questions.html").is_file()
    assert not (tmp_path / "mlflow.db").exists() and not (tmp_path / "mlruns").exists()


def test_a_named_store_gets_the_flips_and_the_working_directory_no_mlflow_db(
    typed_config: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tracking.uri`` names the store, no ``$MLFLOW_TRACKING_URI``: the flips are tagged
    there, and MLflow's default store (``./mlflow.db``) is never created (a new user's
    report: the tags went to the default store, created in the working directory)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    store = f"sqlite:///{tmp_path / 'named' / 'store.db'}"
    (tmp_path / "named").mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    dirs = []
    for name, items in (("A", ITEMS_A), ("B", ITEMS_B)):
        rows = [mem0_row(chat_of(k), 2 * n + k % 2, ability, scores)
                for n, ability in enumerate(ABILITIES) for k, scores in enumerate(items[ability])]
        cfg = dataclasses.replace(config(mem0_file(tmp_path / f"{name}.json", rows)),
                                  tracking=TrackingConfig(uri=store, questions=True))
        assert PLUGIN.run(cfg, tmp_path / f"run{name}", tmp_path).exit_status == 0
        dirs.append(tmp_path / f"run{name}")
    # the command a user types, in a new process (MLflow's own URI unset)
    done = subprocess.run(
        [sys.executable, "-m", "locomo_exp", "mode=compare", f"compare.runs=[{dirs[0]},{dirs[1]}]",
         f"tracking.uri={store}", "compare.bootstrap_samples=100",
         "compare.permutation_samples=100", f"hydra.run.dir={tmp_path / 'cmp'}"],
        cwd=cwd, capture_output=True, text=True, check=False,
        env={k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"})
    assert done.returncode == 0, done.stderr
    assert "not tagged" not in done.stdout + done.stderr
    assert sorted(p.name for p in cwd.iterdir()) == []  # no mlflow.db, no mlruns
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("locomo_exp")
    [logged] = client.search_runs(
        [experiment.experiment_id],
        filter_string=f"tags.`locomo_exp.output_dir` = '{dirs[1].resolve()}'")
    flipped = client.search_traces(locations=[experiment.experiment_id],
                                   run_id=logged.info.run_id, filter_string="tag.flipped = 'true'")
    assert len(flipped) == GAINED + LOST
