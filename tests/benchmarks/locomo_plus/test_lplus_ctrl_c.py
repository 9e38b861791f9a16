"""A real Ctrl-C of a judged LoCoMo-Plus command, then the same command again: no item paid twice.

``python -m locomo_exp`` runs in a subprocess against the fake OpenAI server on 127.0.0.1 (the
authors' judge, gpt-4o-mini, is an OpenAI model). The fake server sends SIGINT to the process
while it answers the N-th call, so the interrupt lands at a known point with no sleep; the
test only waits for the process to end. ``scorer=both``: the F1 of the resumed run is that of
an uninterrupted one. Invented items (:mod:`test_lplus_f1`'s seven).
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
from fake_openai import FAKE_OPENAI_KEY, FakeOpenAIServer
from fake_server import RecordedRequest, Reply
from test_lplus_f1 import ITEMS, PER_ITEM, _reply

pytestmark = pytest.mark.slow

STOP_AT = 3
"""The call during which the fake server sends the Ctrl-C."""


def _command(server: FakeOpenAIServer) -> list[str]:
    return [sys.executable, "-m", "locomo_exp", "benchmark=locomo_plus", "scorer=both",
            "data=file", "data.path=answers.json", f"judge.base_url={server.base_url}",
            "judge.progress=false", "judge.max_concurrency=1", "judge.drain_s=30",
            "tracking=none", "report.bootstrap_samples=50", "hydra.run.dir=run"]


def test_ctrl_c_then_the_same_command_pays_no_item_twice(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    (tmp_path / "answers.json").write_text(json.dumps(ITEMS, ensure_ascii=False),
                                           encoding="utf-8")
    env = clean_env(OPENAI_API_KEY=FAKE_OPENAI_KEY)
    proc = subprocess.Popen(_command(fake_openai), cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = 0
    lock = threading.Lock()

    def ctrl_c_at_the_nth_call(request: RecordedRequest) -> Reply:
        nonlocal seen
        with lock:
            seen += 1
            if seen == STOP_AT:  # Ctrl-C while this call is being answered
                proc.send_signal(signal.SIGINT)
        return _reply(request)

    fake_openai.responder = ctrl_c_at_the_nth_call
    _, stderr = proc.communicate(timeout=600)  # a guard only: the process ends by itself
    fake_openai.wait_idle()
    first = [r.prompt for r in fake_openai.messages_requests()]
    assert proc.returncode == 128 + signal.SIGINT, stderr[-3000:]
    assert "Traceback" not in stderr
    assert STOP_AT <= len(first) < len(ITEMS)
    assert stderr.strip().splitlines() == [
        f"interrupted: {len(first)} calls cached; re-run the same command to resume"]
    assert not (tmp_path / "run" / "summary.json").exists()  # nothing claims to be done

    fake_openai.clear()
    fake_openai.responder = _reply
    again = subprocess.run(_command(fake_openai), cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    second = [r.prompt for r in fake_openai.messages_requests()]
    assert len(first) + len(second) == len(ITEMS)
    assert sorted(first + second) == sorted(set(first + second))  # no item asked twice
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    counts = summary["judge"]["counts"]
    assert (counts["calls_made"], counts["cache_hits"]) == (len(second), len(first))
    assert summary["readings"]["ours"]["n_scored"] == len(ITEMS)
    rows = [json.loads(line) for line in
            (tmp_path / "run" / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["f1_locomo"] for r in rows] == pytest.approx(PER_ITEM)
