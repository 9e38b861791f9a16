"""The fake APIs serve without pytest (trial 4, finding 17).

``python tests/fake_anthropic.py`` failed with ``ModuleNotFoundError: No module named
'pytest'`` after the plain install, though docs/judge.md's offline recipe starts it.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request

import pytest
from conftest import PROJECT_ROOT

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
