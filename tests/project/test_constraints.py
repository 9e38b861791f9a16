"""The test command installs the versions the suite was last run against (``constraints.txt``).

A fresh machine would otherwise resolve the newest versions inside ``pyproject.toml``'s ranges
and test a combination nobody has run (issue 27 §5: anthropic 2.17.0 with aiohttp 3.14.5 changed
the SDK's connection-error text). The file is refreshed on purpose (docs/development.md).
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)$")
INSTALL = "pip install -q -c constraints.txt -e '.[test]'"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for number, line in enumerate(CONSTRAINTS.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        match = PIN.match(line.strip())
        assert match, f"constraints.txt:{number}: not 'name==version': {line!r}"
        pins[_canonical(match["name"])] = match["version"]
    return pins


def test_every_line_pins_one_exact_version_and_no_project_itself() -> None:
    pins = _pins()
    assert len(pins) >= 50  # the whole environment, not only the direct dependencies
    assert "locomo-exp" not in pins  # the project is the editable install, never pinned


def test_every_direct_dependency_of_the_test_install_is_pinned() -> None:
    pins = _pins()
    requirements = importlib.metadata.requires("locomo_exp") or []
    wanted = {
        _canonical(re.split(r"[\[<>=!~;\s]", requirement, maxsplit=1)[0])
        for requirement in requirements
        if "extra ==" not in requirement or 'extra == "test"' in requirement
    }
    assert {"anthropic", "aiohttp", "openai", "pytest", "mlflow"} <= wanted | {"aiohttp"}
    missing = sorted(name for name in wanted | {"aiohttp"} if name not in pins)
    assert missing == []


def test_readme_and_ci_install_with_the_constraints() -> None:
    ci_line = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert INSTALL in ci_line
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert ci_line in readme
    assert "constraints.txt" in (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
