"""LongMemEval as a benchmark plug-in: ``PLUGIN``.

Modules, one concern each: :mod:`.detect` (is a job LongMemEval's: ``data.format`` or a
look at the answer file), :mod:`.answers` (the ``{question_id, hypothesis}`` rows and their
stored verdicts), :mod:`.reference` (the dataset file, streamed), :mod:`.scoring` (overall,
task-averaged, abstention accuracy), :mod:`.controls` (the audit's controls),
:mod:`.checks` (the judge's checks on a run), :mod:`.dry_run` (the whole run's calls and
spend), :mod:`.summary` (``summary.json``, ``card.json``, ``scores.jsonl``), :mod:`.report`
(markdown and console), :mod:`.baselines` (published figures), :mod:`.tracking` (MLflow
names), :mod:`.job` (the run), :mod:`.compare`, :mod:`.compare_report` and
:mod:`.compare_job` (``mode=compare``), :mod:`.sweep_rows` (a sweep's rows and table).

The benchmark's facts (question types, sizes, variants, its
:class:`~locomo_exp.benchmark.BenchmarkSpec`) are :mod:`.facts`, its judge protocol
(``judge.protocol=longmemeval``) :mod:`.protocol`, handed to the judge by the registry
(:data:`JUDGE_PROTOCOLS`). See docs/longmemeval.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.file_plugin import FilePlugin
from locomo_exp.benchmarks.longmemeval.protocol import LONGMEMEVAL as _PROTOCOL
from locomo_exp.benchmarks.plugin import PluginRun, Spending, SweepJobRun

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.results.run_log import RunLog

NAME = "longmemeval"
"""The registry key, ``benchmark=longmemeval`` and ``data.format=longmemeval``."""

TITLE = "LongMemEval"
"""The benchmark's name as reports print it."""


class LongMemEvalPlugin(FilePlugin):
    """LongMemEval's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin` (with ``compare``)."""

    def claims(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether the job is a LongMemEval one (:func:`.detect.is_longmemeval`).

        Never raises: an unreadable file is not claimed.
        """
        from locomo_exp.benchmarks.longmemeval.detect import is_longmemeval

        return is_longmemeval(cfg, start_dir)

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Score the answer file (:func:`locomo_exp.benchmarks.longmemeval.job.run_longmemeval`).

        A judge whose batches are still processing (``judge.batch.wait=false``) is not a
        failure: the console says where the outputs so far are, exit status 0. The judge gets
        this benchmark's protocol (:data:`JUDGE_PROTOCOLS`) handed in for the run.
        """
        from locomo_exp.benchmarks.longmemeval.console import console_text
        from locomo_exp.benchmarks.longmemeval.job import run_longmemeval
        from locomo_exp.judge.protocols import plugged_protocols
        from locomo_exp.llm.errors import JudgeBatchPending

        try:
            with plugged_protocols(JUDGE_PROTOCOLS):
                result = run_longmemeval(cfg, output_dir, start_dir)
        except JudgeBatchPending as waiting:
            return PluginRun(
                console=f"Outputs so far (no J yet): {output_dir}\n{waiting}",
                output_dir=Path(output_dir),
            )
        return PluginRun(console=console_text(result), output_dir=result.output_dir)

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every ``compare.runs`` directory is a LongMemEval run (``mode=compare``).

        Never raises: a directory that cannot be read is not claimed.
        """
        from locomo_exp.benchmarks.longmemeval.compare_job import lme_run_dirs

        try:
            return lme_run_dirs(cfg.compare, start_dir) is not None
        except (ValueError, OSError):
            return False

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare LongMemEval runs, paired by ``question_id`` (:mod:`.compare_job`)."""
        from locomo_exp.benchmarks.longmemeval.compare_job import compare_from_config

        return PluginRun(
            console=compare_from_config(cfg, output_dir, start_dir), output_dir=output_dir
        )

    def sweep_problems(self, cfg: ExperimentConfig, start_dir: Path) -> list[str]:
        """A job's settings that would fail it: no dataset file, LoCoMo-only keys."""
        from locomo_exp.benchmarks.longmemeval.job import NO_REFERENCE, locomo_only_settings
        from locomo_exp.data import expand_paths

        problems = [p for p in (locomo_only_settings(cfg),) if p]
        if not cfg.data.reference:
            return [*problems, NO_REFERENCE]
        for path in expand_paths(cfg.data.reference, start_dir)[:1]:
            if not path.is_file():
                problems.append(f"data.reference: no such file ({path})")
        return problems

    def sweep_judge_config(self, judge: JudgeConfig) -> JudgeConfig:
        """The judge under LongMemEval's question kinds (:func:`.job.lme_judge_config`)."""
        from locomo_exp.benchmarks.longmemeval.job import lme_judge_config

        return lme_judge_config(judge)

    def run_in_sweep(
        self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
        run_name: str, parent_run_id: str | None, extra_tags: dict[str, str],
    ) -> SweepJobRun:
        """One sweep job (:func:`~locomo_exp.benchmarks.longmemeval.job.run_longmemeval`)."""
        from locomo_exp.benchmarks.longmemeval.job import run_longmemeval

        result = run_longmemeval(cfg, output_dir, start_dir, run_name=run_name,
                                 parent_run_id=parent_run_id, extra_tags=extra_tags)
        return SweepJobRun(run_id=result.run_id, report_path=result.report_path)

    def run_log(self, summary: Mapping[str, Any]) -> RunLog:
        """The typed run log of its ``summary.json`` (:func:`.run_log.lme_run_log`)."""
        from locomo_exp.benchmarks.longmemeval.run_log import lme_run_log

        return lme_run_log(summary)

    def sweep_row(self, summary: Mapping[str, Any]) -> dict[str, Any] | None:
        """A LongMemEval run's sweep cells (:func:`.sweep_rows.lme_row_fields`), else ``None``."""
        from locomo_exp.benchmarks.longmemeval.sweep_rows import is_lme_summary, lme_row_fields

        return lme_row_fields(summary) if is_lme_summary(summary) else None

    def owns_sweep_rows(self, rows: list[dict[str, Any]]) -> bool:
        """Whether any row has LongMemEval's figures (``lme``)."""
        return any(row.get("lme") for row in rows)

    def sweep_vs_baseline(
        self, rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path
    ) -> str:
        """Paired by ``question_id`` as ``mode=compare`` (:func:`.sweep_rows.lme_vs_baseline`)."""
        from locomo_exp.benchmarks.longmemeval.sweep_rows import lme_vs_baseline

        return lme_vs_baseline(rows, base, sweep_dir)

    def sweep_table(self, summary: Mapping[str, Any], spending: Spending) -> list[str]:
        """LongMemEval's sweep table (:func:`.sweep_rows.lme_table`)."""
        from locomo_exp.benchmarks.longmemeval.sweep_rows import lme_table

        return lme_table(summary, spending)


PLUGIN = LongMemEvalPlugin(NAME, TITLE)

JUDGE_PROTOCOLS = (_PROTOCOL,)
"""The judge protocols this benchmark brings (``judge.protocol=longmemeval``)."""
"""The plug-in the registry loads."""

__all__ = ["NAME", "PLUGIN", "TITLE", "LongMemEvalPlugin"]
