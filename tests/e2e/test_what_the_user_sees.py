"""What the user sees is the number the docs tell them to check (issue 18 §4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, Composer

from locomo_exp.experiment import run_experiment
from locomo_exp.report.console import console_table


def _console_of(
    shared_data: Path, typed_config: Composer, tmp_path: Path, name: str
) -> tuple[str, dict[str, list[str]]]:
    """The console table of an F1 run on one of shared/data's prediction files, and its rows."""
    path = shared_data / "predictions" / name
    result = run_experiment(
        typed_config("tracking=none", "data=file", f"data.path={path}"), tmp_path / "out",
        PROJECT_ROOT,
    )
    table = console_table(result.summary)
    return table, _rows(table)


def _rows(table: str) -> dict[str, list[str]]:
    # the label takes 18 characters; then n, then one value per column
    return {line.split()[0]: line[18:].split()[1:] for line in table.splitlines()[2:9]}


def test_memobase_console_shows_the_files_f1_variant_and_stored_j(
    shared_data: Path, typed_config: Composer, tmp_path: Path
) -> None:
    table, rows = _console_of(shared_data, typed_config, tmp_path, "memobase_eval_0710.json")
    lines = table.splitlines()
    assert lines[0].split() == ["category", "n", "F1", "F1", "mem0", "BLEU-1", "stored", "J"]
    # shared/data/README.md: Memobase's published F1 51.45 (Mem0 harness), J 75.78
    assert rows["overall_1_4"] == ["54.51", "51.45", "39.78", "75.78"]
    assert rows["3"] == ["27.77", "22.93", "17.58", "46.88"]
    assert (
        "F1 mem0: the variant the file's own `f1_score` = f1_mem0 on 1540/1540 questions" in lines
    )
    assert "stored J: the file's own judge verdicts (`llm_score`)" in lines


def test_locomo_output_console_shows_the_official_aggregate(
    shared_data: Path, typed_config: Composer, tmp_path: Path
) -> None:
    table, rows = _console_of(shared_data, typed_config, tmp_path, "honcho_locomo10_qa.json")
    # shared/data/README.md: LoCoMo's own aggregation, category 3 = 0.1225 (0.1224 unrounded)
    assert rows["3"][:2] == ["12.24", "12.25"]
    assert rows["1"][:2] == ["22.68", "22.68"] and rows["5"][:2] == ["93.05", "93.05"]
    assert table.splitlines()[0].split()[3:5] == ["F1", "official"]


def test_a_file_without_stored_metrics_gets_the_plain_table(
    typed_config: Composer, tmp_path: Path
) -> None:
    result = run_experiment(typed_config("tracking=none"), tmp_path / "out", tmp_path)
    table = console_table(result.summary)
    assert table.splitlines()[0].split() == ["category", "n", "F1", "BLEU-1"]
    assert len(table.splitlines()) == 9


# -- one cost definition --------------------------------------------------------------------


def test_cost_is_calls_actually_paid_with_audit_included_and_cached_calls_free(
    fake_anthropic, tmp_path: Path, run_judged  # type: ignore[no-untyped-def]
) -> None:
    import json

    from fake_anthropic import replay_truth

    fake_anthropic.responder = replay_truth()
    common = (
        "scorer=judge", "data=example", "judge.runs=1", "judge.audit.n=3",
        "judge.audit.max_share=null",
    )
    first = run_judged(*common, out="one", start_dir=PROJECT_ROOT)
    judge = json.loads((tmp_path / "one" / "summary.json").read_text())["judge"]
    answers, audit = judge["estimated_cost_usd"], judge["trust"]["audit"]["estimated_cost_usd"]
    assert answers > 0 and audit > 0
    # each amount is stored to a millionth of a dollar (results/money.py)
    assert judge["trust"]["total_cost_usd"] == round(answers + audit, 6)
    report = (tmp_path / "one" / "report.md").read_text()
    assert (
        f"cost ${answers + audit:.4f} (answers ${answers:.4f}, audit ${audit:.4f}): "
        "list-price estimate of the calls made (custom endpoint judge.base_url: the model's "
        "list price may not apply); cached calls are free." in report
    )
    assert f"- Audit cost: {audit:.4f} USD (the calls made, at the model's list price: see the cost line under J; cached calls are free)" in report
    assert first.metrics["judge/total_cost_usd"] == pytest.approx(answers + audit, abs=1e-6)

    second = run_judged(*common, out="two", start_dir=PROJECT_ROOT)
    again = json.loads((tmp_path / "two" / "summary.json").read_text())["judge"]
    assert again["counts"]["calls_made"] == 0
    assert again["trust"]["audit"]["calls_made"] == 0
    assert again["trust"]["total_cost_usd"] == 0.0  # fully cached: nothing paid, audit too
    report = (tmp_path / "two" / "report.md").read_text()
    assert "- Audit cost: 0.0000 USD (the calls made, at the model's list price: see the cost line under J; cached calls are free)" in report
    assert second.metrics["judge/total_cost_usd"] == 0.0


