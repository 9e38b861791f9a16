"""What the user sees is the number the docs tell them to check (issue 18 §4)."""

from __future__ import annotations

from pathlib import Path

from conftest import PROJECT_ROOT, Composer

from locomo_exp.experiment import run_experiment
from locomo_exp.report.console import console_table


def _rows(table: str) -> dict[str, list[str]]:
    # the label takes 18 characters; then n, then one value per column
    return {line.split()[0]: line[18:].split()[1:] for line in table.splitlines()[2:9]}


def test_memobase_console_shows_the_files_f1_variant_and_stored_j(
    shared_data: Path, typed_config: Composer, tmp_path: Path
) -> None:
    path = shared_data / "predictions" / "memobase_eval_0710.json"
    result = run_experiment(
        typed_config("tracking=none", "data=file", f"data.path={path}"), tmp_path / "out",
        PROJECT_ROOT,
    )
    table = console_table(result.summary)
    lines = table.splitlines()
    assert lines[0].split() == ["category", "n", "F1", "F1", "mem0", "BLEU-1", "stored", "J"]
    # shared/data/README.md: Memobase's published F1 51.45 (Mem0 harness), J 75.78
    assert _rows(table)["overall_1_4"] == ["54.51", "51.45", "39.78", "75.78"]
    assert _rows(table)["3"] == ["27.77", "22.93", "17.58", "46.88"]
    assert (
        "F1 mem0: the variant the file's own `f1_score` = f1_mem0 on 1540/1540 questions" in lines
    )
    assert "stored J: the file's own judge verdicts (`llm_score`)" in lines


def test_locomo_output_console_shows_the_official_aggregate(
    shared_data: Path, typed_config: Composer, tmp_path: Path
) -> None:
    path = shared_data / "predictions" / "honcho_locomo10_qa.json"
    result = run_experiment(
        typed_config("tracking=none", "data=file", f"data.path={path}"), tmp_path / "out",
        PROJECT_ROOT,
    )
    table = console_table(result.summary)
    rows = _rows(table)
    # shared/data/README.md: LoCoMo's own aggregation, category 3 = 0.1225 (0.1224 unrounded)
    assert rows["3"][:2] == ["12.24", "12.25"]
    assert rows["1"][:2] == ["22.68", "22.68"] and rows["5"][:2] == ["93.05", "93.05"]
    assert table.splitlines()[0].split()[3:5] == ["F1", "official"]


def test_a_file_without_stored_metrics_gets_the_plain_table(
    typed_config: Composer, tmp_path: Path
) -> None:
    result = run_experiment(typed_config("tracking=none"), tmp_path / "out", PROJECT_ROOT)
    table = console_table(result.summary)
    assert table.splitlines()[0].split() == ["category", "n", "F1", "BLEU-1"]
    assert len(table.splitlines()) == 9
