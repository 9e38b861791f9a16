"""Project rule: no module under ``locomo_exp/`` is over 500 lines (docs/development.md)."""

from __future__ import annotations

from pathlib import Path

import locomo_exp

MAX_LINES = 500


def test_no_module_over_500_lines() -> None:
    package = Path(locomo_exp.__file__).parent
    sizes = {
        str(path.relative_to(package)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(package.rglob("*.py"))
    }
    assert len(sizes) > 50  # the package was found, not an empty directory
    too_long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert too_long == {}
