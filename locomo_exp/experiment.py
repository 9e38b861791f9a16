"""One scoring job: read a results file, score it, write outputs, log to MLflow.

:func:`run_experiment` is LoCoMo's job for in-process callers (tests, the docs); the
command line runs the same job through LoCoMo's registered plug-in
(:mod:`locomo_exp.benchmarks.locomo.plugin`). It runs LoCoMo's job on the one pipeline
(:func:`locomo_exp.benchmarks.pipeline.run_job` with
:class:`locomo_exp.benchmarks.locomo.steps.LocomoSteps`) and returns its typed result. It
never changes the working directory: relative paths are resolved against ``start_dir``
(the directory the user started in).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.locomo.types import JudgeErrorRateExceeded, resolve_path
from locomo_exp.benchmarks.pipeline_recorded import LOG_FILE, warm_up_outputs

if TYPE_CHECKING:
    from locomo_exp.config import ExperimentConfig
    from locomo_exp.results import RunSummary

log = logging.getLogger(__name__)


@dataclass
class ExperimentResult:
    """What one job produced.

    Attributes:
        output_dir: where ``report.md``, ``scores.jsonl``, ``summary.json`` are.
        run_summary: the run's typed results (:attr:`summary` is their JSON).
        metrics: the flat metrics logged to MLflow.
        run_id: the MLflow run id, or ``None`` with ``tracking=none``.
        tracking_uri: the MLflow store, or ``None``.
        experiment: the MLflow experiment name, or ``None``.
        files: the output files written.
        experiment_id: the MLflow experiment id, or ``None``.
        console: the lines the command line prints for this run (the job's
            ``JobResult.console``: the figures, then where the outputs are).
    """

    output_dir: Path
    run_summary: RunSummary
    metrics: dict[str, float]
    run_id: str | None = None
    tracking_uri: str | None = None
    experiment: str | None = None
    files: list[Path] = field(default_factory=list)
    experiment_id: str | None = None
    console: list[str] = field(default_factory=list)

    @property
    def report_path(self) -> Path:
        """``report.md`` of the run."""
        return self.output_dir / "report.md"

    @property
    def summary(self) -> dict[str, Any]:
        """The content of ``summary.json`` (:meth:`RunSummary.to_json`)."""
        return self.run_summary.to_json()


def run_experiment(
    cfg: ExperimentConfig,
    output_dir: Path,
    start_dir: Path | None = None,
    *,
    parent_run_id: str | None = None,
    extra_tags: dict[str, str] | None = None,
    run_name: str | None = None,
    swept_keys: Sequence[str] = (),
    long_lived: bool = False,
) -> ExperimentResult:
    """Score one results file and write its outputs.

    The pipeline's steps (:func:`locomo_exp.benchmarks.pipeline.run_job`, a recorded job):
    every check that can refuse (settings, judge key, input files, the records, the trust
    plan, ``judge.max_cost_usd``, a finished run) -> the MLflow run -> F1/BLEU-1 written ->
    judge and trust (if ``scorer`` is ``judge``/``both``) -> outputs written again -> logged
    to MLflow. Outputs with F1 are on disk before the judge starts, and judge calls are
    cached, so a failing judge loses nothing already computed.

    Args:
        cfg: the typed config.
        output_dir: where to write ``report.md``, ``scores.jsonl``, ``summary.json``.
        start_dir: directory relative paths are resolved against (default: cwd).
        parent_run_id: MLflow parent run (sweeps); works across processes.
        extra_tags: extra MLflow tags.
        run_name: the MLflow run name (sweeps name children by their swept values);
            default ``tracking.run_name``, else ``<file> · <scorer>``.
        swept_keys: the keys a sweep varies, logged as params with the measurement's
            settings (:func:`locomo_exp.tracking.config_measurement_params`).
        long_lived: the process runs this one job (``python -m locomo_exp``): the objects
            alive when the judge's calls start, and those the MLflow thread's imports make,
            are moved out of the garbage collector's sight (``gc.freeze``), so that its
            collections do not walk them again (about 0.3 s of CPU in a judge job). In-process
            callers (tests, sweeps) keep the default: frozen garbage would stay until exit.

    Returns:
        :class:`ExperimentResult`.

    Raises:
        locomo_exp.report.run_dir.OutputDirInUse: ``output_dir`` already holds a run's
            ``report.md``/``summary.json``/``scores.jsonl`` and ``cfg.overwrite`` is false
            (with it the new run replaces that one once finished: ``report/run_swap.py``).
        locomo_exp.report.run_dir.OutputDirNotWritable: ``output_dir`` cannot be written.
        locomo_exp.data.DataValidationError: for unreadable or invalid input.
        locomo_exp.judge.JudgeError: for judge config or fatal API errors.
        JudgeErrorRateExceeded: when API errors exceed ``judge.max_error_rate``.
        locomo_exp.judge.JudgeBatchPending: ``judge.mode=batch`` with ``judge.batch.wait=false``
            and batches still processing; F1 outputs are written and the MLflow run is tagged
            ``judge.batch_status=pending``; the same command later collects.
    """
    from locomo_exp.benchmarks.locomo.steps import LocomoSteps
    from locomo_exp.benchmarks.pipeline import run_job

    done = run_job(LocomoSteps(), cfg, output_dir, start_dir, run_name=run_name,
                   parent_run_id=parent_run_id, extra_tags=extra_tags, swept_keys=swept_keys,
                   long_lived=long_lived)
    return ExperimentResult(
        output_dir=done.output_dir, run_summary=done.typed_summary, metrics=done.metrics,
        run_id=done.run_id, tracking_uri=done.tracking_uri,
        experiment=cfg.tracking.experiment if done.run_id is not None else None,
        files=done.files, experiment_id=done.experiment_id, console=done.console,
    )


__all__ = [
    "LOG_FILE",
    "ExperimentResult",
    "JudgeErrorRateExceeded",
    "resolve_path",
    "run_experiment",
    "warm_up_outputs",
]
