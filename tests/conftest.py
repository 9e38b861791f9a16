"""Shared fixtures: paths to the project, its fixtures and the shared real LoCoMo data."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` (real public LoCoMo files); skips the test when it is absent."""
    if not (SHARED_DATA / "predictions").is_dir():
        pytest.skip(f"real LoCoMo data not found at {SHARED_DATA} (read-only shared/ folder)")
    return SHARED_DATA


@pytest.fixture
def fixtures_dir() -> Path:
    """The project's own small input files."""
    return FIXTURES


from fake_anthropic import fake_anthropic  # noqa: E402,F401  (fixture registration)
