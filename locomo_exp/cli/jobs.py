"""Run a single job of each kind and print what the user needs: figures, outputs, MLflow.

A LoCoMo run's console (:func:`print_result`), a comparison (:func:`run_compare_from_cli`)
and a registered benchmark's run (:func:`run_plugin_from_cli`); an interruption ends in one
line with exit status 130 or 143 (:func:`exit_interrupted`).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from locomo_exp.cli.command_line import fail
from locomo_exp.config import ExperimentConfig
from locomo_exp.results import RunSummary, interrupts
from locomo_exp.results.words import counted

if TYPE_CHECKING:  # the jobs are imported where they run: --help loads none of them
    from locomo_exp.benchmarks import BenchmarkPlugin
    from locomo_exp.experiment import ExperimentResult


def print_mlflow_run(
    run_id: str | None, experiment: str | None, tracking_uri: str, experiment_id: str | None
) -> None:
    """Print which MLflow run a job logged to and how to open the UI on it.

    Args:
        run_id: the run's id.
        experiment: the experiment's name.
        tracking_uri: the store.
        experiment_id: the experiment's id, or ``None`` (the hint opens the default one).
    """
    from locomo_exp import tracking

    print(
        f"MLflow: run {run_id} in experiment '{experiment}'.\n"
        f"{tracking.open_ui_hint(tracking_uri, experiment_id)}"
    )


def print_result(result: ExperimentResult) -> None:
    """Print the table, where the outputs are, and how to open MLflow."""
    summary = result.summary
    estimate = (summary.get("judge") or {}).get("dry_run_estimate")
    scored = "f1" in summary["versions"] or not estimate  # a judge-only dry run scores nothing
    verb = "Scored" if scored else "Read (judge dry run: nothing scored)"
    scored_text = counted(summary["counts"]["overall"], "question")
    print(f"\n{verb} {scored_text} from {summary['input']['path']}")
    if "f1" in summary["versions"]:
        print(f"F1 = {summary['versions']['f1']}; scores in percent")
    from locomo_exp.report.console import console_table, dry_run_lines, input_notes

    for line in input_notes(summary, result.output_dir):  # as the report's header says
        print(line)

    if estimate:
        print("\n".join(dry_run_lines(estimate, summary.get("judge"))))

    print(console_table(summary))
    for warning in RunSummary.from_json(summary).warnings:
        print(f"WARNING: {warning}")
    print(f"\nReport: {result.report_path}")
    if result.tracking_uri:
        print_mlflow_run(
            result.run_id, result.experiment, result.tracking_uri, result.experiment_id
        )


def run_compare_from_cli(cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> None:
    """``mode=compare``: compare ``compare.runs``, print the headline table and the outputs.

    A refused comparison (:class:`~locomo_exp.compare.CompareError`) or an unusable
    MLflow store prints one ``error:`` line and exits 1.

    Args:
        cfg: the typed config (``compare`` node, ``tracking``).
        output_dir: the Hydra run directory (``compare.md``, ``compare.json``, plots).
        start_dir: the working directory relative run paths are resolved against.

    Raises:
        SystemExit: with status 1 on a refused comparison.
    """
    from locomo_exp import tracking
    from locomo_exp.benchmarks import compare_plugin_for
    from locomo_exp.compare import CompareError
    from locomo_exp.compare.job import headline_table, run_compare_job

    plugin = compare_plugin_for(cfg, start_dir)  # a benchmark plug-in's own runs (registry)
    if plugin is not None:  # built beside an earlier comparison, swapped in when finished
        from locomo_exp.compare.job import run_plugin_compare

        try:
            console, status = run_plugin_compare(plugin, cfg, output_dir, start_dir)
        except (CompareError, ValueError, OSError) as error:
            fail(error)
        print(console)
        if status:
            raise SystemExit(status)
        return

    uri = None
    if cfg.tracking.enabled:
        uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
    try:
        job = run_compare_job(
            cfg.compare, output_dir, start_dir, tracking_uri=uri,
            experiment=cfg.tracking.experiment, run_name=cfg.tracking.run_name,
        )
    except (CompareError, ValueError, OSError) as error:  # incl. TrackingStoreError
        fail(error)
    print(headline_table(job.result))
    for warning in job.result.warnings:  # not only in compare.md
        print(f"warning: {warning}")
    print(f"\nComparison: {job.result.outputs['markdown']}")
    print(f"Every question: {job.result.outputs['questions']}")
    for pair in job.flips:  # McNemar's discordant pairs of the headline verdict
        print(f"Flipped verdicts {pair.run_b} vs {pair.run_a}: {pair.gained} gained, "
              f"{pair.lost} lost" + "".join(f"\n  {url}" for url in pair.urls))
    if job.run_id:
        print_mlflow_run(
            job.run_id, cfg.tracking.experiment, str(job.tracking_uri), job.experiment_id
        )


def run_plugin_from_cli(
    plugin: BenchmarkPlugin, cfg: ExperimentConfig, output_dir: Path, start_dir: Path
) -> None:
    """A registered benchmark's job: run it, print its console, exit with its status.

    Bad input or settings (``ValueError``, ``OSError``) print one ``error:`` line and exit
    1; Ctrl-C or SIGTERM one line and 130 or 143.

    Raises:
        SystemExit: with status 1 on bad input, or the run's own non-zero exit status.
    """
    try:
        run = plugin.run(cfg, output_dir, start_dir)
        interrupts.raise_if_received()
    except KeyboardInterrupt as stop:
        exit_interrupted(stop)
        return
    except (ValueError, OSError) as error:  # incl. DataValidationError
        fail(error)
    print(run.console)
    if run.exit_status:
        raise SystemExit(run.exit_status)


def exit_interrupted(stop: KeyboardInterrupt) -> None:
    """Print the one interruption line and exit 130 (SIGINT) or 143 (SIGTERM)."""
    from locomo_exp.llm.errors import JudgeInterrupted

    if not isinstance(stop, JudgeInterrupted):  # incl. interrupts.Interrupted (SIGTERM: 143)
        stop = JudgeInterrupted(int(getattr(stop, "signum", signal.SIGINT)))
    print(stop.line(), file=sys.stderr)
    raise SystemExit(stop.exit_status) from None


__all__ = [
    "exit_interrupted",
    "print_result",
    "run_compare_from_cli",
    "run_plugin_from_cli",
]
