"""The command-line layer: turns a Hydra config into a job and prints what a user needs.

One module per concern: the checks before Hydra runs and the refusal form
(:mod:`~locomo_exp.cli.command_line`), ``--help`` (:mod:`~locomo_exp.cli.help`), a single
job of each kind and its console (:mod:`~locomo_exp.cli.jobs`) and a sweep's job
(:mod:`~locomo_exp.cli.sweep_job`); :func:`run_from_hydra` dispatches between them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

from locomo_exp.cli.command_line import (
    check_command_line,
    config_error_line,
    fail,
    key_overrides,
    task_overrides,
)
from locomo_exp.cli.help import HELP_FLAGS, app_help
from locomo_exp.cli.jobs import (
    exit_interrupted,
    print_result,
    run_compare_from_cli,
    run_plugin_from_cli,
)
from locomo_exp.cli.sweep_job import run_sweep_job
from locomo_exp.config import Mode, to_experiment_config
from locomo_exp.config.checks import UnknownConfigKeyError, keep_typed_text
from locomo_exp.results import interrupts

if TYPE_CHECKING:  # the jobs are imported where they run: --help loads none of them
    from locomo_exp.benchmarks.plugin import SweepJobRun
    from locomo_exp.experiment import ExperimentResult


def run_from_hydra(cfg: DictConfig) -> ExperimentResult | SweepJobRun | None:
    """Entry point called by ``locomo_exp/__main__.py``.

    Single run: expected errors (bad input, judge configuration, API failures) are
    printed as one clear message and end the process with exit code 1; nothing is
    retried. Ctrl-C or SIGTERM prints one line (``interrupted: N calls cached; ...``) and
    exits 130 or 143; the MLflow run ends KILLED. Multirun: see :func:`run_sweep_job` (a
    failed job does not stop the sweep).
    """
    from locomo_exp.benchmarks.names import registry_name_problems
    from locomo_exp.data import DataValidationError
    from locomo_exp.experiment import (
        JudgeErrorRateExceeded,
        run_experiment,
    )
    from locomo_exp.judge import JudgeBatchPending
    from locomo_exp.judge.protocols.templates.settings import apply_template_settings

    for noisy in ("httpx2", "httpx", "httpcore2", "httpcore", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)  # one INFO line per API call otherwise
    interrupts.install()  # SIGINT, SIGTERM recorded: a job that saw one never reports success
    if HydraConfig.get().mode == RunMode.MULTIRUN:
        try:
            return run_sweep_job(cfg)
        except KeyboardInterrupt as stop:
            exit_interrupted(stop)
    keep_typed_text(cfg, task_overrides())
    try:
        apply_template_settings(cfg, task_overrides())
        typed = to_experiment_config(cfg, registry_name_problems)
    except MissingMandatoryValue as error:
        key = error.full_key or "a required value"
        fail(f"{key} is required (e.g. {key}=path/to/results.json)")
    except OmegaConfBaseException as error:  # e.g. ${oc.env:X} with X unset
        fail(config_error_line(error))
    except (UnknownConfigKeyError, ValueError) as error:  # incl. ConfigValueError
        fail(error)
    output_dir = Path(HydraConfig.get().runtime.output_dir)
    if typed.mode == Mode.compare:
        run_compare_from_cli(typed, output_dir, Path.cwd())
        return None
    from locomo_exp.benchmarks import plugin_for

    plugin = plugin_for(typed, Path.cwd())
    if plugin is not None:
        run_plugin_from_cli(plugin, typed, output_dir, Path.cwd())
        return None
    try:
        result = run_experiment(typed, output_dir, Path.cwd(), long_lived=True)
        interrupts.raise_if_received()  # an interrupt swallowed on the way: not a success
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: one line, no traceback
        exit_interrupted(stop)
    except JudgeBatchPending as waiting:
        print(f"F1 outputs: {output_dir}\n{waiting}")
        raise SystemExit(0) from None
    except (DataValidationError, JudgeErrorRateExceeded, ValueError) as error:
        fail(error)
    except OSError as error:  # read-only or full output directory, unreachable store ...
        fail(error)
    print_result(result)
    return result


__all__ = [
    "HELP_FLAGS",
    "app_help",
    "check_command_line",
    "config_error_line",
    "exit_interrupted",
    "fail",
    "key_overrides",
    "print_result",
    "run_compare_from_cli",
    "run_from_hydra",
    "run_sweep_job",
    "task_overrides",
]
