"""A new MLflow store is created without MLflow's "Creating initial MLflow database tables..."
on stderr (trial 16); MLflow's warnings and errors still show."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from locomo_exp import tracking


def test_a_new_store_says_nothing_on_stderr_and_warnings_still_pass(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    uri = f"sqlite:///{tmp_path / 'fresh.db'}"
    experiment_id = tracking.ensure_experiment(uri, "quiet")
    assert experiment_id and (tmp_path / "fresh.db").is_file()
    err = capfd.readouterr().err
    assert "Creating initial MLflow database tables" not in err
    assert "Updating database tables" not in err
    db_utils = logging.getLogger("mlflow.store.db.utils")
    assert db_utils.getEffectiveLevel() == logging.WARNING
    assert db_utils.isEnabledFor(logging.WARNING) and not db_utils.isEnabledFor(logging.INFO)
    assert logging.getLogger("mlflow.tracking").isEnabledFor(logging.INFO)  # the rest as before
