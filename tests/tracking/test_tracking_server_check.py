"""An ``http(s)`` tracking server that does not answer stops the job in one line, at once.

Trial 4, finding 5: ``tracking.uri=http://127.0.0.1:9/`` blocked a 6-second F1 job for
4 min 10 s (MLflow's retries), then printed an error line cut off mid-string. The server
is now asked once (``GET /health``, ``tracking.connect_timeout_s``) before any work, and
error lines keep their whole reason.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import Composer, run_cli

from locomo_exp import tracking
from locomo_exp.experiment import run_experiment
from locomo_exp.tracking import preflight
from locomo_exp.tracking.store import TrackingStoreError, error_reason


@pytest.fixture(autouse=True)
def _fresh_answers() -> Iterator[None]:
    preflight.server_problem.cache_clear()
    yield
    preflight.server_problem.cache_clear()


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed): connection refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Server:
    """A fake tracking server on 127.0.0.1 answering every GET with ``status``."""

    def __init__(self, status: int) -> None:
        self.paths: list[str] = []
        paths, code = self.paths, status

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                paths.append(self.path)
                self.send_response(code)
                self.end_headers()
                self.wfile.write(b"OK")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def health_server() -> Iterator[_Server]:
    server = _Server(200)
    yield server
    server.close()


def test_a_closed_port_is_one_whole_line(tmp_path: Path) -> None:
    uri = f"http://127.0.0.1:{closed_port()}/"
    with pytest.raises(TrackingStoreError) as refused:
        tracking.check_tracking_uri(uri)
    assert str(refused.value) == (
        f"tracking.uri={uri}: no MLflow server answers (connection refused); start it or use "
        "tracking=none"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_server_answering_health_passes(health_server: _Server) -> None:
    tracking.check_tracking_uri(health_server.url)
    tracking.check_tracking_uri(health_server.url)  # asked once per URI and process (a sweep)
    assert health_server.paths == ["/health"]


def test_any_http_answer_counts_and_a_path_prefix_is_kept() -> None:
    server = _Server(404)  # a proxy in front, or a server without /health
    try:
        tracking.check_tracking_uri(server.url + "/mlflow")
        assert server.paths == ["/mlflow/health"]
    finally:
        server.close()


def test_a_password_is_neither_sent_nor_repeated() -> None:
    uri = f"http://user:SECRET123@127.0.0.1:{closed_port()}"
    with pytest.raises(TrackingStoreError) as refused:
        tracking.check_tracking_uri(uri)
    assert "SECRET123" not in str(refused.value)
    assert str(refused.value).startswith("tracking.uri=http://user:***@127.0.0.1:")  # masked


def test_no_answer_within_the_timeout_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.error

    asked: list[float] = []

    def no_answer(url: str, timeout: float) -> None:
        asked.append(timeout)
        raise urllib.error.URLError(TimeoutError("timed out"))

    monkeypatch.setattr(preflight.urllib.request, "urlopen", no_answer)
    assert preflight.server_problem("http://10.255.255.1:5000", 2.0) == "no answer within 2 s"
    assert asked == [2.0]


def test_a_job_with_a_closed_port_stops_before_any_work(
    tmp_path: Path, typed_config: Composer
) -> None:
    uri = f"http://127.0.0.1:{closed_port()}"
    cfg = typed_config(f"tracking.uri={uri}", "tracking.connect_timeout_s=2")
    with pytest.raises(TrackingStoreError, match="no MLflow server answers"):
        run_experiment(cfg, tmp_path / "out", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_comparison_with_a_closed_port_stops_before_reading_the_runs(tmp_path: Path) -> None:
    from locomo_exp.compare.job import run_compare_job
    from locomo_exp.config.compare import CompareConfig

    uri = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(TrackingStoreError, match="no MLflow server answers"):
        run_compare_job(CompareConfig(runs=["a", "b"]), tmp_path / "out", tmp_path, tracking_uri=uri)
    assert list(tmp_path.iterdir()) == []


def test_a_wrapped_connection_error_reads_whole() -> None:
    text = (
        "API request to http://127.0.0.1:9/api/2.0/mlflow/experiments/get-by-name failed with "
        "exception HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: "
        "/api/2.0/mlflow/experiments/get-by-name (Caused by NewConnectionError(\"HTTPConnection"
        "(host='127.0.0.1', port=9): Failed to establish a new connection: [Errno 111] "
        "Connection refused\"))"
    )
    assert error_reason(RuntimeError(text)) == "Connection refused"
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert error_reason(outer) == "Connection refused"
    long = "x " * 400
    line = str(TrackingStoreError("sqlite:///m.db", ValueError(long)))
    assert long.strip() in line and line.endswith("; fix tracking.uri or use tracking=none")


@pytest.mark.slow
def test_cli_with_a_closed_port_prints_one_line_at_once(tmp_path: Path) -> None:
    uri = f"http://127.0.0.1:{closed_port()}/"
    done = run_cli(f"tracking.uri={uri}", "hydra.run.dir=out", cwd=tmp_path, timeout=60)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: tracking.uri={uri}: no MLflow server answers (connection refused); start it or "
        "use tracking=none"
    ]
    assert "Retrying" not in done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []
