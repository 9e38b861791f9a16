"""The registry of benchmark plug-ins: the only list of them, in detection order.

Adding a benchmark: one package under ``locomo_exp/benchmarks/<name>/`` whose ``PLUGIN`` is a
:class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin` (and, optionally, ``JUDGE_PROTOCOLS``:
the judge protocols it brings), and one entry in :data:`PLUGINS`, before LoCoMo's.
LoCoMo is registered last: the default, it claims whatever no earlier benchmark claims (its
layouts, ``data.format=auto``, runs to compare). Plug-in packages are imported when a job is
dispatched, never by ``--help``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.plugin import (
    BenchmarkPlugin,
    ComparePlugin,
    RunLogPlugin,
    SweepPlugin,
)

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig
    from locomo_exp.judge.protocols import ProtocolSpec
    from locomo_exp.results.run_log import RunLog

PLUGINS: tuple[str, ...] = (
    "locomo_exp.benchmarks.longmemeval",
    "locomo_exp.benchmarks.beam",
    "locomo_exp.benchmarks.locomo_plus",
    "locomo_exp.benchmarks.locomo",
)
"""Module paths of the registered plug-in packages, in detection order (each has ``PLUGIN``);
LoCoMo, the default that claims the rest, is the last."""


def _load(module: str) -> BenchmarkPlugin:
    plugin = importlib.import_module(module).PLUGIN
    if not isinstance(plugin, BenchmarkPlugin):  # pragma: no cover - a registration mistake
        raise TypeError(f"{module}.PLUGIN is not a BenchmarkPlugin")
    return plugin


def registered() -> list[BenchmarkPlugin]:
    """Every registered plug-in, loaded, in detection order."""
    return [_load(module) for module in PLUGINS]


def plugin_protocols() -> tuple[ProtocolSpec, ...]:
    """The judge protocols the registered plug-ins bring (each package's ``JUDGE_PROTOCOLS``).

    The judge, below this layer, never imports a plug-in: :func:`protocols_in_use` hands it
    these, and :func:`locomo_exp.benchmarks.names.registry_name_problems` checks
    ``judge.protocol`` against their names.
    """
    return tuple(
        spec for module in PLUGINS for spec in getattr(importlib.import_module(module),
                                                        "JUDGE_PROTOCOLS", ())
    )


@contextmanager
def protocols_in_use() -> Iterator[None]:
    """Inside the block, the judge resolves every registered plug-in's protocol by name.

    The command line and the sweep run each job inside it
    (:func:`locomo_exp.judge.protocols.plugged_protocols`), so a plug-in's
    ``judge.protocol=<name>`` reaches the judge as a spec, not as a name the judge's own
    registry must list. A plug-in's ``run`` hands in its own as well (in-process callers).
    """
    from locomo_exp.judge.protocols import plugged_protocols

    with plugged_protocols(plugin_protocols()):
        yield


def get_plugin(name: str) -> BenchmarkPlugin:
    """The plug-in registered as ``name``.

    Raises:
        ValueError: no plug-in has that name (the message lists the available ones).
    """
    plugins = {plugin.name: plugin for plugin in registered()}
    if name not in plugins:
        available = ", ".join(sorted(plugins)) or "none"
        raise ValueError(f"unknown benchmark plug-in {name!r}. Available: {available}")
    return plugins[name]


def plugin_for(cfg: ExperimentConfig, start_dir: Path) -> BenchmarkPlugin:
    """The plug-in that claims the job's input.

    Each registered plug-in is asked in order (:meth:`BenchmarkPlugin.claims`); the first
    that claims the input runs the job. LoCoMo, the last, claims what no other does.

    Args:
        cfg: the typed config.
        start_dir: the directory relative paths are resolved against.

    Raises:
        LookupError: no registered benchmark claims it (a registry without its default).
    """
    for plugin in registered():
        if plugin.claims(cfg, start_dir):
            return plugin
    raise LookupError(f"no registered benchmark claims data.format={cfg.data.format}")


def compare_plugin_for(cfg: ExperimentConfig, start_dir: Path) -> ComparePlugin:
    """The plug-in that claims the runs of ``compare.runs`` (``mode=compare``).

    Only plug-ins with the optional hook (:class:`~locomo_exp.benchmarks.plugin.ComparePlugin`)
    are asked, in registry order; LoCoMo, the last, claims any runs no other does.

    Args:
        cfg: the typed config.
        start_dir: the directory relative run paths are resolved against.

    Raises:
        LookupError: no registered benchmark claims them (a registry without its default).
    """
    for plugin in registered():
        if isinstance(plugin, ComparePlugin) and plugin.claims_runs(cfg, start_dir):
            return plugin
    raise LookupError("no registered benchmark compares these runs")


def sweep_plugins() -> list[SweepPlugin]:
    """The registered plug-ins that have the sweep hooks (:class:`SweepPlugin`), in order."""
    return [plugin for plugin in registered() if isinstance(plugin, SweepPlugin)]


def sweep_row_fields(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """A job's sweep row cells from the plug-in whose run ``summary`` is, else ``None``."""
    for plugin in sweep_plugins():
        fields = plugin.sweep_row(summary)
        if fields is not None:
            return fields
    return None


def sweep_plugin_for_rows(rows: list[dict[str, Any]]) -> SweepPlugin | None:
    """The plug-in whose sweep rows these are, or ``None`` for a LoCoMo sweep."""
    for plugin in sweep_plugins():
        if plugin.owns_sweep_rows(rows):
            return plugin
    return None


def run_log_of(summary: Mapping[str, Any], source: str) -> RunLog:
    """The typed run log of any benchmark's ``summary.json`` (docs/run_log.md).

    A file of ``schema_version`` 2 holds it (``run_log``, checked against the model); a
    version-1 file, written before it, is read by building the log from its own sections:
    the plug-in whose name its ``benchmark`` is (:class:`~.plugin.RunLogPlugin`), else
    LoCoMo's (:func:`locomo_exp.results.locomo_log.locomo_run_log`).

    Args:
        summary: the parsed ``summary.json``.
        source: the file, named in every message.

    Returns:
        The :class:`~locomo_exp.results.run_log.RunLog`.

    Raises:
        ValueError: one line naming the file: a newer ``schema_version``, a section that
            does not match the schema, or a version-1 file missing a section its log needs.
    """
    from locomo_exp.results.run_log import read_run_log

    found = read_run_log(summary, source)
    if found is not None:
        return found
    name = summary.get("benchmark")
    try:
        for plugin in registered():
            if isinstance(plugin, RunLogPlugin) and plugin.name == name:
                return plugin.run_log(summary)
        from locomo_exp.results import RunSummary
        from locomo_exp.results.locomo_log import locomo_run_log

        return locomo_run_log(RunSummary.from_json(summary))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{source}: summary.json schema_version 1 of benchmark "
                         f"{name or 'locomo'}: cannot read it ({type(error).__name__}: "
                         f"{error}); re-run the job with this locomo_exp") from None
