"""No import cycle, no exception: config/ imports no registry; names are checked where resolved.

Issue 26, item 5: the layers and acyclic contracts in ``pyproject.toml`` hold with no
``ignore_imports``; ``f1.variant``'s choices come from the ``conf/f1`` presets, and
``judge.protocol`` / ``data.format`` are checked by the protocol and layout registries
(:func:`locomo_exp.benchmarks.names.registry_name_problems`), which the command line and the sweep
pass to :func:`locomo_exp.config.to_experiment_config`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from conftest import CONF_DIR, PROJECT_ROOT, Composer
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from locomo_exp import sweep
from locomo_exp.benchmarks.names import registry_name_problems
from locomo_exp.config import ConfigValueError, register_configs, to_experiment_config
from locomo_exp.config.schema import f1_preset_variants

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, published as tomli
    tomllib = pytest.importorskip("tomli")

PYPROJECT = PROJECT_ROOT / "pyproject.toml"
CONFIG_PACKAGE = PROJECT_ROOT / "locomo_exp" / "config"
BELOW_CONFIG = ("locomo_exp.config", "locomo_exp.benchmark", "locomo_exp.results", "locomo_exp.stats")


def _contracts() -> list[dict[str, object]]:
    with PYPROJECT.open("rb") as file:
        linter = tomllib.load(file)["tool"]["importlinter"]
    assert linter["exclude_type_checking_imports"] is False  # annotations count too
    contracts: list[dict[str, object]] = linter["contracts"]
    return contracts


def test_no_import_linter_contract_has_an_ignore_imports_exception() -> None:
    contracts = _contracts()
    assert {c["type"] for c in contracts} >= {"layers", "acyclic_siblings"}
    assert [c["name"] for c in contracts if "ignore_imports" in c] == []


def _package_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("locomo_exp")}


@pytest.mark.parametrize("path", sorted(CONFIG_PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_config_modules_import_only_config_and_the_foundations(path: Path) -> None:
    # anywhere in the module: at the top, inside functions and under TYPE_CHECKING
    above = sorted(m for m in _package_imports(path) if not m.startswith(BELOW_CONFIG))
    assert above == [], f"{path.name} imports {above}"


def test_f1_variant_choices_are_the_variants_the_presets_select(tmp_path: Path) -> None:
    assert f1_preset_variants() == ["locomo", "mem0", "squad"]
    (tmp_path / "squad.yaml").write_text("variant: squad\nbleu1: true\n")
    (tmp_path / "squad_no_bleu.yaml").write_text("variant: squad\nbleu1: false\n")  # once
    (tmp_path / "dummy.yaml").write_text("variant: dummy\n")
    (tmp_path / "bleu_only.yaml").write_text("bleu1: false\n")  # selects no variant
    assert f1_preset_variants(tmp_path) == ["dummy", "squad"]


def _untyped(*overrides: str) -> object:
    register_configs()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
            return compose(config_name="config", overrides=list(overrides))
    finally:
        GlobalHydra.instance().clear()


def test_config_alone_leaves_registry_names_to_the_code_that_resolves_them() -> None:
    cfg = _untyped("judge.protocol=likert", "data.format=xml")
    typed = to_experiment_config(cfg)  # type: ignore[arg-type]
    assert (typed.judge.protocol, typed.data.format) == ("likert", "xml")
    with pytest.raises(ConfigValueError) as refused:
        to_experiment_config(cfg, registry_name_problems)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "data.format=xml must be one of auto, qa_results, locomo, mem0, fields, longmemeval, "
        "beam, locomo_plus; "
        "judge.protocol: unknown judge protocol 'likert'. "
        "Available: binary, locomo_plus, longmemeval, rubric, template"
    )


def test_registry_names_come_first_then_the_ranges_in_one_line(typed_config: Composer) -> None:
    with pytest.raises(ConfigValueError) as refused:
        typed_config("judge.protocol=likert", "judge.runs=101")
    assert str(refused.value) == (
        "judge.protocol: unknown judge protocol 'likert'. "
        "Available: binary, locomo_plus, longmemeval, rubric, template; "
        "judge.runs=101 must be between 1 and 100"
    )


def test_registry_names_of_a_valid_config_have_no_problem(typed_config: Composer) -> None:
    assert registry_name_problems(typed_config("judge.protocol=binary", "data.format=mem0")) == []


def test_a_sweep_job_with_an_unknown_protocol_is_refused_when_composed() -> None:
    register_configs()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
            master = compose(config_name="config", return_hydra_config=True)
            with pytest.raises(ConfigValueError) as refused:
                sweep.compose_job(master, ["baselines.mem0_paper_j.j_protocol=likert"], 1)
    finally:
        GlobalHydra.instance().clear()
    assert str(refused.value) == (
        "baselines.mem0_paper_j.j_protocol: unknown judge protocol 'likert'. "
        "Available: binary, locomo_plus, longmemeval, rubric, template"
    )
