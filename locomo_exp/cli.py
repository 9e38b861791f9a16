"""The command-line layer: turns a Hydra config into a job and prints what a user needs."""

from __future__ import annotations

import logging
import re
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import MissingMandatoryValue, OmegaConfBaseException

from locomo_exp.config import ExperimentConfig, Mode, to_experiment_config
from locomo_exp.config.checks import UnknownConfigKeyError, keep_typed_text
from locomo_exp.results import RunSummary, interrupts
from locomo_exp.results.words import counted

if TYPE_CHECKING:  # the jobs are imported where they run: --help loads none of them
    from locomo_exp.experiment import ExperimentResult

log = logging.getLogger(__name__)


def task_overrides() -> list[str]:
    """The job's command-line overrides as typed (``${...}`` inside them not resolved)."""
    from omegaconf import OmegaConf

    task = OmegaConf.to_container(HydraConfig.get().overrides.task, resolve=False)
    return [str(o) for o in task] if isinstance(task, list) else []


def key_overrides(argv: list[str]) -> str | None:
    """The refusal of an API key on the command line, or ``None`` when there is none.

    Checked before Hydra runs: Hydra would already have copied the key into
    ``.hydra/config.yaml``, ``hydra.yaml`` and ``overrides.yaml`` by the time the config
    is validated. The key itself is never repeated. The rules (a key's name, or a value
    that looks like a key) are :func:`locomo_exp.config.secrets.key_override_problem`'s.

    Args:
        argv: the command-line arguments after the program name.

    Returns:
        One line naming the override's key and where a key goes instead.
    """
    from locomo_exp.config.secrets import key_override_problem

    return key_override_problem(argv)


def check_command_line(argv: list[str]) -> None:
    """Refuse unknown keys and group choices before Hydra composes, in one line each.

    Hydra would answer ``judge.run=3`` with its advice to write ``+judge.run=3`` (which
    the project refuses too); this prints ``error: unknown config key(s): judge.run (did
    you mean judge.runs?)`` and exits 1 instead.

    Args:
        argv: the command-line arguments after the program name.

    An API key given as an override (``judge.api_key=...``, ``+judge.api_key=...``) is
    refused first (:func:`key_overrides`), before Hydra writes anything.

    Raises:
        SystemExit: with status 1 when a key or a group choice (``scorer=f2``) is unknown,
            or an API key is given.
    """
    from locomo_exp.config.checks import unknown_group_options, unknown_override_keys
    from locomo_exp.config.override_syntax import override_syntax_problems
    from locomo_exp.config.override_values import wrong_value_types
    from locomo_exp.judge.protocols.templates.settings import command_line_template_problems

    secret = key_overrides(argv)
    if secret:
        fail(secret)
    syntax = override_syntax_problems(argv)
    if syntax:
        fail("; ".join(syntax))
    unknown = unknown_override_keys(argv)
    if unknown:
        fail(UnknownConfigKeyError(unknown))
    wrong_choices = unknown_group_options(argv) + wrong_value_types(argv)
    if wrong_choices:
        fail("; ".join(wrong_choices))
    template_problems = command_line_template_problems(argv)  # before Hydra writes anything
    if template_problems:
        fail("; ".join(template_problems))


def fail(message: object) -> NoReturn:
    """Print ``error: <message>`` on standard error and exit with status 1: every refusal's form.

    Raises:
        SystemExit: always, with status 1.
    """
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(1) from None  # called in an except block: no chained traceback


HELP_FLAGS = ("--help", "-h")
"""The flags answered by :func:`app_help` (``--hydra-help`` stays Hydra's)."""


