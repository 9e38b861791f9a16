"""LoCoMo-Plus (LoCoMo plus the Cognitive items) as a benchmark plug-in: ``PLUGIN``.

Modules, one concern each: :mod:`.facts` (categories, relation types, label map),
:mod:`.parsing` (our parser and the authors'), :mod:`.unified` (the 2,387-item set as the
authors build it), :mod:`.runs` (reading stored runs of both layouts), :mod:`.figures`
(overall, per category and relation, factual averages, gap, intervals), :mod:`.summary`
(``summary.json``, ``card.json``, ``scores.jsonl``), :mod:`.report` (markdown and console),
:mod:`.tracking` (MLflow names), :mod:`.job` (the run), :mod:`.compare` (``mode=compare``),
:mod:`.sweep_rows` (a sweep's rows, pairing and table). See docs/locomo_plus.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.locomo_plus.facts import NAME, TITLE
from locomo_exp.benchmarks.locomo_plus.protocol import LOCOMO_PLUS
from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.plugin import PluginRun, Spending
from locomo_exp.benchmarks.steps import JobSteps

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.results.run_log import RunLog


class LocomoPlusPlugin(PipelinePlugin):
    """LoCoMo-Plus's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin`, ``compare``, sweep.

    Its sweep hooks are :class:`~locomo_exp.benchmarks.plugin.SweepPlugin`'s; its job, sweep job
    and sweep checks are the pipeline's (:class:`PipelinePlugin`).
    """

    def detects(self, path: Path) -> bool:
        """Whether ``path`` is a LoCoMo-Plus run of either stored layout (its first bytes)."""
        from locomo_exp.benchmarks.locomo_plus.runs import peek_layout

        return peek_layout(path) is not None

    def steps(self) -> JobSteps[Any, Any]:
        """LoCoMo-Plus's pipeline hooks (:data:`locomo_exp.benchmarks.locomo_plus.job.STEPS`)."""
        from locomo_exp.benchmarks.locomo_plus.job import STEPS

        return STEPS

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every ``compare.runs`` directory is a LoCoMo-Plus run (``mode=compare``)."""
        from locomo_exp.benchmarks.locomo_plus.compare import claims_runs

        return claims_runs(cfg, start_dir)

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare two LoCoMo-Plus runs (:mod:`locomo_exp.benchmarks.locomo_plus.compare`)."""
        from locomo_exp.benchmarks.locomo_plus.compare import run_plus_compare

        lines, body = run_plus_compare(cfg, output_dir, start_dir)
        return PluginRun(console="\n".join(lines), output_dir=output_dir, body=body)

    def sweep_judge_config(self, judge: JudgeConfig) -> JudgeConfig:
        """The judge with every LoCoMo-Plus category judged (:func:`.judged.judge_config`)."""
        from locomo_exp.benchmarks.locomo_plus.judged import judge_config

        return judge_config(judge)

    def run_log(self, summary: Mapping[str, Any]) -> RunLog:
        """The typed run log of its ``summary.json`` (:func:`.run_log.plus_run_log`)."""
        from locomo_exp.benchmarks.locomo_plus.run_log import plus_run_log

        return plus_run_log(summary)

    def sweep_row(self, summary: Mapping[str, Any]) -> dict[str, Any] | None:
        """A LoCoMo-Plus run's sweep cells (:func:`.sweep_rows.plus_row_fields`), else ``None``."""
        from locomo_exp.benchmarks.locomo_plus.sweep_rows import is_plus_summary, plus_row_fields

        return plus_row_fields(summary) if is_plus_summary(summary) else None

    def owns_sweep_rows(self, rows: list[dict[str, Any]]) -> bool:
        """Whether any row has LoCoMo-Plus's figures (``plus``)."""
        return any(row.get("plus") for row in rows)

    def sweep_vs_baseline(
        self, rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path
    ) -> str:
        """Paired by ``item_id`` as ``mode=compare`` (:func:`.sweep_rows.plus_vs_baseline`)."""
        from locomo_exp.benchmarks.locomo_plus.sweep_rows import plus_vs_baseline

        return plus_vs_baseline(rows, base, sweep_dir)

    def sweep_table(self, summary: Mapping[str, Any], spending: Spending) -> list[str]:
        """LoCoMo-Plus's sweep table (:func:`.sweep_rows.plus_table`)."""
        from locomo_exp.benchmarks.locomo_plus.sweep_rows import plus_table

        return plus_table(summary, spending)


PLUGIN = LocomoPlusPlugin(NAME, TITLE)
"""The plug-in the registry loads."""

JUDGE_PROTOCOLS = (LOCOMO_PLUS,)
"""The judge protocols this benchmark brings (``judge.protocol=locomo_plus``)."""

__all__ = ["PLUGIN", "LocomoPlusPlugin"]
