"""Run a single job of each kind and print what the user needs: figures, outputs, MLflow.

A registered benchmark's run (:func:`run_plugin_from_cli`, LoCoMo's included: its console
is its job's), a comparison (:func:`run_compare_from_cli`), and, for in-process callers, a
LoCoMo :class:`~locomo_exp.experiment.ExperimentResult`'s console (:func:`print_result`);
an interruption ends in one line with exit status 130 or 143 (:func:`exit_interrupted`).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from locomo_exp.cli.command_line import fail
from locomo_exp.config import ExperimentConfig
from locomo_exp.results import interrupts

if TYPE_CHECKING:  # the jobs are imported where they run: --help loads none of them
    from locomo_exp.benchmarks import BenchmarkPlugin
    from locomo_exp.experiment import ExperimentResult


def print_result(result: ExperimentResult) -> None:
    """Print a LoCoMo run's console: its figures, where the outputs are, how to open MLflow.

    The lines :func:`run_plugin_from_cli` prints for the same job: its ``JobResult.console``
    (:func:`locomo_exp.benchmarks.locomo.console.locomo_console` and
    :func:`locomo_exp.benchmarks.steps.where_lines`), which an in-process
    :func:`~locomo_exp.experiment.run_experiment` hands on as ``result.console``.
    """
    print("\n".join(result.console))


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
    from locomo_exp.benchmarks import compare_plugin_for
    from locomo_exp.compare import CompareError
    from locomo_exp.compare.job import run_plugin_compare

    try:  # the benchmark whose runs these are (registry; LoCoMo, the last, claims the rest)
        plugin = compare_plugin_for(cfg, start_dir)
        console, status = run_plugin_compare(plugin, cfg, output_dir, start_dir)
    except (CompareError, ValueError, OSError) as error:  # incl. TrackingStoreError
        fail(error)
    print(console)
    if status:
        raise SystemExit(status)


def run_plugin_from_cli(
    plugin: BenchmarkPlugin, cfg: ExperimentConfig, output_dir: Path, start_dir: Path, *,
    long_lived: bool = False,
) -> None:
    """A registered benchmark's job: run it, print its console, exit with its status.

    Bad input or settings (``ValueError``, ``OSError``) print one ``error:`` line and exit
    1; Ctrl-C or SIGTERM one line and 130 or 143. ``long_lived``: the process runs this
    one job (the command line), handed to :meth:`BenchmarkPlugin.run`.

    Raises:
        SystemExit: with status 1 on bad input, or the run's own non-zero exit status.
    """
    try:
        run = plugin.run(cfg, output_dir, start_dir, long_lived=long_lived)
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
