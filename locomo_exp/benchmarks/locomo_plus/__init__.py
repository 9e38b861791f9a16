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

from locomo_exp.benchmarks.locomo_plus.facts import NAME, TITLE
from locomo_exp.benchmarks.plugin import PluginRun

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig


class LocomoPlusPlugin:
    """LoCoMo-Plus's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin`."""

    @property
    def name(self) -> str:
        """``locomo_plus``."""
        return NAME

    @property
    def title(self) -> str:
        """``LoCoMo-Plus``."""
        return TITLE

    @property
    def formats(self) -> tuple[str, ...]:
        """``data.format=locomo_plus``."""
        return (NAME,)

    def claims(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether the job's input is a LoCoMo-Plus run.

        True for ``data.format=locomo_plus``, or (``auto``) when the one ``data.path`` is a
        stored LoCoMo-Plus run of either layout (a look at its first bytes).

        Never raises: an unreadable file is not claimed.
        """
        from locomo_exp.benchmarks.locomo_plus.job import data_file
        from locomo_exp.benchmarks.locomo_plus.runs import peek_layout

        fmt = str(cfg.data.format)
        if fmt in self.formats:
            return True
        if fmt != "auto":
            return False
        path = data_file(cfg, start_dir)
        return path is not None and peek_layout(path) is not None

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


PLUGIN = LocomoPlusPlugin()
"""The plug-in the registry loads."""

__all__ = ["PLUGIN", "LocomoPlusPlugin"]