def test_the_sweep_cost_column_includes_the_audit_and_panel() -> None:
    from locomo_exp import sweep

    record = sweep.JobRecord(0, [], {"judge.runs": "1"}, "x", sweep.COMPLETED, "/x")
    judge = {"estimated_cost_usd": 0.10, "trust": {"audit": {"estimated_cost_usd": 0.02},
                                                   "total_cost_usd": 0.12}}
    row = sweep.summary_row(record, {"counts": {"overall": 1}, "metrics": {}, "judge": judge})
    assert row["estimated_cost_usd"] == 0.12


# -- the report of a sample, and of the example -----------------------------------------------


def test_the_command_is_the_one_a_user_can_paste() -> None:
    from locomo_exp.report.provenance import command_line

    main = str(PROJECT_ROOT / "locomo_exp" / "__main__.py")
    assert command_line([main, "data=file", "data.path=my answers.json"]) == (
        "python -m locomo_exp data=file 'data.path=my answers.json'"
    )
    assert command_line(["/usr/bin/mytool", "x"]) == "/usr/bin/mytool x"


def test_the_example_report_names_its_own_answer_key_and_lists_input_once(
    typed_config: Composer, tmp_path: Path
) -> None:
    run_experiment(typed_config("tracking=none"), tmp_path / "out", PROJECT_ROOT)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "- Answer key: the golds in the input file" in report
    assert "original LoCoMo" not in report
    assert report.count("qa_results.json") == 1 and report.count("- Question set") == 1
    assert "sha256: `" not in report  # the card's input line carries it


def test_a_samples_report_says_sample_once_and_its_run_name_too(
    shared_data: Path, typed_config: Composer, tmp_path: Path
) -> None:
    path = shared_data / "predictions" / "memobase_eval_0710.json"
    db = tmp_path / "mlflow.db"
    result = run_experiment(
        typed_config(f"tracking.uri=sqlite:///{db}", "data=file", f"data.path={path}",
                     "data.limit=200"),
        tmp_path / "out", PROJECT_ROOT,
    )
    report = (tmp_path / "out" / "report.md").read_text()
    assert (
        "- Question set: custom (200): a data.limit sample (seed 0) of the input's 1,540 "
        "questions: LoCoMo-10 categories 1-4 (the Mem0 paper's set)" in report
    )
    assert report.count("- Question set") == 1
    assert "- Answer key: original LoCoMo" in report
    import mlflow

    run = mlflow.MlflowClient(tracking_uri=f"sqlite:///{db}").get_run(result.run_id)
    assert run.info.run_name == "memobase_eval_0710 · f1 · sample 200"


def test_official_columns_have_distinct_titles() -> None:
    from locomo_exp.scoring.specs import METRIC_TITLES

    titles = list(METRIC_TITLES.values())
    assert len(set(titles)) == len(titles)
    assert METRIC_TITLES["f1_locomo"] == "F1, LoCoMo scorer (mean per question)"
    assert METRIC_TITLES["f1_locomo_official"] == "F1, LoCoMo's own aggregate (round(3) first)"


def test_one_system_has_one_colour_in_every_panel() -> None:
    from locomo_exp.report.plots import _colours, _system

    names = ["this run (f1_locomo)", "Mem0", "Zep", "this run (J)", "Zep", "LangMem"]
    colours = _colours(names)
    assert colours[_system("this run (f1_locomo)")] == colours[_system("this run (J)")] == "C0"
    assert colours["Zep"] == "C2" and colours["LangMem"] == "C3"
