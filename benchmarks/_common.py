"""What several benchmarks share: the checkout's path, a child's environment, a child's peak
memory, and a fake judge API served from its own process.

Imported by the scripts beside it (``python benchmarks/<name>.py`` puts this folder on
``sys.path``). POSIX only (``os.wait4``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""The checkout (the project root)."""

FAKE_SERVERS = {"anthropic": "fake_anthropic.py", "openai": "fake_openai.py"}
"""Provider -> its fake API in ``tests/``, runnable as a script (prints its base URL)."""


@dataclass(frozen=True)
class ChildRun:
    """One finished child process.

    Attributes:
        returncode: its exit code.
        stdout: what it printed.
        stderr: what it printed on stderr.
        seconds: wall time from start to exit, seconds.
        peak_rss_mb: its own peak resident set size (``ru_maxrss`` from ``wait4``, which
            Linux gives in kilobytes), megabytes of 1,024 kB.
    """

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss_mb: float


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment for a child: the checkout first on ``PYTHONPATH``, no MLflow
    run or store inherited, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "MLFLOW_RUN_ID")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run_measured(command: list[str], *, cwd: str | Path | None = None) -> ChildRun:
    """Run ``command`` to its end with :func:`child_env` and measure that child alone.

    Its output goes through temporary files, so a large output cannot block it; its peak RSS
    is read from ``os.wait4`` on its own pid (not the maximum over all children so far).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, env=child_env(), stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        return ChildRun(
            returncode=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            seconds=seconds,
            peak_rss_mb=usage.ru_maxrss / 1024.0,
        )


def start_fake_server(provider: str, latency_s: float) -> tuple[subprocess.Popen[str], str]:
    """Serve the provider's fake API from a separate process; ``(process, base URL)``.

    The caller kills and waits for the process.
    """
    script = REPO / "tests" / FAKE_SERVERS[provider]
    proc = subprocess.Popen(
        [sys.executable, str(script), "--latency", str(latency_s)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake {provider} server did not start: {url!r}")
    return proc, url
