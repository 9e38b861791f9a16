"""The console says when data.limit makes a subset and when errata are applied (trial 4, finding 14).

``data.limit=100`` printed "Scored 100 questions" without the report's "not comparable with
full-benchmark baselines"; ``data.errata=...`` printed the same table as without it.
"""

from __future__ import annotations

import pytest
from conftest import EXAMPLE, run_job
from test_errata import _two_entries
from test_errata_run import _input, _typed

from locomo_exp.cli import print_result


def test_a_data_limit_sample_is_said_on_the_console(
    tmp_path, capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
) -> None:
    result = run_job(tmp_path, path=EXAMPLE, limit=10)
    print_result(result)
    out = capsys.readouterr().out
    assert (
        "subset: 10 of 20 questions (data.limit=10, seed 0); not comparable with "
        "full-benchmark baselines"
    ) in out
    assert out.index("subset:") < out.index("Report:")


def test_a_run_without_a_sample_or_errata_says_neither(
    tmp_path, capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
) -> None:
    print_result(run_job(tmp_path, path=EXAMPLE))
    out = capsys.readouterr().out
    assert "subset:" not in out and "answer key:" not in out


def test_errata_applied_are_said_on_the_console(
    tmp_path, capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
) -> None:
    from locomo_exp.experiment import run_experiment

    errata = _two_entries(tmp_path)
    result = run_experiment(
        _typed(f"data.path={_input(tmp_path)}", f"data.errata={errata}"), tmp_path / "out", tmp_path
    )
    print_result(result)
    out = capsys.readouterr().out
    assert (
        f"answer key: 2 errata applied from {errata.name} (2 change a score); the corrected "
        "key is scored beside the original one ('Answer key: original vs corrected' in the "
        "report), headline numbers use the original"
    ) in out