def app_help(argv: list[str]) -> str:
    """The text of ``python -m locomo_exp --help``, laid out as Hydra's app help.

    Hydra's own ``--help`` lists the options of every config group through one deep copy
    of the whole config store per group (about 2 s on this project); this lists the
    groups from ``locomo_exp/conf/`` and composes the config once, so ``--help`` answers
    in well under a second.

    Args:
        argv: the command-line arguments after the program name; overrides among them
            are applied to the config shown, as Hydra does.

    Returns:
        The config groups with their options, then the composed config as YAML
        (``${...}`` left unresolved).
    """
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf, open_dict

    from locomo_exp.config import register_configs

    register_configs()
    from locomo_exp.config.checks import CONF_DIR, NOT_GROUPS, config_groups

    conf_dir = CONF_DIR
    lines = [
        "locomo_exp is powered by Hydra.",
        "",
        "== Configuration groups ==",
        "Compose your configuration from those groups (group=option)",
        "",
    ]
    for group, options in config_groups().items():
        lines.append(f"{group}: {', '.join(options)}")
    for folder, key in NOT_GROUPS.items():
        shipped = sorted(path.stem for path in (conf_dir / folder).glob("*.yaml"))
        lines.append(f"({key}=<file or name>; shipped: {', '.join(shipped)})")
    overrides = [a for a in argv if a not in HELP_FLAGS and not a.startswith("-")]
    with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    with open_dict(cfg):
        cfg.pop("hydra", None)
    lines += [
        "",
        "",
        "== Config ==",
        "Override anything in the config (foo.bar=value)",
        "",
        OmegaConf.to_yaml(cfg, resolve=False),
        "",
        "Powered by Hydra (https://hydra.cc)",
        "Use --hydra-help to view Hydra specific help",
        "",
        "",
    ]
    return "\n".join(lines)


def config_error_line(error: OmegaConfBaseException) -> str:
    """One line for an OmegaConf error: the key, then the first line of its message.

    ``${oc.env:X}`` with ``X`` unset gives ``data.path: environment variable 'X' is not
    set (from ${oc.env:X})``.
    """
    key = getattr(error, "full_key", None) or "config"
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    missing_env = re.search(r"Environment variable '([^']+)' not found", message)
    if missing_env:
        name = missing_env.group(1)
        message = f"environment variable '{name}' is not set (from ${{oc.env:{name}}})"
    return f"{key}: {message}"


def print_result(result: ExperimentResult) -> None:
    """Print the table, where the outputs are, and how to open MLflow."""
    from locomo_exp import tracking

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
        print(
            f"MLflow: run {result.run_id} in experiment '{result.experiment}'.\n"
            f"{tracking.open_ui_hint(result.tracking_uri, result.experiment_id)}"
        )


