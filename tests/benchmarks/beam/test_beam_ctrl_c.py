"""A real Ctrl-C of a judged BEAM command, then the same command again: no rubric item paid twice.

``python -m locomo_exp`` runs in a subprocess against the fake Anthropic server on 127.0.0.1.
The fake server itself sends SIGINT to the process while it answers the N-th item call, so
the interrupt lands at a known point with no sleep and no wall-clock wait; the test only
waits for the process to end. Invented answers (no BEAM excerpt; :mod:`test_beam_judged`'s
rows, 12 rubric items).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import clean_env
from fake_anthropic import FakeAnthropicServer, Reply
from fake_server import RecordedRequest
from test_beam_judged import _answers, _expected_nugget, _respond, _rows

from locomo_exp.benchmarks.beam import profiles as p

pytestmark = pytest.mark.slow

STOP_AT = 5
"""The item call during which the fake server sends the Ctrl-C."""

ITEMS = sum(len(row["rubric"]) for row in _rows())
"""Rubric items of the answers file: one judge call each (12)."""


def _command(server: FakeAnthropicServer) -> list[str]:
    return [sys.executable, "-m", "locomo_exp", "data=file", "data.path=answers.json",
            "benchmark=beam", "scorer=judge", f"judge.base_url={server.url}",
            "judge.progress=false", "judge.audit.n=0", "judge.max_concurrency=1",
            "judge.drain_s=30", "tracking=none", "hydra.run.dir=run"]


def test_ctrl_c_then_the_same_command_pays_no_item_twice(
    fake_anthropic: FakeAnthropicServer, tmp_path: Path
) -> None:
    _answers(tmp_path)
    proc = subprocess.Popen(_command(fake_anthropic), cwd=tmp_path, env=clean_env(fake_anthropic),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = 0
    lock = threading.Lock()

    def ctrl_c_at_the_nth_item(request: RecordedRequest) -> Reply:
        nonlocal seen
        with lock:
            seen += 1
            if seen == STOP_AT:  # Ctrl-C while this call is being answered
                proc.send_signal(signal.SIGINT)
        return _respond(request)

    fake_anthropic.responder = ctrl_c_at_the_nth_item
    _, stderr = proc.communicate(timeout=600)  # a guard only: the process ends by itself
    fake_anthropic.wait_idle()
    first = [r.prompt for r in fake_anthropic.messages_requests()]

    assert proc.returncode == 128 + signal.SIGINT, stderr[-3000:]
    assert "Traceback" not in stderr
    assert STOP_AT <= len(first) < ITEMS
    lines = stderr.strip().splitlines()
    assert lines == [f"interrupted: {len(first)} calls cached; re-run the same command to resume"]
    assert not (tmp_path / "run" / "summary.json").exists()  # nothing claims to be done

    fake_anthropic.clear()
    fake_anthropic.responder = _respond
    again = subprocess.run(_command(fake_anthropic), cwd=tmp_path, env=clean_env(fake_anthropic),
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    second = [r.prompt for r in fake_anthropic.messages_requests()]
    assert len(first) + len(second) == ITEMS
    assert sorted(first + second) == sorted(set(first + second))  # no item asked twice
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    counts = summary["judge"]["counts"]
    assert (counts["calls_made"], counts["cache_hits"]) == (len(second), len(first))
    scores = [json.loads(line) for line in
              (tmp_path / "run" / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    nugget = [row[p.NUGGET]["score"] for row in scores]
    assert nugget == _expected_nugget(_rows())  # the figures of an uninterrupted run
