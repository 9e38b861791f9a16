"""Issue 26 §1: the generic packages name no benchmark plug-in; each lives in one package.

For every plug-in the registry lists (``benchmarks/registry.py``), greps ``locomo_exp/``
(module names, then the code and config text of ``.py`` and ``.yaml`` files) for its names --
its registry key (``longmemeval``, ``locomo_plus`` also written ``locomo-plus``), its title
(``LoCoMo-Plus``) and the abbreviations below (``lme_``), any case -- outside its package
``locomo_exp/benchmarks/<name>/``. What may stay: the registry's line naming the package, the
Hydra preset ``conf/benchmark/<name>.yaml`` (a config group option, not Python), and the few
lines listed in :data:`ALLOWED_MENTIONS` with the reason; the list can only shrink. LoCoMo,
registered last as the default, is not checked: the project is named after it, and its facts
and layouts are the foundations' (``benchmark/``, ``data/``), read by every layer.

Counts (lines naming a plug-in, files): before issue 26 §1/§5 LongMemEval 105 lines in 31
files, BEAM 20 in 5, LoCoMo-Plus 30 in 7; after: 8 in 2, 18 in 4, 7 in 2 (the registry line
and the preset each; BEAM's typed config node besides).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from locomo_exp.benchmarks.plugin import BenchmarkPlugin
from locomo_exp.benchmarks.registry import PLUGINS, registered

PACKAGE = Path(__file__).resolve().parents[2] / "locomo_exp"

ABBREVIATIONS = {"longmemeval": ("lme_",)}
"""Short names a plug-in's modules and metrics used (``lme_controls``, ``lme_j/overall``)."""

ALLOWED_MENTIONS: dict[tuple[str, str], int] = {
    # BEAM's typed config node (`beam.profile`): the schema and its ConfigStore live in the
    # config layer, below the plug-ins; a plug-in's own config node needs a hook the config
    # layer can call without importing the plug-in (issue 26 §1, "its own typed config node")
    ("beam", "config/schema.py"): 6,
    ("beam", "config/__init__.py"): 4,
}


def _names(plugin: BenchmarkPlugin) -> re.Pattern[str]:
    written = {plugin.name, plugin.title, plugin.name.replace("_", "-"), plugin.name.replace("_", " ")}
    written |= set(ABBREVIATIONS.get(plugin.name, ()))
    return re.compile("|".join(re.escape(w) for w in sorted(written)), re.IGNORECASE)


def _home(plugin: BenchmarkPlugin) -> Path:
    module = next(m for m in PLUGINS if m.rsplit(".", 1)[1] == plugin.name)
    return PACKAGE.parent / Path(*module.split("."))


def _preset(plugin: BenchmarkPlugin) -> str:
    return f"conf/benchmark/{plugin.name}.yaml"


def _outside(home: Path) -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*")
        if p.suffix in (".py", ".yaml") and home not in p.parents and "__pycache__" not in p.parts
    )


def mentions(plugin: BenchmarkPlugin) -> dict[str, int]:
    """Lines naming the plug-in per file outside its package (path relative to locomo_exp/)."""
    name = _names(plugin)
    found = {}
    for path in _outside(_home(plugin)):
        lines = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if name.search(line))
        if lines:
            found[path.relative_to(PACKAGE).as_posix()] = lines
    return found


def allowed(plugin: BenchmarkPlugin) -> dict[str, int | None]:
    """File -> lines allowed to name the plug-in (``None``: any number, the preset)."""
    out: dict[str, int | None] = {"benchmarks/registry.py": 1, _preset(plugin): None}
    out.update({f: n for (p, f), n in ALLOWED_MENTIONS.items() if p == plugin.name})
    return out


DEFAULT = "locomo_exp.benchmarks.locomo"
"""LoCoMo's package: registered last, the default; not checked (see the module's docstring)."""
PLUGIN_IDS = [m.rsplit(".", 1)[1] for m in PLUGINS if m != DEFAULT]


@pytest.fixture(params=PLUGIN_IDS)
def plugin(request: pytest.FixtureRequest) -> BenchmarkPlugin:
    return {p.name: p for p in registered()}[request.param]


def test_every_registered_plugin_is_checked() -> None:
    assert PLUGINS[-1] == DEFAULT
    assert sorted(PLUGIN_IDS) == sorted(p.name for p in registered()[:-1]) == [
        "beam", "locomo_plus", "longmemeval"
    ]
    assert {key[0] for key in ALLOWED_MENTIONS} <= set(PLUGIN_IDS)


def test_no_module_named_for_a_plugin_outside_its_package(plugin: BenchmarkPlugin) -> None:
    name = _names(plugin)
    named = [p.relative_to(PACKAGE).as_posix() for p in _outside(_home(plugin)) if name.search(p.name)]
    assert named == [_preset(plugin)]


def test_no_new_mention_outside_its_package(plugin: BenchmarkPlugin) -> None:
    found = mentions(plugin)
    limits = allowed(plugin)
    over = {f: (n, limits.get(f, 0)) for f, n in found.items()
            if f not in limits or (limits[f] is not None and n > limits[f])}
    assert over == {}, f"file: (lines now, allowed); move it to benchmarks/{plugin.name}/: {over}"
    print(f"{plugin.name}: {sum(found.values())} lines in {len(found)} files outside its package")


def test_the_allow_list_is_not_stale(plugin: BenchmarkPlugin) -> None:
    # a mention removed shrinks the list: lower the count (or drop the file) with it
    found = mentions(plugin)
    stale = {f: (found.get(f, 0), n) for f, n in allowed(plugin).items()
             if n is not None and found.get(f, 0) < n}
    assert stale == {}
    assert _preset(plugin) in found  # the preset exists and is the plug-in's


def test_the_after_counts_of_the_module_docstring() -> None:
    counts = {p.name: (sum(mentions(p).values()), len(mentions(p))) for p in registered()[:-1]}
    assert counts == {"longmemeval": (8, 2), "beam": (18, 4), "locomo_plus": (7, 2)}


def test_the_plugin_packages_hold_their_facts_and_protocols() -> None:
    lme = {p.name for p in (PACKAGE / "benchmarks" / "longmemeval").glob("*.py")}
    assert {"__init__.py", "facts.py", "protocol.py", "answers.py", "reference.py", "scoring.py",
            "checks.py", "controls.py", "dry_run.py", "report.py", "summary.py", "baselines.py",
            "compare.py", "compare_job.py", "tracking.py", "job.py", "sweep_rows.py"} <= lme
    assert not [name for name in lme if name.startswith("lme_")]
    assert (PACKAGE / "benchmarks" / "locomo_plus" / "protocol.py").is_file()


def test_the_judge_lists_only_its_own_protocols_and_the_registry_hands_in_the_plugins() -> None:
    from locomo_exp.benchmarks.registry import plugin_protocols
    from locomo_exp.judge.protocols import PROTOCOLS

    assert sorted(PROTOCOLS) == ["binary", "rubric"]
    named = [p.name for p in plugin_protocols() if p.by_name]
    assert named == ["longmemeval", "locomo_plus"]
    # BEAM's item prompt is handed in for its kinds only (a template's by_kind), not as a name
    assert [p.name for p in plugin_protocols() if not p.by_name] == ["beam-nugget-item"]


def test_the_registry_lists_longmemeval_first() -> None:
    assert PLUGINS[0] == "locomo_exp.benchmarks.longmemeval"
    assert registered()[0].name == "longmemeval"
    assert "longmemeval" in registered()[0].formats
