"""A password in the MLflow store's address is never written, printed or logged.

``tracking.uri=postgresql://user:password@host/db`` (or an ``http(s)`` server's URL with
``user:password@``) would be copied by Hydra into ``.hydra/config.yaml`` and
``overrides.yaml``, and by this tool into ``config.yaml``, the card, MLflow's params and the
log. Such a value is refused in one line before anything is written; the store's address
with its credentials goes in MLflow's own ``MLFLOW_TRACKING_URI`` (an http server's in
``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD``), which the tool uses and shows
only with the password masked.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLE, clean_env, run_cli

from locomo_exp.config.secrets import key_override_problem, redact_uri, tracking_uri_problem
from locomo_exp.tracking import TrackingStoreError, open_ui_hint

SECRET = "hunter2SECRETpw"

REFUSAL = (
    "tracking.uri must not hold a password or token (user:password@host, ?password=...); "
    "leave tracking.uri unset and export the store in MLFLOW_TRACKING_URI (an http(s) "
    "server's credentials in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD), which "
    "is used and never written; the value given was not saved"
)


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param(f"postgresql://mlflow:{SECRET}@db.internal:5432/mlflow", id="postgres"),
        pytest.param(f"mysql+pymysql://u:{SECRET}@h/db", id="mysql-driver"),
        pytest.param(f"http://u:{SECRET}@127.0.0.1:5000", id="http-basic-auth"),
        pytest.param(f"https://{SECRET}@mlflow.example.org", id="https-token-as-user"),
        pytest.param(f"postgresql://h/db?user=u&password={SECRET}", id="query-password"),
        pytest.param(f"sqlite:///x.db,postgresql://u:{SECRET}@h/db", id="in-a-sweep"),
    ],
)
def test_a_secret_in_tracking_uri_on_the_command_line_is_refused(uri: str) -> None:
    for override in (f"tracking.uri={uri}", f"+tracking.uri={uri}", f"++tracking.uri={uri}"):
        assert key_override_problem(["scorer=f1", override]) == REFUSAL


@pytest.mark.parametrize(
    "uri",
    [
        "sqlite:///mlflow.db",
        "http://127.0.0.1:5000",
        "postgresql://mlflow@db.internal/mlflow",  # a user name alone (peer auth, .pgpass)
        "postgresql://h/db?sslmode=require&sslkey=/home/u/key.pem",
        "databricks://profile:prefix",
        "file:///tmp/mlruns",
    ],
)
def test_a_tracking_uri_without_a_secret_passes(uri: str) -> None:
    assert key_override_problem([f"tracking.uri={uri}"]) is None
    assert tracking_uri_problem(uri) is None
    assert redact_uri(uri) == uri


def test_a_config_files_tracking_uri_is_refused_too(typed_config) -> None:  # type: ignore[no-untyped-def]
    from locomo_exp.config import ConfigValueError

    assert tracking_uri_problem(f"postgresql://u:{SECRET}@h/db") == REFUSAL
    with pytest.raises(ConfigValueError) as raised:
        typed_config(f"tracking.uri=postgresql://u:{SECRET}@h/db")
    assert SECRET not in str(raised.value) and REFUSAL in str(raised.value)


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        (f"postgresql://mlflow:{SECRET}@db:5432/m", "postgresql://mlflow:***@db:5432/m"),
        (f"http://u:{SECRET}@127.0.0.1:5000", "http://u:***@127.0.0.1:5000"),
        (f"https://{SECRET}@host", "https://***@host"),
        (f"postgresql://h/db?user=u&password={SECRET}&x=1", "postgresql://h/db?user=u&password=***&x=1"),
    ],
)
def test_a_store_address_from_the_environment_is_shown_masked(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
    message = str(TrackingStoreError(uri, ConnectionError("refused")))
    assert SECRET not in message and shown in message
    hint = open_ui_hint(uri, "1")
    assert SECRET not in hint and '--backend-store-uri "$MLFLOW_TRACKING_URI"' in hint


def _files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under ``root`` (outputs, .hydra/, mlflow.db, mlartifacts) holding ``secret``."""
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.slow
@pytest.mark.parametrize(
    "uri",
    [
        f"postgresql://mlflow:{SECRET}@127.0.0.1:9/mlflow",
        f"http://u:{SECRET}@127.0.0.1:9",
    ],
)
def test_cli_refuses_a_secret_tracking_uri_before_anything_is_written(uri: str, tmp_path: Path) -> None:
    before = set(tmp_path.rglob("*"))
    result = run_cli(f"tracking.uri={uri}", "hydra.run.dir=run", cwd=tmp_path, timeout=600)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {REFUSAL}"]
    assert SECRET not in result.stdout + result.stderr
    assert set(tmp_path.rglob("*")) == before
    assert _files_holding(tmp_path, SECRET) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "uri",
    [
        pytest.param(f"postgresql://mlflow:{SECRET}@127.0.0.1:9/mlflow", id="driver-missing"),
        pytest.param(f"http://u:{SECRET}@127.0.0.1:9", id="server-down"),
        pytest.param(f"nosuchscheme://u:{SECRET}@h/x", id="unknown-scheme"),
    ],
)
def test_an_unusable_store_from_the_environment_is_named_without_its_password(
    uri: str, tmp_path: Path
) -> None:
    result = run_cli(
        f"data.path={EXAMPLE}", "hydra.run.dir=run", cwd=tmp_path, timeout=600,
        env=clean_env(MLFLOW_TRACKING_URI=uri),
    )
    assert result.returncode == 1, result.stderr
    assert "tracking.uri=" in result.stderr and "***" in result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert _files_holding(tmp_path, SECRET) == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def mlflow_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real ``mlflow server`` on 127.0.0.1 with its store and artifacts under ``tmp_path/server``."""
    home = tmp_path / "server"
    home.mkdir()
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
         f"sqlite:///{home / 'mlflow.db'}", "--artifacts-destination", str(home / "mlartifacts"),
         "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        cwd=home, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90  # a guard, not a measurement
        while True:
            try:
                with urllib.request.urlopen(f"http://{base}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"mlflow server did not start: {stderr[-2000:]}")
            time.sleep(0.25)
        yield base, home
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.slow
def test_a_store_with_credentials_in_the_environment_is_used_and_never_echoed(
    mlflow_server: tuple[str, Path], tmp_path: Path, fake_anthropic  # type: ignore[no-untyped-def]
) -> None:
    base, home = mlflow_server
    runs = {
        "in-uri": clean_env(fake_anthropic, MLFLOW_TRACKING_URI=f"http://u:{SECRET}@{base}"),
        "mlflow-vars": clean_env(
            fake_anthropic, MLFLOW_TRACKING_URI=f"http://{base}", MLFLOW_TRACKING_USERNAME="u",
            MLFLOW_TRACKING_PASSWORD=SECRET,
        ),
    }
    scorers = {"in-uri": "scorer=both", "mlflow-vars": "scorer=f1"}  # the judge's run on a thread
    for name, env in runs.items():
        result = run_cli(
            f"data.path={EXAMPLE}", scorers[name], "judge.runs=1", "judge.audit.n=2",
            f"hydra.run.dir={name}", f"tracking.run_name={name}", cwd=tmp_path, env=env,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout + result.stderr
        assert "MLflow: run" in result.stdout
        assert (tmp_path / name / "config.yaml").is_file()
    assert not (tmp_path / "mlflow.db").exists()  # the store named in the environment was used
    db = (home / "mlflow.db").read_bytes()
    assert b"in-uri" in db and b"mlflow-vars" in db and b"j/overall" in db
    assert any(p.name == "report.md" for p in (home / "mlartifacts").rglob("*"))
    assert _files_holding(tmp_path, SECRET) == []  # run dirs, .hydra/, logs, server store, artifacts
