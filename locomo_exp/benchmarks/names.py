"""Names a config gives that only a registry can check: protocols, layouts, benchmark formats.

The config layer imports no registry (docs/development.md, "Architecture"): the command line
and the sweep pass :func:`registry_name_problems` to
:func:`locomo_exp.config.to_experiment_config`, so an unknown name is still one line before
any work, any write and any call.
"""

from __future__ import annotations

from locomo_exp.config import ExperimentConfig


def registry_name_problems(cfg: ExperimentConfig) -> list[str]:
    """Names of a config that no registry knows, checked before any work.

    Each name is checked by the layer that resolves it: ``data.format`` by the layout
    registry (:func:`locomo_exp.data.layouts.format_problems`) or, for a format a benchmark
    plug-in names (``formats``), by the plug-in registry; ``judge.protocol`` and the
    baselines' protocols by :func:`locomo_exp.judge.protocols.protocol_name_problems`, told
    the names of the protocols the plug-ins bring
    (:func:`locomo_exp.benchmarks.registry.plugin_protocols`).

    Args:
        cfg: the typed config.

    Returns:
        One line per unknown name (empty when all are known).
    """
    from locomo_exp.benchmarks.registry import plugin_protocols, registered
    from locomo_exp.data.layouts import FORMATS, format_problems
    from locomo_exp.judge.protocols import protocol_name_problems  # loads no SDK

    fmt = str(cfg.data.format)
    plugin_formats = [name for plugin in registered() for name in plugin.formats]
    problems = [] if fmt in plugin_formats else format_problems(fmt)
    if problems and plugin_formats:
        known = ", ".join(dict.fromkeys([*FORMATS, *plugin_formats]))  # LoCoMo's: the layouts
        problems = [f"data.format={fmt} must be one of {known}"]
    return problems + protocol_name_problems(cfg, [p.name for p in plugin_protocols() if p.by_name])
