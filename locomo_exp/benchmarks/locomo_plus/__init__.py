"""LoCoMo-Plus (LoCoMo plus the Cognitive items) as a benchmark plug-in: ``PLUGIN``.

Modules, one concern each: :mod:`.facts` (categories, relation types, label map),
:mod:`.parsing` (our parser and the authors'), :mod:`.unified` (the 2,387-item set as the
authors build it), :mod:`.runs` (reading stored runs of both layouts), :mod:`.figures`
(overall, per category and relation, factual averages, gap, intervals), :mod:`.summary`
(``summary.json``, ``card.json``, ``scores.jsonl``), :mod:`.report` (markdown and console),
:mod:`.tracking` (MLflow names), :mod:`.job` (the run). See docs/locomo_plus.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from locomo_exp.benchmarks.file_plugin import FilePlugin
from locomo_exp.benchmarks.locomo_plus.facts import NAME, TITLE
from locomo_exp.benchmarks.plugin import PluginRun

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig


class LocomoPlusPlugin(FilePlugin):
    """LoCoMo-Plus's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin` (with ``compare``)."""

    def detects(self, path: Path) -> bool:
        """Whether ``path`` is a LoCoMo-Plus run of either stored layout (its first bytes)."""
        from locomo_exp.benchmarks.locomo_plus.runs import peek_layout

        return peek_layout(path) is not None

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Score the stored run (:func:`locomo_exp.benchmarks.locomo_plus.job.run_locomo_plus`)."""
        from locomo_exp.benchmarks.locomo_plus.job import run_locomo_plus

        result = run_locomo_plus(cfg, output_dir, start_dir)
        return PluginRun(console="\n".join(result.console), output_dir=result.output_dir)

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every ``compare.runs`` directory is a LoCoMo-Plus run (``mode=compare``)."""
        from locomo_exp.benchmarks.locomo_plus.compare import claims_runs

        return claims_runs(cfg, start_dir)

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare two LoCoMo-Plus runs (:mod:`locomo_exp.benchmarks.locomo_plus.compare`)."""
        from locomo_exp.benchmarks.locomo_plus.compare import run_plus_compare

        lines = run_plus_compare(cfg, output_dir, start_dir)
        return PluginRun(console="\n".join(lines), output_dir=output_dir)


PLUGIN = LocomoPlusPlugin(NAME, TITLE)
"""The plug-in the registry loads."""

__all__ = ["PLUGIN", "LocomoPlusPlugin"]
