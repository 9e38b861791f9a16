"""BEAM ("Beyond a Million Tokens") as a benchmark plug-in: ``PLUGIN``.

Modules, one concern each:

- :mod:`.abilities`: BEAM's facts; :mod:`.rows`: the typed rows.
- :mod:`.mem0_layout`, :mod:`.authors_layout`, :mod:`.load`: reading the layouts.
- :mod:`.profiles`: the two scoring profiles, rule by rule.
- :mod:`.figures`: figures and cluster intervals; :mod:`.baselines`: published figures.
- :mod:`.summary`: ``summary.json``, ``card.json``, ``scores.jsonl``.
- :mod:`.report`: markdown and console; :mod:`.tracking`: MLflow names; :mod:`.job`: the run.
- :mod:`.compare`: ``mode=compare`` of two BEAM runs.
- :mod:`.sweep_rows`: a sweep's rows, each job against the baseline job, the table.

See docs/beam.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.beam.abilities import NAME, TITLE
from locomo_exp.benchmarks.beam.judge_prompts import NUGGET_ITEM
from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.plugin import PluginRun, Spending
from locomo_exp.benchmarks.steps import JobSteps

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.results.run_log import RunLog


class BeamPlugin(PipelinePlugin):
    """BEAM's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin` (compare and sweep hooks).

    Its job, sweep job and sweep checks are the pipeline's (:class:`PipelinePlugin`).
    """

    def detects(self, path: Path) -> bool:
        """Whether ``path`` is a BEAM file of a known layout (a look at its first bytes)."""
        from locomo_exp.benchmarks.beam.load import peek_is_beam

        return peek_is_beam(path)

    def steps(self) -> JobSteps[Any, Any]:
        """BEAM's pipeline hooks (:data:`locomo_exp.benchmarks.beam.job.STEPS`)."""
        from locomo_exp.benchmarks.beam.job import STEPS

        return STEPS

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every ``compare.runs`` directory is a BEAM run (``mode=compare``)."""
        from locomo_exp.benchmarks.beam.compare import claims_runs

        return claims_runs(cfg, start_dir)

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare two BEAM runs (:mod:`locomo_exp.benchmarks.beam.compare`)."""
        from locomo_exp.benchmarks.beam.compare import run_beam_compare

        lines, body = run_beam_compare(cfg, output_dir, start_dir)
        return PluginRun(console="\n".join(lines), output_dir=output_dir, body=body)

    def sweep_judge_config(self, judge: JudgeConfig) -> JudgeConfig:
        """The item calls' judge under the default ``beam.*`` (:func:`.judged.item_config`).

        A job's own ``beam.profile`` is checked by :meth:`sweep_problems`.
        """
        from locomo_exp.benchmarks.beam.judged import item_config
        from locomo_exp.config import BeamConfig

        return item_config(judge, BeamConfig())

    def run_log(self, summary: Mapping[str, Any]) -> RunLog:
        """The typed run log of its ``summary.json`` (:func:`.run_log.beam_run_log`)."""
        from locomo_exp.benchmarks.beam.run_log import beam_run_log

        return beam_run_log(summary)

    def sweep_row(self, summary: Mapping[str, Any]) -> dict[str, Any] | None:
        """A BEAM run's sweep cells (:func:`.sweep_rows.beam_row_fields`), else ``None``."""
        from locomo_exp.benchmarks.beam.sweep_rows import beam_row_fields, is_beam_summary

        return beam_row_fields(summary) if is_beam_summary(summary) else None

    def owns_sweep_rows(self, rows: list[dict[str, Any]]) -> bool:
        """Whether any row has BEAM's figures (``beam``)."""
        return any(row.get("beam") for row in rows)

    def sweep_vs_baseline(
        self, rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path
    ) -> str:
        """Paired by ``question_id`` as ``mode=compare`` (:func:`.sweep_rows.beam_vs_baseline`)."""
        from locomo_exp.benchmarks.beam.sweep_rows import beam_vs_baseline

        return beam_vs_baseline(rows, base, sweep_dir)

    def sweep_table(self, summary: Mapping[str, Any], spending: Spending) -> list[str]:
        """BEAM's sweep table (:func:`.sweep_rows.beam_table`)."""
        from locomo_exp.benchmarks.beam.sweep_rows import beam_table

        return beam_table(summary, spending)


PLUGIN = BeamPlugin(NAME, TITLE)
"""The plug-in the registry loads."""

JUDGE_PROTOCOLS = (NUGGET_ITEM,)
"""Handed to the judge for its kinds only (``by_name=False``: no ``judge.protocol`` name), so a
template's ``by_kind`` may name each BEAM ability."""

__all__ = ["PLUGIN", "BeamPlugin"]
