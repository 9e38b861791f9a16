"""The benchmark plug-in contract, over every registered benchmark and a tiny one made here.

The tiny benchmark ("tinybench": two question kinds, a layout of its own) is one package
written into the test's folder plus one registry entry; it is claimed by detection and by
``data.format``, accepted by the name check, and run by the command line's dispatch: the
proof of the recipe in docs/development.md, "Adding a benchmark".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE

from locomo_exp.benchmarks import registry
from locomo_exp.benchmarks.names import registry_name_problems
from locomo_exp.benchmarks.plugin import BenchmarkPlugin

TINY_PACKAGE = '''"""tinybench: two question kinds; a file {"tinybench": [{"kind", "ok"}, ...]}."""

from __future__ import annotations

import json
from pathlib import Path

from locomo_exp.benchmarks.file_plugin import FilePlugin, single_data_file
from locomo_exp.benchmarks.plugin import PluginRun

KINDS = ("recall", "update")


class TinyPlugin(FilePlugin):
    """The tiny benchmark's plug-in."""

    def detects(self, path: Path) -> bool:
        """A JSON object whose one key is ``tinybench``."""
        with path.open("rb") as handle:
            return handle.read(16).startswith(b'{"tinybench"')

    def run(self, cfg, output_dir: Path, start_dir: Path) -> PluginRun:
        """Accuracy per kind; one line for a bad record."""
        path = single_data_file(cfg, start_dir)
        rows = json.loads(path.read_text())["tinybench"]
        for i, row in enumerate(rows):
            if row.get("kind") not in KINDS:
                raise ValueError(f"{path}: record {i}: field 'kind' must be one of {KINDS}")
        acc = {k: sum(r["ok"] for r in rows if r["kind"] == k) / sum(r["kind"] == k for r in rows)
               for k in KINDS}
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        (Path(output_dir) / "summary.json").write_text(json.dumps({"accuracy": acc}))
        lines = [f"tinybench {k}: {100 * v:.1f}%" for k, v in acc.items()]
        return PluginRun(console="\\n".join(lines), output_dir=Path(output_dir))


PLUGIN = TinyPlugin("tinybench", "TinyBench")
'''


@pytest.fixture
def tinybench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny package on sys.path and registered: the one line a new benchmark adds."""
    package = tmp_path / "pkgs" / "tinybench"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TINY_PACKAGE)
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.setattr(registry, "PLUGINS", (*registry.PLUGINS, "tinybench"))
    yield package
    sys.modules.pop("tinybench", None)


@pytest.mark.parametrize("plugin", registry.registered(), ids=lambda p: p.name)
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
    assert names == ["longmemeval", "beam", "locomo_plus"]
    assert len(set(names)) == len(names)


def test_a_tiny_benchmark_is_one_package_and_one_registry_line(tinybench, tmp_path, typed_config,
                                                                capsys) -> None:
    from locomo_exp.cli.jobs import run_plugin_from_cli

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps({"tinybench": [
        {"kind": "recall", "ok": 1}, {"kind": "recall", "ok": 0}, {"kind": "update", "ok": 1},
    ]}))
    cfg = typed_config("data=file", f"data.path={data}")  # detected: no option
    plugin = registry.plugin_for(cfg, tmp_path)
    assert plugin is not None and plugin.name == "tinybench"
    assert registry_name_problems(typed_config("data=file", f"data.path={data}",
                                               "data.format=tinybench")) == []
    run_plugin_from_cli(plugin, cfg, tmp_path / "out", tmp_path)
    assert capsys.readouterr().out.splitlines() == [
        "tinybench recall: 50.0%", "tinybench update: 100.0%",
    ]
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == {
        "accuracy": {"recall": 0.5, "update": 1.0}
    }
    # what adding it cost: one package of this many lines, one registry entry
    assert len(TINY_PACKAGE.splitlines()) < 45


def test_a_tiny_benchmarks_bad_record_is_one_error_line(tinybench, tmp_path, typed_config,
                                                         capsys) -> None:
    from locomo_exp.cli.jobs import run_plugin_from_cli

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps({"tinybench": [{"kind": "other", "ok": 1}]}))
    cfg = typed_config("data=file", f"data.path={data}")
    plugin = registry.plugin_for(cfg, tmp_path)
    with pytest.raises(SystemExit) as stop:
        run_plugin_from_cli(plugin, cfg, tmp_path / "out", tmp_path)
    assert stop.value.code == 1
    assert capsys.readouterr().err == (
        f"error: {data}: record 0: field 'kind' must be one of ('recall', 'update')\n"
    )
    assert not (tmp_path / "out").exists()
