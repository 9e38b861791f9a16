"""A sweep row's shared cells (headlines, judge spend) come from the job's typed run log, for runs
written by this version (``run_log`` in summary.json) and by the one before (schema 1)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from locomo_exp.benchmarks.registry import plugin_for
from locomo_exp.results.run_log import JudgeSpend, RunLog, RunSpec
from locomo_exp.sweep.job_files import COMPLETED, JobRecord
from locomo_exp.sweep.log_rows import log_row_fields
from locomo_exp.sweep.summary import summary_row
from locomo_exp.tracking.metrics import sweep_headlines
from tests.conftest import SHARED_DATA

BEAM_FILE = SHARED_DATA / "beam" / "beam_10m_results.json"


def _record(out: Path) -> JobRecord:
    return JobRecord(job=0, overrides=[], swept={}, run_name="j0", status=COMPLETED,
                     output_dir=str(out))


@pytest.fixture
def beam_run(typed_config: Any, tmp_path: Path, shared_data: Any) -> Path:
    cfg = typed_config("tracking=none", f"data.path={BEAM_FILE}")
    plugin = plugin_for(cfg, tmp_path)
    assert plugin is not None
    plugin.run(cfg, tmp_path / "out", tmp_path)
    return tmp_path / "out"


def test_a_beam_row_takes_its_headlines_from_the_run_log_and_a_version_1_file_gives_the_same(
    beam_run: Path,
) -> None:
    summary = json.loads((beam_run / "summary.json").read_text())
    row = summary_row(_record(beam_run), summary)
    scores = [json.loads(line) for line in (beam_run / "scores.jsonl").read_text().splitlines()]
    passes = [s["beam-nugget"]["pass"] for s in scores]
    assert row["headlines"] == {
        "beam-nugget/pass_rate/overall": pytest.approx(100 * sum(passes) / len(passes)),
        "beam-nugget/avg_score/overall": pytest.approx(
            statistics.fmean(s["beam-nugget"]["score"] for s in scores)),
        "beam-official/mean_of_abilities": None,
    }
    assert row["beam"]["pass_rate"] == row["headlines"]["beam-nugget/pass_rate/overall"]
    assert row["error"] is None and row["estimated_cost_usd"] is None  # no judge: unknown, not 0
    old = dict(summary, schema_version=1)
    del old["run_log"]  # as the previous version wrote it
    assert summary_row(_record(beam_run), old) == row
    assert sweep_headlines(row)["beam-nugget/pass_rate/overall"] == pytest.approx(50.5)


def test_a_newer_job_summary_puts_one_line_in_the_row(beam_run: Path) -> None:
    summary = json.loads((beam_run / "summary.json").read_text())
    summary["schema_version"] = 3
    row = summary_row(_record(beam_run), summary)
    assert row["error"] == (f"{beam_run / 'summary.json'}: summary.json schema_version 3 is newer "
                            "than this locomo_exp reads (2); upgrade locomo_exp")


def test_judge_spend_cells_are_the_logs_and_unknown_stays_none() -> None:
    log = RunLog(
        benchmark="x", title="X", spec=RunSpec(scorer="judge"),
        input={"path": "p", "sha256": "0", "format": "f", "records": 2},  # type: ignore[arg-type]
        metrics={}, headline=[],
        judge=JudgeSpend(status="ok", calls=4, parse_failures=1, api_errors=0, input_tokens=100,
                         output_tokens=20, input_tokens_in_all=150, output_tokens_in_all=30,
                         cost_usd=None, cost_in_all_usd=0.25),
    )
    cells = log_row_fields(log)
    assert cells == {"headlines": {}, "parse_failures": 1, "api_errors": 0, "input_tokens": 100,
                     "output_tokens": 20, "input_tokens_in_all": 150, "output_tokens_in_all": 30,
                     "estimated_cost_usd": None, "cost_in_all_usd": 0.25,
                     "trust": {"corrected": None, "corrected_ci": None, "false_accept": None,
                               "false_reject": None}}
