"""Benchmarks as plug-ins: one package per benchmark, one registry, detection in order.

A benchmark is one package under ``locomo_exp/benchmarks/<name>/`` exposing a
:class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin` and one line in
:mod:`~locomo_exp.benchmarks.registry`. The command line, the sweep and ``mode=compare`` ask
:func:`plugin_for` (:func:`compare_plugin_for`) which registered benchmark claims the job's
input (an explicit ``data.format`` first, then each plug-in's detection, in registry order);
LoCoMo (:mod:`~locomo_exp.benchmarks.locomo`), registered last, claims what no other does.
See docs/development.md, "Adding a benchmark".
"""

from __future__ import annotations

from locomo_exp.benchmarks.plugin import BenchmarkPlugin, ComparePlugin, PluginRun
from locomo_exp.benchmarks.registry import PLUGINS, compare_plugin_for, get_plugin, plugin_for

__all__ = ["PLUGINS", "BenchmarkPlugin", "ComparePlugin", "PluginRun", "compare_plugin_for",
           "get_plugin", "plugin_for"]