def run_sweep_job(cfg: DictConfig) -> ExperimentResult | None:
    """One job of a multirun (``python -m locomo_exp -m ...``); never raises for a failed job.

    The job is a child of the sweep's MLflow parent run (read from the sweep dir's
    ``sweep_context.json``, see :mod:`locomo_exp.sweep`), named and tagged with its swept
    values. Any exception is caught so that the other jobs still run: the child run ends
    FAILED (the error is raised inside it), the error is printed, and ``sweep_job.json``
    records it for the sweep summary; the sweep's exit status is then 1.

    Returns:
        The :class:`ExperimentResult`, or ``None`` when the job failed.
    """
    from locomo_exp import sweep, tracking
    from locomo_exp.data import DataValidationError
    from locomo_exp.experiment import JudgeErrorRateExceeded, run_experiment
    from locomo_exp.judge import JudgeBatchPending
    from locomo_exp.judge.protocols.templates.settings import apply_template_settings


    hydra_cfg = HydraConfig.get()
    start_dir = Path(hydra_cfg.runtime.cwd or Path.cwd()).resolve()
    output_dir = Path(hydra_cfg.runtime.output_dir).resolve()
    sweep_dir = (start_dir / str(hydra_cfg.sweep.dir)).resolve()
    context = sweep.SweepContext.read(sweep_dir)
    overrides = task_overrides()
    num = int(hydra_cfg.job.num)
    # without the callback's context (no parent run), every task override labels the job
    swept_keys = (
        context.swept_keys if context is not None else [sweep.override_key(o) for o in overrides]
    )
    swept = sweep.swept_values(overrides, swept_keys)
    run_name = sweep.job_label(swept) if swept else f"job {num}"  # until the config is read
    tags = tracking.child_tags(num, context.name if context is not None else None, swept)
    record = sweep.JobRecord(
        job=num,
        overrides=overrides,
        swept=swept,
        run_name=run_name,
        status=sweep.RUNNING,
        output_dir=str(output_dir),
    )
    from locomo_exp.sweep.reuse import completed_job

    done = None if cfg.get("overwrite") else completed_job(output_dir, overrides)
    if done is not None:  # the same sweep run again: a completed job is kept, not re-run
        print(f"sweep job {num} ({done.run_name}): done in an earlier run of this sweep; kept")
        return None
    started = time.monotonic()
    record.write()  # started: INTERRUPTED, not NOT RUN, if the sweep stops before it returns
    try:
        keep_typed_text(cfg, overrides)
        apply_template_settings(cfg, overrides)
        typed = to_experiment_config(cfg)
        record.f1_variant = typed.f1.variant.value
        if swept:
            run_name = record.run_name = tracking.child_run_name(
                swept,
                model=typed.judge.model if typed.scorer.uses_judge else None,
                scorer=typed.scorer.name.value,
            )
        if context is not None and context.tracking_uri and typed.tracking.enabled:
            uri = tracking.resolve_tracking_uri(typed.tracking.uri, start_dir)
            if (uri, typed.tracking.experiment) != (context.tracking_uri, context.experiment):
                shown, experiment = tracking.redact_uri, typed.tracking.experiment
                raise ValueError(
                    f"this job would log to {shown(uri)} / {experiment}, the sweep's parent run "
                    f"is in {shown(context.tracking_uri)} / {context.experiment}"
                )
        result = run_experiment(
            typed,
            output_dir,
            start_dir,
            parent_run_id=context.parent_run_id if context is not None else None,
            extra_tags=tags,
            run_name=run_name,
            swept_keys=list(swept),
        )
        interrupts.raise_if_received()  # not COMPLETED: the sweep stops (exit 130)
    except JudgeBatchPending as waiting:  # judge.batch.wait=false: not a failure
        record.status = sweep.PENDING
        record.error = str(waiting)
        record.wall_time_s = time.monotonic() - started
        record.write()
        print(f"sweep job {num} ({run_name}): {waiting}")
        return None
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the sweep stops (exit 130 / 143)
        record.status, record.error = sweep.INTERRUPTED, "interrupted (Ctrl-C or SIGTERM)"
        record.wall_time_s = time.monotonic() - started
        record.write()
        raise
    except Exception as error:  # one failed job must not stop the sweep
        record.status = sweep.FAILED
        expected = isinstance(error, (DataValidationError, JudgeErrorRateExceeded, ValueError))
        if not expected:
            log.exception("sweep job %d (%s) raised", num, run_name)
        message = str(error).strip() or type(error).__name__  # the whole problem list
        record.error = message if expected else f"{type(error).__name__}: {message}"
        record.error_type = type(error).__name__
        record.wall_time_s = time.monotonic() - started
        record.write()
        print(f"error: sweep job {num} ({run_name}) failed: {record.error}", file=sys.stderr)
        return None
    record.status = sweep.COMPLETED
    record.run_id = result.run_id
    record.wall_time_s = time.monotonic() - started
    record.write()
    print(f"sweep job {num} ({run_name}) done in {record.wall_time_s:.1f} s: {result.report_path}")
    return result


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
    from locomo_exp.compare import CompareError
    from locomo_exp.compare.job import headline_table, run_compare_job
    from locomo_exp.compare.lme_job import lme_run_dirs, run_lme_compare

    lme_dirs = lme_run_dirs(cfg.compare, start_dir)
    if lme_dirs is not None:  # LongMemEval runs: paired by question_id (docs/longmemeval.md)
        from locomo_exp.report.lme_compare import console_lines

        lme_uri = (
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
            if cfg.tracking.enabled
            else None
        )
        try:
            lme_job = run_lme_compare(
                cfg.compare, lme_dirs, output_dir, tracking_uri=lme_uri,
                experiment=cfg.tracking.experiment, run_name=cfg.tracking.run_name,
            )
        except (CompareError, ValueError, OSError) as error:
            fail(error)
        print(console_lines(lme_job.pairs))
        print(f"\nComparison: {lme_job.markdown}")
        if lme_job.run_id:
            print(f"MLflow: run {lme_job.run_id} in experiment '{cfg.tracking.experiment}'")
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
    if job.run_id:
        print(
            f"MLflow: run {job.run_id} in experiment '{cfg.tracking.experiment}'.\n"
            f"{tracking.open_ui_hint(str(job.tracking_uri), job.experiment_id)}"
        )


