"""Which statuses mean a run finished: a finished run is refused, an unfinished one resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from locomo_exp.report.run_dir import run_dir_state
from locomo_exp.results import part_finished


@pytest.mark.parametrize(
    "status, finished",
    [
        ("ok", True),
        ("ok (stored verdicts)", True),  # LongMemEval
        ("ok (this tool's judge)", True),  # LongMemEval
        ("warning: J inflated (4/4 known-wrong accepted)", True),
        ("not measured: no stored verdicts", True),
        ("running: not finished (the job stopped before the judge ended)", False),
        ("interrupted", False),
        ("failed: judge API errors exceed judge.max_error_rate=0.05", False),
        ("pending: batch msgbatch_1 submitted", False),
        ("dry run: nothing judged", False),
        ("okay", False),
    ],
)
def test_part_finished(status: str, finished: bool) -> None:
    assert part_finished(status) is finished


@pytest.mark.parametrize(
    "status, state",
    [
        ({"j": "ok (stored verdicts)"}, "finished"),
        ({"j": "ok (this tool's judge)", "judge": "ok"}, "finished"),
        ({"j": "not measured: no stored verdicts"}, "finished"),
        ({"j": "ok (this tool's judge)", "judge": "interrupted"}, "incomplete"),
    ],
)
def test_a_longmemeval_run_directory_that_finished_reads_as_finished(
    tmp_path: Path, status: dict[str, str], state: str
) -> None:
    # LongMemEval's statuses were read as unfinished, so a finished run was "resumed"
    (tmp_path / "summary.json").write_text(json.dumps({"status": status}))
    (tmp_path / "report.md").write_text("# report\n")
    assert run_dir_state(tmp_path) == state
