"""``tracking.uri`` refused in one line before any judge call, without MLflow, writing nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Composer
from fake_anthropic import FakeAnthropicServer, rubric

from locomo_exp import tracking
from locomo_exp.experiment import run_experiment

TAIL = "; fix tracking.uri or use tracking=none"


def _line(uri: str, problem: str) -> str:
    return f"tracking.uri={uri}: MLflow cannot use this store ({problem}){TAIL}"


def _bad_uris(tmp_path: Path) -> list[tuple[str, str]]:
    not_db = tmp_path / "notes.db"
    not_db.write_text("my notes\n")
    return [
        (
            "foo://x",
            "unknown scheme foo:, MLflow's are sqlite:///, postgresql://, mysql://, mssql://, "
            "http(s)://, databricks, file: or a directory",
        ),
        ("sqlite://rel.db", "an SQLite store is sqlite:///relative/file.db or sqlite:////absolute/file.db"),
        (f"sqlite:///{not_db}", f"{not_db} is not an SQLite database"),
        (f"sqlite:///{tmp_path}", f"{tmp_path} is a directory, not a database file"),
        (
            f"sqlite:///{not_db}/sub/m.db",
            f"{not_db} is not a directory, so {not_db}/sub/m.db cannot be created",
        ),
        (
            "sqlite:////proc/locomo_exp_no_such/m.db",
            "the directory /proc cannot be written: No such file or directory",
        ),
        (
            f"file://{tmp_path}/mlruns",
            "MLflow 3 refuses a file store unless MLFLOW_ALLOW_FILE_STORE=true; use a database, "
            "e.g. tracking.uri=sqlite:///mlflow.db",
        ),
        # trial 4, finding 16: tracking.uri=/etc/passwd said "refuses a file store"
        (str(not_db), f"{not_db} is a regular file, not an MLflow store directory or SQLite "
         "database"),
        (f"file://{not_db}", f"{not_db} is a regular file, not an MLflow store directory or "
         "SQLite database"),
        ("postgresql+a+b://h/db", "postgresql+a+b: at most one +driver after the database name"),
        ("http://", "no host after http://"),
    ]


def test_bad_uris_are_one_line_each(tmp_path: Path) -> None:
    before = sorted(tmp_path.rglob("*"))
    for uri, problem in _bad_uris(tmp_path):
        with pytest.raises(tracking.TrackingStoreError) as refused:
            tracking.check_tracking_uri(uri)
        assert str(refused.value) == _line(uri, problem)
    assert sorted(tmp_path.rglob("*")) == before + [tmp_path / "notes.db"]  # nothing made


def test_an_sqlite_file_given_as_a_path_is_named_with_its_uri(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "mlflow.db"
    sqlite3.connect(db).execute("create table t (x)").connection.close()
    with pytest.raises(tracking.TrackingStoreError) as refused:
        tracking.check_tracking_uri(str(db))
    assert str(refused.value) == _line(
        str(db), f"{db} is an SQLite database: use tracking.uri=sqlite:///{db}"
    )


def test_a_missing_database_driver_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    real = tracking.preflight.importlib.util.find_spec
    monkeypatch.setattr(
        tracking.preflight.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "psycopg2" else real(name, *a),
    )
    with pytest.raises(tracking.TrackingStoreError) as refused:
        tracking.check_tracking_uri("postgresql://u@db.example/mlflow")
    assert str(refused.value) == _line(
        "postgresql://u@db.example/mlflow", "the database driver psycopg2 is not installed"
    )


def test_usable_uris_pass_and_nothing_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answered: list[str] = []  # a server's answer is tests/tracking/test_tracking_server_check.py's
    monkeypatch.setattr(
        tracking.preflight, "server_problem", lambda uri, timeout_s: answered.append(uri)
    )
    for uri in (
        f"sqlite:///{tmp_path / 'new' / 'deeper' / 'mlflow.db'}",  # MLflow makes the dirs
        f"sqlite:///{tmp_path / 'mlflow.db'}",
        "sqlite://",
        "http://127.0.0.1:5000",
        "https://mlflow.example/",
        "databricks",
        "databricks://profile",
    ):
        tracking.check_tracking_uri(uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    tracking.check_tracking_uri(f"file://{tmp_path}/mlruns")
    tracking.check_tracking_uri(str(tmp_path / "mlruns"))
    assert list(tmp_path.iterdir()) == []
    assert answered == ["http://127.0.0.1:5000", "https://mlflow.example/"]


def test_a_bad_uri_stops_a_judge_job_before_any_call_leaving_nothing(
    tmp_path: Path, typed_config: Composer, fake_anthropic: FakeAnthropicServer
) -> None:
    fake_anthropic.responder = lambda request: rubric(80)
    judge = (
        "scorer=both", "judge.runs=1", "judge.progress=false", "judge.audit.n=0",
        f"judge.base_url={fake_anthropic.url}", f"judge.cache_path={tmp_path / 'cache.sqlite'}",
    )
    (tmp_path / "notes.db").write_text("my notes\n")
    for uri in ("foo://x", f"sqlite:///{tmp_path / 'notes.db'}", "sqlite://rel.db"):
        with pytest.raises(tracking.TrackingStoreError) as refused:
            run_experiment(typed_config(f"tracking.uri={uri}", *judge), tmp_path / "out", tmp_path)
        assert str(refused.value).startswith(f"tracking.uri={uri}: MLflow cannot use this store (")
        assert "\n" not in str(refused.value)
    assert fake_anthropic.messages_requests() == []
    assert [p.name for p in tmp_path.iterdir()] == ["notes.db"]
    assert (tmp_path / "notes.db").read_text() == "my notes\n"


@pytest.mark.slow
def test_the_check_does_not_import_mlflow() -> None:
    code = (
        "import sys\nfrom locomo_exp.tracking import check_tracking_uri\n"
        "check_tracking_uri('sqlite:////tmp/locomo_exp_check/mlflow.db')\n"
        "print('mlflow' in sys.modules, 'sqlalchemy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
