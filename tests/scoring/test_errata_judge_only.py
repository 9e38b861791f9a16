"""``data.errata`` with ``scorer=judge``: the file is read and checked, and the report never
claims a corrected key is scored beside the original one (trial 5, finding 11)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLE, run_job
from fake_anthropic import FakeAnthropicServer, make_judge_config

from locomo_exp.config import DataConfig, ScorerName
from locomo_exp.config.schema import JudgeAuditConfig
from locomo_exp.data.errata import ErrataError


def test_a_broken_errata_file_is_refused_with_scorer_judge_before_anything_is_written(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    broken = tmp_path / "trunc.json"
    broken.write_text('[{"question_id": "x", "question": "q", "error_type": "WRONG_ANSWER"', encoding="utf-8")
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1, audit=JudgeAuditConfig(n=0))
    with pytest.raises(ErrataError, match=r"trunc\.json: cannot be read as JSON"):
        run_job(tmp_path, DataConfig(path=str(EXAMPLE), errata=str(broken)), scorer=ScorerName.judge, judge=judge)
    assert not fake_anthropic.messages_requests()  # nothing paid
    assert not (tmp_path / "out" / "report.md").exists()


def test_errata_with_scorer_judge_are_read_but_not_said_to_be_scored(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path, shared_data: Path
) -> None:
    errata = shared_data / "locomo_audit_errors.json"
    if not errata.is_file():
        pytest.skip(f"{errata} not found")
    judge = make_judge_config(fake_anthropic, tmp_path, runs=1, audit=JudgeAuditConfig(n=0))
    result = run_job(tmp_path, DataConfig(path=str(EXAMPLE), errata=str(errata)), scorer=ScorerName.judge, judge=judge)
    report = (result.output_dir / "report.md").read_text()
    assert "scored beside it" not in report
    assert "Answer key: original vs corrected" not in report
    assert (
        f"- Answer key: original LoCoMo; errata {errata} (sha256 " in report
        and "read but not applied: J is judged against the original gold (docs/compare.md)" in report
    )
