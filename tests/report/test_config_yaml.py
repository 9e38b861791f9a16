"""``config.yaml`` is what OmegaConf writes for the typed config, made without its node tree."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from locomo_exp.report.config_text import config_yaml


@pytest.mark.parametrize("overrides", [
    ("data=file", "data.path=/x.json"),
    ("data=file", "data.path=/x.json", "benchmark=beam", "scorer=judge"),
    ("data=file", "data.path=/x.json", "benchmark=longmemeval", "judge=gpt-4o", "scorer=judge"),
    ("data=file", "data.path=/x.json", "judge.parser=authors", "judge.runs=3"),
    ("data=zep", "data.path=/x.json", "tracking.run_name='a: b #d ü'", "tracking.experiment='1.5'",
     "judge.base_url=http://127.0.0.1:9/v1", "tracking.run_name=off"),
], ids=["locomo", "beam", "longmemeval", "parser", "strings"])
def test_config_yaml_is_omegaconfs_text(typed_config, overrides) -> None:
    cfg = typed_config(*overrides)
    assert config_yaml(cfg) == OmegaConf.to_yaml(OmegaConf.structured(cfg))
