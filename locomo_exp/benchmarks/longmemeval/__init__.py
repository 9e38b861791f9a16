"""LongMemEval as a benchmark plug-in: ``PLUGIN``.

Modules, one concern each: :mod:`.detect` (is a job LongMemEval's: ``data.format`` or a
look at the answer file), :mod:`.answers` (the ``{question_id, hypothesis}`` rows and their
stored verdicts), :mod:`.reference` (the dataset file, streamed), :mod:`.scoring` (overall,
task-averaged, abstention accuracy), :mod:`.controls` (the audit's controls),
:mod:`.checks` (the judge's checks on a run), :mod:`.dry_run` (the whole run's calls and
spend), :mod:`.judged` (the judge, its panel and audit), :mod:`.summary` (``summary.json``,
``card.json``, ``scores.jsonl``), :mod:`.report` (markdown), :mod:`.console`,
:mod:`.baselines` (published figures), :mod:`.tracking` (MLflow names), :mod:`.job` (the
pipeline's hooks, :class:`~.job.LmeSteps`), :mod:`.compare`, :mod:`.compare_report` and
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

from locomo_exp.benchmarks.longmemeval.protocol import LONGMEMEVAL as _PROTOCOL
from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.plugin import PluginRun, Spending
from locomo_exp.benchmarks.steps import JobSteps

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.results.run_log import RunLog

NAME = "longmemeval"
"""The registry key, ``benchmark=longmemeval`` and ``data.format=longmemeval``."""

TITLE = "LongMemEval"
"""The benchmark's name as reports print it."""


class LongMemEvalPlugin(PipelinePlugin):
    """LongMemEval's :class:`~locomo_exp.benchmarks.plugin.BenchmarkPlugin`, ``compare``, sweep.

    Its job, sweep job and sweep checks are the pipeline's (:class:`PipelinePlugin` over
    :data:`.job.STEPS`); its comparison (paired by ``question_id``, McNemar) and sweep table
    are its own.
    """

    def claims(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether the job is a LongMemEval one (:func:`.detect.is_longmemeval`).

        Never raises: an unreadable file is not claimed.
        """
        from locomo_exp.benchmarks.longmemeval.detect import is_longmemeval

        return is_longmemeval(cfg, start_dir)

    def detects(self, path: Path) -> bool:
        """Whether ``path`` holds LongMemEval answer rows (:func:`.detect.is_lme_file`)."""
        from locomo_exp.benchmarks.longmemeval.detect import is_lme_file

        return is_lme_file(path)

    def steps(self) -> JobSteps[Any, Any]:
        """LongMemEval's pipeline hooks (:data:`locomo_exp.benchmarks.longmemeval.job.STEPS`)."""
        from locomo_exp.benchmarks.longmemeval.job import STEPS

        return STEPS

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

    def compare_and_track(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path
                          ) -> PluginRun:
        """:meth:`compare`, then the flips and ``questions.html`` of every pipeline benchmark.

        Its comparison logs its own MLflow run (:mod:`.compare_job`), so the pipeline's
        second run of the same comparison is not made
        (:func:`~locomo_exp.benchmarks.compare_track.compare_and_track`, ``log_run=False``).

        Raises:
            ValueError: as :meth:`compare`.
        """
        from locomo_exp.benchmarks.compare_track import compare_and_track

        return compare_and_track(self, self.steps(), cfg, output_dir, start_dir, log_run=False)

    def sweep_problems(self, cfg: ExperimentConfig, start_dir: Path) -> list[str]:
        """A job's settings that would fail it: the pipeline's checks, then no dataset file."""
        from locomo_exp.benchmarks.longmemeval.job import NO_REFERENCE
        from locomo_exp.data import expand_paths
        from locomo_exp.judge.protocols import plugged_protocols

        with plugged_protocols(self.judge_protocols()):  # judge.protocol=longmemeval resolves
            problems = super().sweep_problems(cfg, start_dir)
        if not cfg.data.reference:
            return [*problems, NO_REFERENCE]
        for path in expand_paths(cfg.data.reference, start_dir)[:1]:
            if not path.is_file():
                problems.append(f"data.reference: no such file ({path})")
        return problems

    def sweep_judge_config(self, judge: JudgeConfig) -> JudgeConfig:
        """The judge under LongMemEval's question kinds (:func:`.judged.lme_judge_config`)."""
        from locomo_exp.benchmarks.longmemeval.judged import lme_judge_config

        return lme_judge_config(judge)

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

"""The plug-in the registry loads."""

JUDGE_PROTOCOLS = (_PROTOCOL,)
"""The judge protocols this benchmark brings (``judge.protocol=longmemeval``)."""

__all__ = ["NAME", "PLUGIN", "TITLE", "LongMemEvalPlugin"]
