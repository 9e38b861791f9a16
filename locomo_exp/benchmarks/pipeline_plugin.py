"""The plug-in side of a pipeline benchmark: its job, sweep job, checks and comparison.

A benchmark package's ``PLUGIN`` subclasses :class:`PipelinePlugin` and gives only
:meth:`~PipelinePlugin.detects` (a look at a file's first bytes) and
:meth:`~PipelinePlugin.steps` (its hooks, :class:`~locomo_exp.benchmarks.steps.JobSteps`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.file_plugin import FilePlugin, claims_run_dirs, compare_run_dirs
from locomo_exp.benchmarks.pipeline import run_job
from locomo_exp.benchmarks.plugin import PluginRun, Spending, SweepJobRun
from locomo_exp.benchmarks.steps import JobSteps

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig, JudgeConfig
    from locomo_exp.results.questions import QuestionRow


class PipelinePlugin(FilePlugin):
    """A :class:`FilePlugin` whose job is :func:`run_job` over its :meth:`steps`.

    Gives :meth:`run`, the sweep's :meth:`run_in_sweep` and :meth:`sweep_problems`, and
    (for steps that give ``paired_scores``) ``mode=compare`` and the sweep's rows, pairing
    and table; the subclass gives :meth:`detects` and :meth:`steps`.
    """

    def steps(self) -> JobSteps[Any, Any]:
        """The benchmark's hooks (imported when a job runs, never by ``--help``).

        Raises:
            NotImplementedError: a subclass gives it.
        """
        raise NotImplementedError

    def judge_protocols(self) -> tuple[Any, ...]:
        """The judge protocols this benchmark brings: its package's ``JUDGE_PROTOCOLS``.

        Handed to the judge for each job (:func:`locomo_exp.judge.protocols.plugged_protocols`),
        so in-process callers outside the command line resolve them too.
        """
        return tuple(getattr(sys.modules[type(self).__module__], "JUDGE_PROTOCOLS", ()))

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
            long_lived: bool = False) -> PluginRun:
        """Run the job (:func:`run_job`), the benchmark's judge protocols handed in.

        A judge whose batches are still processing (``judge.batch.wait=false``) is not a
        failure: nothing is written yet (an earlier run stays as it was), the console says so
        and how to collect (the same command), exit status 0.
        """
        from locomo_exp.judge.protocols import plugged_protocols
        from locomo_exp.llm.errors import JudgeBatchPending

        try:
            with plugged_protocols(self.judge_protocols()):
                result = run_job(self.steps(), cfg, output_dir, start_dir,
                                 extra_tags=_run_dir_tag(output_dir), long_lived=long_lived)
        except JudgeBatchPending as waiting:
            return PluginRun(console=f"No outputs yet (no J yet): {output_dir}\n{waiting}",
                             output_dir=Path(output_dir))
        return PluginRun(console="\n".join(result.console), output_dir=result.output_dir,
                         exit_status=result.exit_status)

    def sweep_problems(self, cfg: ExperimentConfig, start_dir: Path) -> list[str]:
        """The settings and judge protocol a job of this benchmark refuses, before any job."""
        steps = self.steps()
        try:
            steps.check_settings(cfg)
            steps.judge_config(cfg)
        except ValueError as error:
            return [str(error)]
        return []

    def run_in_sweep(
        self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
        run_name: str, parent_run_id: str | None, extra_tags: dict[str, str],
        swept_keys: Sequence[str] = (),
    ) -> SweepJobRun:
        """One sweep job (:func:`run_job`), its MLflow run a child of ``parent_run_id``.

        ``swept_keys`` reach a recorded job's params (:meth:`JobSteps.start_params`).

        Raises:
            ValueError: also a job whose gate failed (its outputs written).
        """
        from locomo_exp.judge.protocols import plugged_protocols

        with plugged_protocols(self.judge_protocols()):
            result = run_job(self.steps(), cfg, output_dir, start_dir, run_name=run_name,
                             parent_run_id=parent_run_id,
                             extra_tags={**_run_dir_tag(output_dir), **extra_tags},
                             swept_keys=swept_keys)
        if result.exit_status:
            raise ValueError(result.console[-1].removeprefix("error: "))
        return SweepJobRun(run_id=result.run_id, report_path=result.output_dir / "report.md")

    def sweep_judge_config(self, judge: JudgeConfig) -> JudgeConfig:
        """The judge settings a sweep job runs with. Default: ``judge`` itself."""
        return judge

    def sweep_scorer(self, cfg: ExperimentConfig) -> str:
        """What a swept job's MLflow run name says scored it. Default: the benchmark's name."""
        return self.name

    def sweep_f1_variant(self, cfg: ExperimentConfig) -> str | None:
        """The F1 variant a sweep row reports (``f1.variant``), or ``None``. Default: none."""
        return None

    def question_rows_of(self, run_dir: Path) -> list[QuestionRow]:
        """A finished run's questions (:func:`.compare_track.run_question_rows`).

        Raises:
            ValueError: a missing or unreadable ``scores.jsonl`` (one line).
        """
        from locomo_exp.benchmarks.compare_track import run_question_rows

        return run_question_rows(self.steps(), run_dir)

    def compare_and_track(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path
                          ) -> PluginRun:
        """:meth:`compare`, then the flips, ``questions.html`` and the MLflow run.

        What ``mode=compare`` runs (:func:`locomo_exp.compare.job.run_plugin_compare`);
        :func:`.compare_track.compare_and_track`.

        Raises:
            ValueError, OSError, TrackingStoreError: as that function.
        """
        from locomo_exp.benchmarks.compare_track import compare_and_track

        return compare_and_track(self, self.steps(), cfg, output_dir, start_dir)

    # The pipeline's comparison and sweep rows (:mod:`.pipeline_compare`), for a benchmark
    # whose steps give ``paired_scores``; a plug-in may override all six with its own.
    def _compares(self) -> bool:
        return type(self.steps()).paired_scores is not JobSteps.paired_scores

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Whether every ``compare.runs`` directory is this benchmark's run (and it pairs)."""
        return self._compares() and claims_run_dirs(cfg, start_dir, self.name)

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare two runs: the second minus the first (:mod:`.pipeline_compare`).

        Raises:
            ValueError: not two runs, or a run without ``scores.jsonl``.
        """
        from locomo_exp.benchmarks.pipeline_compare import write_comparison

        runs = compare_run_dirs(cfg, start_dir)
        if len(runs) != 2:
            raise ValueError(f"{self.title} runs are compared two at a time: give two "
                             f"compare.runs (got {len(runs)})")
        lines, body = write_comparison(self.steps(), (runs[0], runs[1]), Path(output_dir),
                                       cfg.compare, overwrite=cfg.overwrite)
        return PluginRun(console="\n".join(lines), output_dir=Path(output_dir), body=body)

    def sweep_row(self, summary: Mapping[str, Any]) -> dict[str, Any] | None:
        """A job's sweep cells (:func:`.pipeline_compare.sweep_row`), else ``None``."""
        from locomo_exp.benchmarks.pipeline_compare import sweep_row

        return sweep_row(self.steps(), summary) if self._compares() else None

    def owns_sweep_rows(self, rows: list[dict[str, Any]]) -> bool:
        """Whether the sweep's rows are this benchmark's jobs."""
        from locomo_exp.benchmarks.pipeline_compare import owns_rows

        return self._compares() and owns_rows(self.steps(), rows)

    def sweep_vs_baseline(
        self, rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path
    ) -> str:
        """Each job against the baseline job, as ``mode=compare`` (default ``compare.*``)."""
        from locomo_exp.benchmarks.pipeline_compare import vs_baseline
        from locomo_exp.config import CompareConfig

        return vs_baseline(self.steps(), rows, base, sweep_dir, CompareConfig())

    def sweep_table(self, summary: Mapping[str, Any], spending: Spending) -> list[str]:
        """The sweep's table (:func:`.pipeline_compare.table`)."""
        from locomo_exp.benchmarks.pipeline_compare import table

        return table(summary, spending)


def _run_dir_tag(output_dir: Path) -> dict[str, str]:
    """The run directory's tag, how ``mode=compare`` finds a run's MLflow run (its flips)."""
    from locomo_exp.tracking.metrics import run_tags

    return run_tags(output_dir=str(Path(output_dir).resolve()))


__all__ = ["PipelinePlugin"]
