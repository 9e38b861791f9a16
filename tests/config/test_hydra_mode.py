"""Hydra's run-mode probe is skipped only where its answer is known (locomo_exp.config.hydra_mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hydra._internal.hydra import Hydra
from hydra._internal.utils import create_config_search_path
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf

from locomo_exp.config import hydra_mode, register_configs
from locomo_exp.config.hydra_mode import mode_is_known_unset, skip_mode_probe_when_known

CONF_DIR = Path(hydra_mode.__file__).resolve().parents[1] / "conf"
JUDGE_OVERRIDES = ["data=zep", "data.path=x.json", "scorer=judge", "judge.runs=2"]


@pytest.mark.parametrize(
    ("config_name", "overrides", "argv", "known"),
    [
        ("config", JUDGE_OVERRIDES, JUDGE_OVERRIDES, True),
        ("config", [], ["-m"], True),
        ("config", ["hydra.mode=MULTIRUN"], ["hydra.mode=MULTIRUN"], False),
        ("config", ["++hydra.mode=RUN"], ["++hydra.mode=RUN"], False),
        ("config", ["hydra/launcher=joblib"], ["-m", "hydra/launcher=joblib"], False),
        ("config", ["hydra.searchpath=[file://x]"], ["hydra.searchpath=[file://x]"], False),
        ("config", [], ["--config-dir", "mine"], False),
        ("config", [], ["-cd=mine"], False),
        ("config", [], ["-cn", "other"], False),
        ("other", [], [], False),
        (None, [], [], False),
    ],
)
def test_known_unset_only_without_a_way_to_set_the_mode(
    config_name: str | None, overrides: list[str], argv: list[str], known: bool
) -> None:
    assert mode_is_known_unset(config_name, overrides, argv) is known


def test_no_packaged_config_file_sets_hydra_mode() -> None:
    files = sorted(CONF_DIR.rglob("*.yaml"))
    assert len(files) > 20
    for path in files:
        cfg = OmegaConf.load(path)
        hydra_node: Any = cfg.get("hydra") if OmegaConf.is_dict(cfg) else None
        assert hydra_node is None or "mode" not in hydra_node, path


@pytest.fixture
def hydra_app() -> Any:
    GlobalHydra.instance().clear()
    register_configs()
    app = Hydra.create_main_hydra2(
        task_name="locomo_exp", config_search_path=create_config_search_path(str(CONF_DIR))
    )
    yield app
    GlobalHydra.instance().clear()


@pytest.fixture
def original_probe(monkeypatch: pytest.MonkeyPatch) -> Any:
    probe = Hydra.get_mode
    monkeypatch.setattr(Hydra, "get_mode", probe)  # restored after the test
    return probe


def test_patched_probe_answers_as_the_composing_one(hydra_app: Any, original_probe: Any) -> None:
    composed_unset = original_probe(hydra_app, "config", JUDGE_OVERRIDES)
    composed_set = original_probe(hydra_app, "config", ["hydra.mode=MULTIRUN"])
    assert composed_unset is None
    assert composed_set == RunMode.MULTIRUN

    skip_mode_probe_when_known(JUDGE_OVERRIDES)
    assert Hydra.get_mode is not original_probe
    assert hydra_app.get_mode("config", JUDGE_OVERRIDES) is None
    assert hydra_app.get_mode("config", ["hydra.mode=MULTIRUN"]) == RunMode.MULTIRUN
    patched = Hydra.get_mode
    skip_mode_probe_when_known(JUDGE_OVERRIDES)  # twice: not wrapped again
    assert Hydra.get_mode is patched


def test_skipped_probe_composes_nothing(
    hydra_app: Any, original_probe: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    composed: list[object] = []
    monkeypatch.setattr(hydra_app, "compose_config", lambda **kw: composed.append(kw))
    skip_mode_probe_when_known(JUDGE_OVERRIDES)
    assert hydra_app.get_mode("config", JUDGE_OVERRIDES) is None
    assert composed == []
