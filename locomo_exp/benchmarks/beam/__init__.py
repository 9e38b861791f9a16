"""BEAM ("Beyond a Million Tokens") as a benchmark plug-in: ``PLUGIN``.

Modules, one concern each:

- :mod:`.abilities`: BEAM's facts; :mod:`.rows`: the typed rows.
- :mod:`.mem0_layout`, :mod:`.authors_layout`, :mod:`.load`: reading the layouts.
- :mod:`.profiles`: the two scoring profiles, rule by rule.
- :mod:`.figures`: figures and cluster intervals; :mod:`.baselines`: published figures.
- :mod:`.summary`: ``summary.json``, ``card.json``, ``scores.jsonl``.
- :mod:`.report`: markdown and console; :mod:`.tracking`: MLflow names; :mod:`.job`: the run.
- :mod:`.compare`: ``mode=compare`` of two BEAM runs.

See docs/beam.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from locomo_exp.benchmarks.beam.abilities import NAME, TITLE
from locomo_exp.benchmarks.file_plugin import FilePlugin
from locomo_exp.benchmarks.plugin import PluginRun

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig


class BeamPlugin(FilePlugin):
    """BEAM's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin` (with ``compare``)."""

    def detects(self, path: Path) -> bool:
        """Whether ``path`` is a BEAM file of a known layout (a look at its first bytes)."""
        from locomo_exp.benchmarks.beam.load import peek_is_beam

        return peek_is_beam(path)

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Score the BEAM answers (:func:`locomo_exp.benchmarks.beam.job.run_beam`)."""
        from locomo_exp.benchmarks.beam.job import run_beam

        result = run_beam(cfg, output_dir, start_dir)
        return PluginRun(console="\n".join(result.console), output_dir=result.output_dir,
                         exit_status=result.exit_status)

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every ``compare.runs`` directory is a BEAM run (``mode=compare``)."""
        from locomo_exp.benchmarks.beam.compare import claims_runs

        return claims_runs(cfg, start_dir)

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare two BEAM runs (:mod:`locomo_exp.benchmarks.beam.compare`)."""
        from locomo_exp.benchmarks.beam.compare import run_beam_compare

        lines = run_beam_compare(cfg, output_dir, start_dir)
        return PluginRun(console="\n".join(lines), output_dir=output_dir)


PLUGIN = BeamPlugin(NAME, TITLE)
"""The plug-in the registry loads."""

__all__ = ["PLUGIN", "BeamPlugin"]
