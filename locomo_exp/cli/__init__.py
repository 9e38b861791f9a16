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


def run_from_hydra(cfg: DictConfig) -> SweepJobRun | None:
    """Entry point called by ``locomo_exp/__main__.py``.

    Single run: the registered benchmark that claims the input runs the job
    (:func:`locomo_exp.benchmarks.plugin_for`; LoCoMo, the last, claims the rest) and its
    console is printed (:func:`run_plugin_from_cli`). Expected errors (bad input, judge
    configuration, API failures) are printed as one clear message and end the process
    with exit code 1; nothing is retried. Ctrl-C or SIGTERM prints one line
    (``interrupted: N calls cached; ...``) and exits 130 or 143; the MLflow run ends
    KILLED. Multirun: see :func:`run_sweep_job` (a failed job does not stop the sweep).
    """
    from locomo_exp.benchmarks.names import registry_name_problems
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

    run_plugin_from_cli(plugin_for(typed, Path.cwd()), typed, output_dir, Path.cwd(),
                        long_lived=True)
    return None


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
