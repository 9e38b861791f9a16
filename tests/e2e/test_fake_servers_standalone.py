"""The fake APIs serve without pytest (trial 4, finding 17) and can drive a template run.

``python tests/fake_anthropic.py`` failed with ``ModuleNotFoundError: No module named
'pytest'`` after the plain install, though docs/judge.md's offline recipe starts it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, clean_env, run_cli

TESTS = PROJECT_ROOT / "tests"

WITHOUT_PYTEST = """
import runpy, sys
sys.modules["pytest"] = None  # import pytest raises ImportError, as after the plain install
sys.path.insert(0, {tests!r})
sys.argv = [{script!r}, "--latency", "0"]
runpy.run_path({script!r}, run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize(("script", "path"), [("fake_anthropic.py", "/v1/messages/batches"),
                                              ("fake_openai.py", "/batches")])
def test_a_fake_serves_without_pytest(script: str, path: str) -> None:
    code = WITHOUT_PYTEST.format(tests=str(TESTS), script=str(TESTS / script))
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()  # printed once it listens
        assert url.startswith("http://127.0.0.1:"), server.stderr.read() if server.stderr else ""
        request = urllib.request.Request(url.rstrip("/") + path, headers={
            "x-api-key": "k", "authorization": "Bearer k", "anthropic-version": "2023-06-01"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 200
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.slow
def test_the_openai_fake_drives_a_template_run_with_a_reply_in_the_templates_format(
    tmp_path: Path,
) -> None:
    """``--reply`` sets the text of every reply: the shipped label template reads
    ``{"label": "CORRECT"}`` (trial 5, finding 15: the default ``{"score": 80}`` reply made
    every template run fail with 16 parse failures)."""
    server = subprocess.Popen(
        [sys.executable, str(TESTS / "fake_openai.py"), "--latency", "0",
         "--reply", '{"label": "CORRECT"}'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        done = run_cli(
            "scorer=judge", "judge=gpt-4o-mini", "judge.protocol=template",
            "judge.template=binary-label-own-words", "judge.runs=1", f"judge.base_url={url}",
            "tracking=none", f"hydra.run.dir={tmp_path}/run",
            cwd=tmp_path, env=clean_env(OPENAI_API_KEY="offline-fake-key"),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        summary = json.loads((tmp_path / "run" / "summary.json").read_text())
        assert summary["judge"]["j"]["overall"]["mean"] == 100.0
        assert summary["judge"]["counts"]["parse_failure"] == 0
    finally:
        server.terminate()
        server.communicate(timeout=30)
