"""A key on the command line is refused before Hydra writes anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from locomo_exp.cli import key_overrides

SECRET = "sk-test-secret-never-written-0123456789"


@pytest.mark.parametrize(
    "override",
    [f"judge.api_key={SECRET}", f"+judge.api_key={SECRET}", f"++judge.api_key={SECRET}",
     f"+api_key={SECRET}", f"judge.auth_token={SECRET}"],
)
def test_key_overrides_are_refused_without_repeating_the_key(override: str) -> None:
    message = key_overrides(["scorer=judge", override])
    assert message is not None
    assert SECRET not in message
    assert message.startswith(override.split("=", 1)[0] + "=...: an API key is never accepted")


def test_other_overrides_pass() -> None:
    assert key_overrides(["judge.api_key_env=MY_KEY", "judge.model=gpt-4o-mini"]) is None


@pytest.mark.slow
@pytest.mark.parametrize("override", [f"judge.api_key={SECRET}", f"+judge.api_key={SECRET}"])
def test_cli_refuses_a_key_before_hydra_writes_its_config(override: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = run_cli("judge=gpt-4o-mini", "scorer=judge", override, f"hydra.run.dir={run_dir}", "tracking=none",
                     cwd=tmp_path, timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "never accepted on the command line" in lines[0]
    assert SECRET not in result.stdout + result.stderr
    assert not run_dir.exists()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(SECRET not in p.read_text(errors="replace") for p in written)
