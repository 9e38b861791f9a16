"""LoCoMo as a registered benchmark: the default, last in the registry.

:data:`locomo_exp.benchmarks.locomo.PLUGIN` claims what no earlier benchmark claims: a
``data.format`` naming one of LoCoMo's layouts (:data:`locomo_exp.data.layouts.LAYOUTS`),
and with ``data.format=auto`` any input (pooled ``data.runs``, a glob, a file that cannot
be read: LoCoMo's job refuses those in its own words). Its job is the pipeline's recorded
one (:class:`~.steps.LocomoSteps`); what differs from a plain pipeline plug-in is kept
here: a batch left pending prints where the F1 outputs are, ``JudgeErrorRateExceeded`` is
one error line, a sweep job logs its swept keys, and ``mode=compare`` is the comparison
job of :mod:`locomo_exp.compare` (any runs no earlier benchmark claims).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.pipeline_plugin import PipelinePlugin
from locomo_exp.benchmarks.plugin import PluginRun, SweepJobRun

if TYPE_CHECKING:
    from locomo_exp.benchmarks.steps import JobSteps
    from locomo_exp.config import ExperimentConfig


class LocomoPlugin(PipelinePlugin):
    """LoCoMo's plug-in: the default benchmark (see the module's docstring)."""

    swaps_own_comparison = True
    """``mode=compare`` (:meth:`compare`) writes beside an earlier comparison and swaps
    itself (:func:`locomo_exp.compare.job.run_compare_job`)."""

    @property
    def formats(self) -> tuple[str, ...]:
        """Every LoCoMo layout's ``data.format`` (``qa_results``, ``fields``, ...)."""
        from locomo_exp.data.layouts import LAYOUTS

        return tuple(spec.name for spec in LAYOUTS)

    def detects(self, path: Path) -> bool:
        """Any file: LoCoMo is the default (its job detects the layout or refuses)."""
        return True

    def claims(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """A LoCoMo layout's ``data.format``, or ``auto`` (whatever no earlier benchmark claimed).

        Never raises.
        """
        fmt = str(cfg.data.format)
        return fmt == "auto" or fmt in self.formats

    def steps(self) -> JobSteps[Any, Any]:
        """:class:`~.steps.LocomoSteps` (a recorded job)."""
        from locomo_exp.benchmarks.locomo.steps import LocomoSteps

        return LocomoSteps()

    def judge_protocols(self) -> tuple[Any, ...]:
        """None of its own: LoCoMo's protocols are the judge's (``rubric``, ``binary``)."""
        return ()

    def run(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
            long_lived: bool = False) -> PluginRun:
        """Run LoCoMo's job (:func:`~locomo_exp.benchmarks.pipeline.run_job`).

        A batch still processing (``judge.batch.wait=false``) is not a failure: the F1
        outputs are written, the console says where and how to collect (the same
        command), exit status 0.

        Args:
            cfg: the typed config.
            output_dir: the run directory.
            start_dir: the directory relative paths are resolved against.
            long_lived: the process runs this one job (``python -m locomo_exp``; see
                :func:`~locomo_exp.benchmarks.pipeline.run_job`).

        Raises:
            ValueError: bad input or settings (nothing written), or the judge gave no
                usable J (``judge.max_error_rate``; the outputs are written).
            OSError: an unreadable input or an unwritable output directory.
            KeyboardInterrupt: Ctrl-C or SIGTERM.
        """
        from locomo_exp.benchmarks.locomo.types import JudgeErrorRateExceeded
        from locomo_exp.benchmarks.pipeline import run_job
        from locomo_exp.llm.errors import JudgeBatchPending

        try:
            result = run_job(self.steps(), cfg, output_dir, start_dir, long_lived=long_lived)
        except JudgeBatchPending as waiting:
            return PluginRun(console=f"F1 outputs: {output_dir}\n{waiting}",
                             output_dir=Path(output_dir))
        except JudgeErrorRateExceeded as error:  # one error line, as a refusal's
            raise ValueError(str(error)) from error
        return PluginRun(console="\n".join(result.console), output_dir=result.output_dir)

    def run_in_sweep(
        self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
        run_name: str, parent_run_id: str | None, extra_tags: dict[str, str],
        swept_keys: Sequence[str] = (),
    ) -> SweepJobRun:
        """One sweep job, its MLflow run a child of ``parent_run_id``, its swept keys logged.

        Raises:
            ValueError: bad input or settings; ``JudgeErrorRateExceeded`` (no usable J).
            locomo_exp.llm.errors.JudgeBatchPending: batches still processing (F1 written).
        """
        from locomo_exp.benchmarks.pipeline import run_job

        result = run_job(self.steps(), cfg, output_dir, start_dir, run_name=run_name,
                         parent_run_id=parent_run_id, extra_tags=extra_tags,
                         swept_keys=swept_keys)
        return SweepJobRun(run_id=result.run_id, report_path=result.output_dir / "report.md")

    def sweep_scorer(self, cfg: ExperimentConfig) -> str:
        """The scorer (``f1``, ``judge``, ``both``), as a swept job's run name says."""
        return str(cfg.scorer.name.value)

    def sweep_f1_variant(self, cfg: ExperimentConfig) -> str | None:
        """``f1.variant``: the F1 a sweep row reports."""
        return str(cfg.f1.variant.value)

    def claims_runs(self, cfg: ExperimentConfig, start_dir: Path) -> bool:
        """Any ``compare.runs`` (directories or MLflow run ids) no earlier benchmark claims."""
        return True

    def compare(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> PluginRun:
        """Compare LoCoMo runs (:func:`locomo_exp.compare.job.run_compare_job`), MLflow too.

        Returns:
            The console: the headline table, warnings, the outputs, the flipped verdicts
            of each pair and the MLflow run.

        Raises:
            locomo_exp.compare.CompareError: a refused comparison (one line).
            ValueError, OSError: an unusable store or an unwritable directory.
        """
        from locomo_exp import tracking
        from locomo_exp.benchmarks.steps import where_lines
        from locomo_exp.compare.job import headline_table, run_compare_job

        uri = None
        if cfg.tracking.enabled:
            uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        job = run_compare_job(cfg.compare, output_dir, start_dir, tracking_uri=uri,
                              experiment=cfg.tracking.experiment,
                              run_name=cfg.tracking.run_name)
        lines = [headline_table(job.result)]
        lines += [f"warning: {warning}" for warning in job.result.warnings]  # not only in .md
        lines += ["", f"Comparison: {job.result.outputs['markdown']}",
                  f"Every question: {job.result.outputs['questions']}"]
        for pair in job.flips:  # McNemar's discordant pairs of the headline verdict
            lines.append(f"Flipped verdicts {pair.run_b} vs {pair.run_a}: {pair.gained} "
                         f"gained, {pair.lost} lost" + "".join(f"\n  {url}" for url in pair.urls))
        if job.run_id:
            lines += where_lines(output_dir, run_id=job.run_id, experiment=cfg.tracking.experiment,
                                 tracking_uri=str(job.tracking_uri),
                                 experiment_id=job.experiment_id)[2:]
        return PluginRun(console="\n".join(lines), output_dir=Path(output_dir))

    def compare_and_track(self, cfg: ExperimentConfig, output_dir: Path, start_dir: Path
                          ) -> PluginRun:
        """:meth:`compare` (its MLflow run and flips included)."""
        return self.compare(cfg, output_dir, start_dir)


PLUGIN = LocomoPlugin("locomo", "LoCoMo")
"""LoCoMo's entry in :data:`locomo_exp.benchmarks.registry.PLUGINS` (the last)."""

__all__ = ["PLUGIN", "LocomoPlugin"]
