"""Shared fixtures: paths to the project, its fixtures and the shared real LoCoMo data."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from locomo_exp.config import ExperimentConfig, register_configs, to_experiment_config

PROJECT_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"
CONF_DIR = PROJECT_ROOT / "locomo_exp" / "conf"

Composer = Callable[..., ExperimentConfig]
"""``compose(*overrides) -> ExperimentConfig`` (the :func:`typed_config` fixture)."""


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


@pytest.fixture
def typed_config() -> Iterator[Composer]:
    """Compose ``locomo_exp/conf/config.yaml`` with overrides and return the typed config."""
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):

        def _compose(*overrides: str) -> ExperimentConfig:
            return to_experiment_config(compose(config_name="config", overrides=list(overrides)))

        yield _compose
    GlobalHydra.instance().clear()


from fake_anthropic import fake_anthropic  # noqa: E402,F401  (fixture registration)
from fake_openai import fake_openai  # noqa: E402,F401  (fixture registration)