def run_longmemeval_from_cli(cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> None:
    """A LongMemEval job: score, print the figures and where the outputs are.

    Bad input prints one ``error:`` line and exits 1 (as for LoCoMo runs).

    Raises:
        SystemExit: with status 1 on bad input or an unusable output directory or store.
    """
    from locomo_exp import tracking
    from locomo_exp.data import DataValidationError
    from locomo_exp.judge.errors import JudgeBatchPending
    from locomo_exp.longmemeval_job import run_longmemeval
    from locomo_exp.report.lme import console_table as lme_table
    from locomo_exp.report.lme_summary import dry_run_of

    try:
        result = run_longmemeval(cfg, output_dir, start_dir)
        interrupts.raise_if_received()
    except KeyboardInterrupt as stop:
        _exit_interrupted(stop)
        return
    except JudgeBatchPending as waiting:  # judge.batch.wait=false: not a failure
        print(f"Outputs so far (no J yet): {output_dir}\n{waiting}")
        raise SystemExit(0) from None
    except (DataValidationError, ValueError, OSError) as error:
        fail(error)
    summary = result.summary
    counts = summary["input"]["counts"]
    verb = "read (judge dry run)" if dry_run_of(summary) else "scored"
    print(
        f"\nLongMemEval: {verb} {counted(counts['matched'], 'question')} from "
        f"{summary['input']['path']} ({counted(counts['skipped_ids'], 'id')} not in the "
        "reference skipped); accuracy in percent"
    )
    print(lme_table(summary))  # with the judge's checks' WARNING lines, as in the report
    print(f"\nReport: {result.report_path}")
    if result.tracking_uri:
        print(
            f"MLflow: run {result.run_id} in experiment '{result.experiment}'.\n"
            f"{tracking.open_ui_hint(result.tracking_uri, result.experiment_id)}"
        )


def _exit_interrupted(stop: KeyboardInterrupt) -> None:
    """Print the one interruption line and exit 130 (SIGINT) or 143 (SIGTERM)."""
    from locomo_exp.judge.errors import JudgeInterrupted


    if not isinstance(stop, JudgeInterrupted):  # incl. interrupts.Interrupted (SIGTERM: 143)
        stop = JudgeInterrupted(int(getattr(stop, "signum", signal.SIGINT)))
    print(stop.line(), file=sys.stderr)
    raise SystemExit(stop.exit_status) from None


def run_from_hydra(cfg: DictConfig) -> ExperimentResult | None:
    """Entry point called by ``locomo_exp/__main__.py``.

    Single run: expected errors (bad input, judge configuration, API failures) are
    printed as one clear message and end the process with exit code 1; nothing is
    retried. Ctrl-C or SIGTERM prints one line (``interrupted: N calls cached; ...``) and
    exits 130 or 143; the MLflow run ends KILLED. Multirun: see :func:`run_sweep_job` (a
    failed job does not stop the sweep).
    """
    from locomo_exp.data import DataValidationError
    from locomo_exp.experiment import JudgeErrorRateExceeded, run_experiment
    from locomo_exp.judge import JudgeBatchPending
    from locomo_exp.judge.protocols.templates.settings import apply_template_settings


    for noisy in ("httpx2", "httpx", "httpcore2", "httpcore", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)  # one INFO line per API call otherwise
    interrupts.install()  # SIGINT, SIGTERM recorded: a job that saw one never reports success
    if HydraConfig.get().mode == RunMode.MULTIRUN:
        try:
            return run_sweep_job(cfg)
        except KeyboardInterrupt as stop:
            _exit_interrupted(stop)
    keep_typed_text(cfg, task_overrides())
    try:
        apply_template_settings(cfg, task_overrides())
        typed = to_experiment_config(cfg)
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
    from locomo_exp.longmemeval_job import is_longmemeval

    if is_longmemeval(typed, Path.cwd()):
        run_longmemeval_from_cli(typed, output_dir, Path.cwd())
        return None
    try:
        result = run_experiment(typed, output_dir, Path.cwd(), long_lived=True)
        interrupts.raise_if_received()  # an interrupt swallowed on the way: not a success
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: one line, no traceback
        _exit_interrupted(stop)
    except JudgeBatchPending as waiting:
        print(f"F1 outputs: {output_dir}\n{waiting}")
        raise SystemExit(0) from None
    except (DataValidationError, JudgeErrorRateExceeded, ValueError) as error:
        fail(error)
    except OSError as error:  # read-only or full output directory, unreachable store ...
        fail(error)
    print_result(result)
    return result
