"""The benchmark plug-in contract, over every registered benchmark and tinybench.

tinybench (two question kinds, a layout of its own: ``contract/tinybench/``) is one package
plus one registry entry; it is claimed by detection and by ``data.format``, accepted by the
name check, and run by the command line's dispatch: the proof of the recipe in
docs/development.md, "Adding a benchmark". The pipeline's contract over every pipeline
benchmark is :mod:`test_plugin_contract_pipeline`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE
from contract_cases import TINY_DIR, tiny_sample, with_tinybench

from locomo_exp.benchmarks import registry
from locomo_exp.benchmarks.names import registry_name_problems
from locomo_exp.benchmarks.plugin import BenchmarkPlugin


@pytest.fixture
def tinybench(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny package on sys.path and registered: the one line a new benchmark adds."""
    monkeypatch.syspath_prepend(str(TINY_DIR))
    monkeypatch.setattr(registry, "PLUGINS", with_tinybench(registry.PLUGINS))
    return TINY_DIR / "tinybench"


@pytest.mark.parametrize("plugin", registry.registered()[:-1], ids=lambda p: p.name)
def test_every_registered_benchmark_keeps_the_contract(plugin, typed_config) -> None:
    assert isinstance(plugin, BenchmarkPlugin)
    assert plugin.name in plugin.formats and plugin.title
    locomo = typed_config("data=file", f"data.path={EXAMPLE}")
    assert not plugin.claims(locomo, Path.cwd())  # LoCoMo's example is nobody's plug-in input
    named = typed_config("data=file", f"data.path={EXAMPLE}", f"data.format={plugin.name}")
    assert plugin.claims(named, Path.cwd())
    assert registry_name_problems(named) == []


def test_the_registry_order_is_the_detection_order() -> None:
    names = [plugin.name for plugin in registry.registered()]
    assert names == ["longmemeval", "beam", "locomo_plus", "locomo"]
    assert len(set(names)) == len(names)


def test_locomo_the_last_claims_what_no_earlier_benchmark_claims(typed_config, tmp_path) -> None:
    from locomo_exp.data.layouts import LAYOUTS

    locomo = registry.registered()[-1]
    assert isinstance(locomo, BenchmarkPlugin) and (locomo.name, locomo.title) == ("locomo",
                                                                                    "LoCoMo")
    assert locomo.formats == tuple(spec.name for spec in LAYOUTS)  # its layouts name it
    example = typed_config("data=file", f"data.path={EXAMPLE}")
    assert registry.plugin_for(example, tmp_path) is locomo  # detected: no option
    # data.format=auto: whatever no earlier one claims, even a file that is missing (its job
    # refuses it in its own words) or several pooled files
    for overrides in (("data.path=missing.json",), ("data.runs=[a.json,b.json]",),
                      ("data.format=qa_results", f"data.path={EXAMPLE}")):
        cfg = typed_config("data=file", *overrides)
        assert registry.plugin_for(cfg, tmp_path) is locomo, overrides
        assert registry_name_problems(cfg) == []
    # a format another benchmark names is never LoCoMo's
    assert not locomo.claims(typed_config("data=file", f"data.path={EXAMPLE}",
                                          "data.format=beam"), tmp_path)
    with pytest.raises(ValueError) as refused:  # every format listed once
        typed_config("data=file", f"data.path={EXAMPLE}", "data.format=bogus")
    listed = str(refused.value).split("must be one of ")[1].split(", ")
    assert len(listed) == len(set(listed)) and {"auto", "qa_results", "beam"} <= set(listed)


def test_a_tiny_benchmark_is_one_package_and_one_registry_line(tinybench, tmp_path, typed_config,
                                                                capsys) -> None:
    from locomo_exp.cli.jobs import run_plugin_from_cli

    data = tiny_sample(tmp_path / "tiny.json")
    cfg = typed_config("data=file", f"data.path={data}", "tracking=none")  # detected: no option
    plugin = registry.plugin_for(cfg, tmp_path)
    assert plugin is not None and plugin.name == "tinybench"
    assert registry_name_problems(typed_config("data=file", f"data.path={data}",
                                               "data.format=tinybench")) == []
    run_plugin_from_cli(plugin, cfg, tmp_path / "out", tmp_path)
    assert capsys.readouterr().out.splitlines() == [
        "tinybench overall: 80.0%", "tinybench recall: 66.7%", "tinybench update: 100.0%", "",
        f"Report: {tmp_path / 'out' / 'report.md'}",
    ]
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["accuracy"] == {
        "overall": 0.8, "recall": round(2 / 3, 6), "update": 1.0}
    # what adding it cost: one package of two modules, one registry entry
    files = sorted(p.name for p in tinybench.glob("*.py"))
    lines = sum(len(p.read_text().splitlines()) for p in tinybench.glob("*.py"))
    assert files == ["__init__.py", "steps.py"] and lines < 170


def test_a_tiny_benchmarks_bad_record_is_one_error_line(tinybench, tmp_path, typed_config,
                                                         capsys) -> None:
    from locomo_exp.cli.jobs import run_plugin_from_cli

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps({"tinybench": [{"id": "a", "kind": "other", "question": "q",
                                               "answer": "a", "prediction": "p",
                                               "verdict": True}]}))
    cfg = typed_config("data=file", f"data.path={data}", "tracking=none")
    plugin = registry.plugin_for(cfg, tmp_path)
    with pytest.raises(SystemExit) as stop:
        run_plugin_from_cli(plugin, cfg, tmp_path / "out", tmp_path)
    assert stop.value.code == 1
    assert capsys.readouterr().err == (
        f"error: {data}: record [0]: field 'kind': must be one of recall, update\n"
    )
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
