"""mode=compare from the command line: console table, refusal line, MLflow comparison run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import CONF_DIR, EXAMPLE, run_cli
from hydra import compose, initialize_config_dir
from test_compare import _questions, write_run

from locomo_exp.cli import run_compare_from_cli
from locomo_exp.compare import CompareConfig
from locomo_exp.compare.job import headline_table, run_compare_job
from locomo_exp.compare.render import SAME_AS_1_4
from locomo_exp.config import ExperimentConfig, Mode, register_configs, to_experiment_config
from locomo_exp.experiment import run_experiment


def _typed(*overrides: str) -> ExperimentConfig:
    register_configs()
    with initialize_config_dir(
        version_base="1.3", config_dir=str(CONF_DIR)
    ):
        return to_experiment_config(compose(config_name="config", overrides=list(overrides)))


def _two_runs(tmp_path: Path) -> tuple[Path, Path]:
    questions = _questions()
    f1_a = [1.0 if k % 3 else 0.0 for k in range(60)]
    f1_b = [0.0] * 60
    return (write_run(tmp_path / "A", questions, f1_a), write_run(tmp_path / "B", questions, f1_b))


def test_both_overall_rows_are_shown_when_category_5_is_compared(tmp_path):
    questions = _questions()
    for question in questions[::10]:  # one category-5 question per conversation
        question["category"] = 5
    f1_a = [1.0 if k % 3 else 0.0 for k in range(60)]
    a = write_run(tmp_path / "A", questions, f1_a)
    b = write_run(tmp_path / "B", questions, [0.0] * 60)
    job = run_compare_job(
        CompareConfig(runs=[str(a), str(b)], bootstrap_samples=100), tmp_path / "o", tmp_path,
        tracking_uri=None,
    )
    lines = headline_table(job.result).splitlines()
    assert [x[22:36].strip() for x in lines[3:]] == ["overall 1-4", "overall"]
    assert SAME_AS_1_4 not in lines
    markdown = (tmp_path / "o" / "compare.md").read_text()
    assert "| overall 1-4 |" in markdown and "| overall |" in markdown
    assert SAME_AS_1_4 not in markdown


def test_compare_md_shows_overall_once_without_category_5(tmp_path):
    a, b = _two_runs(tmp_path)
    run_compare_job(
        CompareConfig(runs=[str(a), str(b)], bootstrap_samples=100), tmp_path / "o", tmp_path,
        tracking_uri=None,
    )
    markdown = (tmp_path / "o" / "compare.md").read_text()
    assert "| overall 1-4 |" in markdown and "| overall |" not in markdown
    assert markdown.count(f"- {SAME_AS_1_4}.") == 1
    saved = json.loads((tmp_path / "o" / "compare.json").read_text())
    assert {r["group"] for r in saved["rows"]} >= {"overall_1_4", "overall"}


def test_compare_node_is_typed_and_mode_defaults_to_run():
    default = _typed()
    assert default.mode == Mode.run
    assert default.compare == CompareConfig()
    cfg = _typed("mode=compare", "compare.runs=[a,b]", "compare.allow_mismatch=true")
    assert (cfg.mode, cfg.compare.runs, cfg.compare.allow_mismatch) == (
        Mode.compare,
        ["a", "b"],
        True,
    )


def test_cli_compare_prints_headline_rows_and_writes_outputs(tmp_path, capsys):
    a, b = _two_runs(tmp_path)
    cfg = _typed(
        "mode=compare", f"compare.runs=[{a},{b}]", "tracking=none", "compare.bootstrap_samples=200"
    )
    run_compare_from_cli(cfg, tmp_path / "out", tmp_path)
    out = capsys.readouterr().out
    assert "A (A) vs B (B): 60 shared questions" in out
    line = next(x for x in out.splitlines() if x.startswith("F1 (LoCoMo scorer)") and "overall 1-4" in x)
    assert line.split()[5:9] == ["60", "66.67", "0.00", "+66.67"]
    assert line.endswith("A higher")
    assert f"Comparison: {tmp_path / 'out' / 'compare.md'}" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "compare.json",
        "compare.md",
        "compare_forest.png",
        "questions.html",
    ]


def test_cli_compare_refusal_is_one_line_and_exit_1(tmp_path, capsys):
    questions = _questions()
    a = write_run(tmp_path / "A", questions, [1.0] * 60, variant="locomo")
    b = write_run(tmp_path / "B", questions, [0.0] * 60, variant="mem0")
    cfg = _typed("mode=compare", f"compare.runs=[{a},{b}]", "tracking=none")
    with pytest.raises(SystemExit) as stop:
        run_compare_from_cli(cfg, tmp_path / "out", tmp_path)
    assert stop.value.code == 1
    assert capsys.readouterr().err == (
        "error: runs A and B are not comparable (f1.variant: locomo vs mem0); "
        "set compare.allow_mismatch=true to compare anyway (rows are marked)\n"
    )


def test_comparison_is_an_mlflow_run_with_links_metrics_and_compare_md(tmp_path):
    import mlflow

    a, b = _two_runs(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    job = run_compare_job(
        CompareConfig(runs=[str(a), str(b)], bootstrap_samples=200),
        tmp_path / "out",
        tmp_path,
        tracking_uri=uri,
        experiment="cmp",
    )
    run = mlflow.MlflowClient(uri).get_run(job.run_id)
    assert run.data.tags["compare.run.0"] == str(a)
    assert run.data.tags["compare.run.1"] == str(b)
    assert run.data.tags["locomo_exp.kind"] == "compare"
    assert run.info.run_name == "compare A vs B"
    assert run.data.metrics["compare/A_vs_B/f1_locomo/overall_1_4/diff"] == pytest.approx(200 / 3)
    artifacts = {f.path for f in mlflow.MlflowClient(uri).list_artifacts(job.run_id)}
    assert {"compare.md", "compare.json", "compare_forest.png"} <= artifacts


def test_compare_accepts_mlflow_run_ids_of_logged_runs(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    ids = []
    for name, variant in (("r1", "locomo"), ("r2", "locomo")):
        cfg = _typed(
            "data=example", f"f1={variant}", f"tracking.uri={uri}", "tracking.experiment=e"
        )
        ids.append(run_experiment(cfg, tmp_path / name, tmp_path).run_id)
    job = run_compare_job(
        CompareConfig(runs=ids, bootstrap_samples=100, permutation_samples=100),
        tmp_path / "out",
        tmp_path,
        tracking_uri=uri,
        experiment="cmp",
    )
    assert [r.path for r in job.result.runs] == [tmp_path / "out" / "runs" / i for i in ids]
    assert job.result.pairs[0].counts["shared"] == 20
    assert all(r.diff == 0 for r in job.result.rows)
    import mlflow

    tags = mlflow.MlflowClient(uri).get_run(job.run_id).data.tags
    assert (tags["compare.mlflow_run.0"], tags["compare.mlflow_run.1"]) == tuple(ids)


def test_unknown_run_id_is_one_line(tmp_path):
    from locomo_exp.compare import CompareError

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pytest.raises(
        CompareError, match=r"^MLflow run 0{32} in sqlite:///.*: cannot fetch scores.jsonl"
    ):
        run_compare_job(
            CompareConfig(runs=["0" * 32, "1" * 32]), tmp_path / "out", tmp_path, tracking_uri=uri
        )


def test_headline_table_lists_overall_rows_only(tmp_path):
    a, b = _two_runs(tmp_path)
    job = run_compare_job(
        CompareConfig(runs=[str(a), str(b)], bootstrap_samples=100),
        tmp_path / "o",
        tmp_path,
        tracking_uri=None,
    )
    lines = headline_table(job.result).splitlines()
    assert lines[0] == "A (A) vs B (B): 60 shared questions"
    assert lines[1].split() == [
        "metric",
        "group",
        "n",
        "A",
        "B",
        "A-B",
        "95%",
        "CI",
        "(conv.)",
        "p",
        "Holm",
        "verdict",
    ]
    # no category-5 question: "overall" is "overall 1-4" again, shown once and said so
    assert [x[22:36].strip() for x in lines[3:-1]] == ["overall 1-4"]
    assert lines[-1] == SAME_AS_1_4
    assert all(x.endswith("A higher") for x in lines[3:-1])
    assert [r.group for r in job.result.rows if r.group.startswith("overall")] == [
        "overall_1_4", "overall"]  # compare.json keeps both


@pytest.mark.slow
def test_compare_end_to_end_on_two_example_runs(tmp_path):
    """python -m locomo_exp twice (example, example with two answers changed), then mode=compare."""
    records = json.loads(EXAMPLE.read_text())
    records[0]["predicted_answer"] = records[0]["ground_truth"]
    records[5]["predicted_answer"] = "no idea"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(records))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, f"tracking.uri={uri}", cwd=tmp_path)

    assert cli("data=example", "hydra.run.dir=runA").returncode == 0
    assert cli(f"data.path={changed}", "hydra.run.dir=runB").returncode == 0
    done = cli("mode=compare", "compare.runs=[runA,runB]", "hydra.run.dir=cmp")
    assert done.returncode == 0, done.stderr
    # runs are named by their input files (issue 18 §2)
    assert "qa_results.json (A) vs changed.json (B): 20 shared questions" in done.stdout
    # one conversation: said once for the pair, not once per metric and group
    assert done.stdout.count("a conversation-cluster interval needs at least 5") == 1
    assert done.stdout.count("q: question-level paired interval") == 1  # the console's one line
    assert "every row: 1 conversation" in done.stdout
    assert "warning: qa_results.json vs changed.json: " in done.stdout  # one conversation
    assert "F1 (LoCoMo scorer)    overall" in done.stdout and "MLflow: run " in done.stdout
    assert (
        json.loads((tmp_path / "cmp" / "compare.json").read_text())["pairs"][0]["counts"]["shared"]
        == 20
    )
    assert (tmp_path / "cmp" / "compare_forest.png").is_file()
    refused = cli("mode=compare", "compare.runs=[runA,nowhere]", "hydra.run.dir=cmp2")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "nowhere: not a directory" in refused.stderr


def test_scoring_run_params_leave_out_mode_compare_and_sweep():
    from locomo_exp.report.locomo_run import config_tree as _config_tree
    from locomo_exp.tracking import config_params

    params = config_params(_config_tree(_typed("data=example")), judge_ran=False)
    assert "data.path" in params
    assert [k for k in params if k.split(".")[0] in ("mode", "compare", "sweep", "judge")] == []
