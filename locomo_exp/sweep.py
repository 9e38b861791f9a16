"""Hydra multirun sweeps: validated up front, one MLflow parent run, one child run per job.

``python -m locomo_exp -m judge.temperature=0.0,0.5,1.0`` runs three jobs. The
:class:`SweepCallback` (registered under ``hydra.callbacks`` in ``conf/config.yaml``)
makes the sweep one unit:

1. **Before any job** (``on_multirun_start``, in the launching process): every job's
   config is composed from the sweep's overrides exactly as Hydra will compose it, and
   checked (schema, ``data.path`` exists, judge settings and API key via
   :func:`locomo_exp.judge.preflight_judge`, one tracking store and experiment for all
   jobs). One bad value (``judge.temperature=0.5,1.5``) stops the whole sweep here:
   nothing is launched, no store is created, no API call is made.
2. The MLflow experiment is created once, then one **parent run** named after the sweep
   and tagged with the swept keys. Its id, the store and the swept keys are written to
   ``<sweep dir>/sweep_context.json``, which every job reads: this works with Hydra's
   basic launcher and with joblib's separate worker processes, and shares nothing else.
3. **Each job** (:func:`locomo_exp.cli.run_from_hydra` in multirun mode) is a child run
   (``parent_run_id`` passed explicitly), named and tagged with its swept values as
   Hydra's override strings give them (``judge.temperature=0.3``; float noise from
   ``range()`` is cleaned by :func:`locomo_exp.tracking.clean_float_text`). A failing job
   does not stop the others: its run ends FAILED and it writes ``sweep_job.json`` with
   status and error.
4. **After all jobs** (``on_multirun_end``): ``sweep_summary.json``, ``sweep_summary.md``
   and, for one numeric swept axis, ``sweep_plot.png`` are written to the sweep dir and
   logged as artifacts of the parent. Children left RUNNING (a killed worker) are marked
   FAILED. The parent ends FINISHED when every job completed and FAILED otherwise, and the
   process exits with status 1 when any job failed.

This module is part of the command-line layer: the callback prints the validation
errors and the summary table, and ends the process with :class:`SystemExit`.
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from locomo_exp import tracking
from locomo_exp.outputs import atomic_path, atomic_write_text
from locomo_exp.records import CATEGORY_IDS

log = logging.getLogger(__name__)

CONTEXT_FILE = "sweep_context.json"
"""Written to the sweep dir before any job starts; read by every job."""

JOB_RECORD_FILE = "sweep_job.json"
"""Written by each job to its own output dir: status, error, wall time."""

SUMMARY_JSON = "sweep_summary.json"
SUMMARY_MD = "sweep_summary.md"
SUMMARY_PLOT = "sweep_plot.png"

BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"

EXIT_INVALID_SWEEP = 2
"""Exit status when the sweep is refused before any job starts."""

EXIT_JOB_FAILED = 1
"""Exit status of a sweep in which at least one job failed (after all jobs ran)."""

COMPLETED = "COMPLETED"
FAILED = "FAILED"
PENDING = "PENDING"
"""A judge.mode=batch job with judge.batch.wait=false whose batches are still processing."""


# ----------------------------------------------------------------------------- values


def override_key(override: str) -> str:
    """The key part of an override string: ``judge.temperature=0.5`` -> ``judge.temperature``."""
    return override.split("=", 1)[0]


def display_value(text: str) -> str:
    """A swept value as shown in run names, tags and the summary.

    The override text as Hydra formats it (``0.5``, ``claude-sonnet-4-6``), with float
    noise of ``range()`` sweeps removed (``0.7000000000000001`` -> ``0.7``) and one pair of
    outer quotes dropped.
    """
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return tracking.clean_float_text(text)


def swept_values(task_overrides: list[str], swept_keys: list[str]) -> dict[str, str]:
    """The swept values of one job, in the order of ``swept_keys``.

    Args:
        task_overrides: the job's ``hydra.overrides.task`` (``["scorer=both",
            "judge.temperature=0.5"]``).
        swept_keys: keys swept by the sweep (``["judge.temperature"]``).

    Returns:
        ``{"judge.temperature": "0.5"}`` (display values; see :func:`display_value`).
    """
    by_key = {override_key(o): o.split("=", 1)[1] if "=" in o else "" for o in task_overrides}
    return {key: display_value(by_key[key]) for key in swept_keys if key in by_key}


def job_label(values: dict[str, str]) -> str:
    """Run name of a child: ``judge.temperature=0.5, judge.model=claude-sonnet-4-6``."""
    label = ", ".join(f"{key}={value}" for key, value in values.items())
    return label[:250] or "job"


def tag_name(key: str) -> str:
    """MLflow tag name of a swept key (``+judge.x`` -> ``judge.x``; illegal characters -> ``_``)."""
    return tracking.metric_name(key.lstrip("+~"))


# ----------------------------------------------------------------------------- the plan


@dataclass
class SweepPlan:
    """What a sweep will run, derived from its overrides before any job starts.

    Attributes:
        swept_overrides: the sweep overrides as typed (``judge.temperature=0.0,0.5,1.0``).
        swept_keys: their keys.
        fixed_overrides: the other task overrides (same in every job).
        jobs: each job's full override list, in job-number order; ``None`` when the
            sweeper is not Hydra's basic sweeper (jobs are then not known in advance).
    """

    swept_overrides: list[str]
    swept_keys: list[str]
    fixed_overrides: list[str]
    jobs: Optional[list[list[str]]]

    @property
    def name(self) -> str:
        """``sweep judge.temperature=0.0,0.5,1.0`` (the parent run's default name)."""
        return (
            ("sweep " + " ".join(self.swept_overrides))[:250] if self.swept_overrides else "sweep"
        )


def plan_sweep(config: DictConfig) -> SweepPlan:
    """Expand a multirun's overrides into jobs the way Hydra's basic sweeper does.

    Args:
        config: the multirun's master config (with its ``hydra`` node).

    Returns:
        The :class:`SweepPlan`.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    task = [
        str(o) for o in OmegaConf.to_container(config.hydra.overrides.task, resolve=False) or []
    ]
    sweeper = config.hydra.sweeper
    params = OmegaConf.select(sweeper, "params", default=None) or {}
    arguments = [f"{key}={value}" for key, value in params.items()] + task
    from hydra.core.global_hydra import GlobalHydra

    hydra = GlobalHydra.instance()
    loader = hydra.config_loader() if hydra.is_initialized() else None  # for glob() sweeps
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(arguments)
    swept_overrides = [a for a, o in zip(arguments, parsed) if o.is_sweep_override()]
    swept_keys = [o.get_key_element() for o in parsed if o.is_sweep_override()]
    fixed = [a for a, o in zip(arguments, parsed) if not o.is_sweep_override()]
    jobs: Optional[list[list[str]]] = None
    if OmegaConf.select(sweeper, "_target_", default="") == BASIC_SWEEPER:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

        jobs = BasicSweeper.split_arguments(parsed, None)[0]
    return SweepPlan(swept_overrides, swept_keys, fixed, jobs)


def job_problems(cfg: Any, start_dir: Path) -> list[str]:
    """Problems that would make a job fail whatever happens at run time.

    Checks that ``data.path`` (and ``data.categories_from``) name existing files, and,
    when the judge runs, :func:`locomo_exp.judge.preflight_judge` (temperature range, the
    model's acceptance of a temperature, API key, ...). The file's content is not read:
    invalid records fail that job alone (see :mod:`locomo_exp.data`).

    Args:
        cfg: the job's typed :class:`~locomo_exp.config.ExperimentConfig`.
        start_dir: directory relative paths are resolved against.

    Returns:
        One message per problem (empty when the job can start).
    """
    from locomo_exp.experiment import resolve_path

    problems: list[str] = []
    if not cfg.data.path:
        problems.append("data.path is not set")
    else:
        path = resolve_path(cfg.data.path, start_dir)
        if not path.is_file():
            problems.append(f"data.path={cfg.data.path}: no such file ({path})")
    if cfg.data.categories_from:
        path = resolve_path(cfg.data.categories_from, start_dir)
        if not path.is_file():
            problems.append(
                f"data.categories_from={cfg.data.categories_from}: no such file ({path})"
            )
    if cfg.scorer.uses_judge:
        from locomo_exp.judge import preflight_judge

        try:
            preflight_judge(cfg.judge, [])
        except ValueError as error:
            problems.append(str(error))
    return problems


def compose_job(master: DictConfig, overrides: list[str]) -> Any:
    """Compose one job's typed config from the master config, as the launcher will.

    Raises:
        hydra.errors.HydraException, omegaconf.errors.OmegaConfBaseException: when the
            overrides do not compose (unknown key, wrong type).
    """
    from hydra.core.global_hydra import GlobalHydra

    from locomo_exp.config import keep_typed_text, to_experiment_config

    loader = GlobalHydra.instance().config_loader()
    job_cfg = loader.load_sweep_config(master_config=master, sweep_overrides=list(overrides))
    task = OmegaConf.to_container(job_cfg.hydra.overrides.task, resolve=False)
    task_overrides = [str(o) for o in task] if isinstance(task, list) else []
    with read_write(job_cfg), open_dict(job_cfg):
        del job_cfg["hydra"]
    keep_typed_text(job_cfg, task_overrides)  # data.path=2024.10 stays 2024.10
    return to_experiment_config(job_cfg)


def validate_jobs(
    master: DictConfig, plan: SweepPlan, start_dir: Path
) -> tuple[list[str], Optional[tuple[bool, Optional[str], str]]]:
    """Compose and check every job; return the problems and the common tracking target.

    Args:
        master: the multirun's master config.
        plan: from :func:`plan_sweep`; with ``jobs=None`` only the master is checked.
        start_dir: directory relative paths are resolved against.

    Returns:
        ``(problems, tracking)``: one line per problem, prefixed with the job number and
        its swept values; ``tracking`` is ``(enabled, uri, experiment)`` shared by all
        jobs (``None`` when no job composed).
    """
    from omegaconf.errors import MissingMandatoryValue

    jobs = plan.jobs if plan.jobs is not None else [plan.fixed_overrides]
    problems: list[str] = []
    targets: dict[tuple[bool, Optional[str], str], list[int]] = {}
    for num, overrides in enumerate(jobs):
        label = f"job {num} ({job_label(swept_values(overrides, plan.swept_keys))})"
        try:
            cfg = compose_job(master, overrides)
        except MissingMandatoryValue as error:
            problems.append(f"{label}: {error.full_key or 'a required value'} is required")
            continue
        except Exception as error:  # noqa: BLE001 - any composition error is reported
            problems.append(f"{label}: {type(error).__name__}: {error}".splitlines()[0])
            continue
        problems.extend(f"{label}: {problem}" for problem in job_problems(cfg, start_dir))
        uri = (
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
            if cfg.tracking.enabled
            else None
        )
        targets.setdefault((cfg.tracking.enabled, uri, cfg.tracking.experiment), []).append(num)
    if len(targets) > 1:
        shown = "; ".join(
            f"jobs {nums}: {'uri=' + str(uri) + ' experiment=' + exp if on else 'tracking off'}"
            for (on, uri, exp), nums in targets.items()
        )
        problems.append(
            "tracking must be the same for every job of a sweep (one store, one experiment); "
            f"do not sweep tracking.*: {shown}"
        )
    target = next(iter(targets)) if len(targets) == 1 else None
    return problems, target


# ----------------------------------------------------------------------------- context files


@dataclass
class SweepContext:
    """What every job of a sweep needs to know; stored as ``<sweep dir>/sweep_context.json``.

    Attributes:
        name: the sweep's (parent run's) name.
        sweep_dir: absolute sweep directory.
        swept_keys: keys swept.
        swept_overrides: sweep overrides as typed.
        jobs: expected override lists by job number, or ``None``.
        parent_run_id: MLflow parent run, ``None`` with ``tracking=none``.
        tracking_uri: the one store of the sweep, or ``None``.
        experiment: MLflow experiment name, or ``None``.
        started_at: Unix time the sweep started.
    """

    name: str
    sweep_dir: str
    swept_keys: list[str]
    swept_overrides: list[str]
    jobs: Optional[list[list[str]]] = None
    parent_run_id: Optional[str] = None
    tracking_uri: Optional[str] = None
    experiment: Optional[str] = None
    started_at: float = field(default_factory=time.time)

    def write(self) -> Path:
        """Write the context file (atomically) and return its path."""
        path = Path(self.sweep_dir) / CONTEXT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def read(cls, sweep_dir: Path) -> Optional[SweepContext]:
        """Read the context of a sweep dir; ``None`` when there is none (no callback)."""
        path = Path(sweep_dir) / CONTEXT_FILE
        if not path.is_file():
            return None
        return cls(**json.loads(path.read_text(encoding="utf-8")))


@dataclass
class JobRecord:
    """What one job reports to the sweep (``<job output dir>/sweep_job.json``).

    Attributes:
        job: Hydra job number.
        overrides: the job's task overrides.
        swept: swept key -> display value.
        run_name: the child run's name.
        status: ``COMPLETED``, ``FAILED`` or ``PENDING`` (batches submitted, collect later).
        error: the error of a failed job (the whole message, e.g. every invalid record).
        error_type: the exception's class name.
        output_dir: the job's output dir (absolute).
        run_id: the child run, when one was created.
        wall_time_s: the job's wall time, seconds.
        f1_variant: the F1 variant reported as ``f1`` (``f1.variant``).
    """

    job: int
    overrides: list[str]
    swept: dict[str, str]
    run_name: str
    status: str
    output_dir: str
    error: Optional[str] = None
    error_type: Optional[str] = None
    run_id: Optional[str] = None
    wall_time_s: Optional[float] = None
    f1_variant: Optional[str] = None

    def write(self) -> Path:
        """Write the record into its output dir and return the path."""
        path = Path(self.output_dir) / JOB_RECORD_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n")
        return path


def read_job_records(sweep_dir: Path) -> dict[int, JobRecord]:
    """Every ``sweep_job.json`` under a sweep dir, by job number (any ``hydra.sweep.subdir``)."""
    records: dict[int, JobRecord] = {}
    for path in sorted(Path(sweep_dir).rglob(JOB_RECORD_FILE)):
        try:
            record = JobRecord(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError) as error:
            log.warning("sweep: unreadable job record %s: %s", path, error)
            continue
        records[record.job] = record
    return records


# ----------------------------------------------------------------------------- the summary


def _mean(by_key: dict[str, Any], key: str) -> Optional[float]:
    value = (by_key.get(key) or {}).get("mean")
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def summary_row(record: JobRecord, summary: Optional[dict[str, Any]]) -> dict[str, Any]:
    """One row of the sweep summary from a job's record and its ``summary.json``.

    Args:
        record: the job's record.
        summary: the job's ``summary.json`` (``None`` for a failed job).

    Returns:
        ``job, status, swept, run_name, run_id, output_dir, error, wall_time_s`` and, for
        a completed job, ``n_questions``, ``f1`` (key -> mean, 0-1, keys ``"1"``..``"5"``,
        ``overall_1_4``, ``overall``), ``f1_variant``, ``j_overall`` and
        ``j_std_across_runs`` (0-100), ``j`` (category key -> mean, 0-100),
        ``parse_failures``, ``api_errors``, ``input_tokens``, ``output_tokens``,
        ``estimated_cost_usd``. Missing values are ``None``.
    """
    row: dict[str, Any] = {
        "job": record.job,
        "status": record.status,
        "swept": dict(record.swept),
        "run_name": record.run_name,
        "run_id": record.run_id,
        "output_dir": record.output_dir,
        "error": record.error,
        "wall_time_s": record.wall_time_s,
        "n_questions": None,
        "f1_variant": None,
        "f1": {},
        "j_overall": None,
        "j_std_across_runs": None,
        "j": {},
        "parse_failures": None,
        "api_errors": None,
        "input_tokens": None,
        "output_tokens": None,
        "estimated_cost_usd": None,
    }
    if summary is None:
        return row
    row["n_questions"] = (summary.get("counts") or {}).get("overall")
    f1 = (summary.get("metrics") or {}).get("f1") or {}
    row["f1"] = {key: _mean(f1, key) for key in f1}
    row["f1_variant"] = record.f1_variant if f1 else None
    judge = summary.get("judge") or {}
    j = judge.get("j") or {}
    if j:
        overall = j.get("overall") or {}
        row["j_overall"] = _mean(j, "overall")
        std = overall.get("std_across_runs")
        row["j_std_across_runs"] = float(std) if isinstance(std, (int, float)) else None
        row["j"] = {key: _mean(j, key) for key in j}
    if judge:
        counts = judge.get("counts") or {}
        tokens = judge.get("tokens") or {}
        row["parse_failures"] = counts.get("parse_failure")
        row["api_errors"] = counts.get("api_error")
        row["input_tokens"] = tokens.get("input")
        row["output_tokens"] = tokens.get("output")
        row["estimated_cost_usd"] = judge.get("estimated_cost_usd")
    return row


def build_sweep_summary(context: SweepContext, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The content of ``sweep_summary.json``.

    Args:
        context: the sweep's context.
        rows: :func:`summary_row` per job, in job order.

    Returns:
        Sweep identity (name, dir, parent run, store, experiment, swept keys), ``n_jobs``,
        ``n_failed``, ``failed_jobs`` (job, swept values, error), ``scales`` and ``rows``.
    """
    failed = [r for r in rows if r["status"] == FAILED]
    pending = [r for r in rows if r["status"] == PENDING]
    return {
        "sweep": context.name,
        "sweep_dir": context.sweep_dir,
        "swept_keys": context.swept_keys,
        "swept_overrides": context.swept_overrides,
        "parent_run_id": context.parent_run_id,
        "tracking_uri": context.tracking_uri,
        "experiment": context.experiment,
        "n_jobs": len(rows),
        "n_failed": len(failed),
        "failed_jobs": [
            {"job": r["job"], "swept": r["swept"], "error": r["error"]} for r in failed
        ],
        "n_pending": len(pending),
        "pending_jobs": [{"job": r["job"], "swept": r["swept"]} for r in pending],
        "scales": {"f1": "0-1", "j": "0-100", "wall_time_s": "seconds", "cost": "USD"},
        "rows": rows,
    }


def _cell(value: Any, fmt: str = ".2f", scale: float = 1.0) -> str:
    if value is None:
        return "—"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if fmt == "d":
            return str(round(value * scale))
        return format(value * scale, fmt)
    return str(value).replace("|", "\\|")


def render_sweep_summary(summary: dict[str, Any]) -> str:
    """``sweep_summary.md``: one row per job, then the failed jobs with their errors.

    F1 is shown in percent (variant in the heading), J on 0-100 as mean ± the standard
    deviation across runs, cost in US dollars, wall time in seconds.
    """
    rows = summary["rows"]
    keys = summary["swept_keys"]
    categories = [str(c) for c in CATEGORY_IDS]
    variants = sorted({r["f1_variant"] for r in rows if r["f1_variant"]})
    lines = [
        f"# Sweep: {summary['sweep']}",
        "",
        f"- sweep dir: `{summary['sweep_dir']}`",
        f"- jobs: {summary['n_jobs']} ({summary['n_failed']} failed"
        + (f", {summary['n_pending']} with judge batches still processing: run the same "
           "command again to collect" if summary.get("n_pending") else "")
        + ")",
    ]
    if summary.get("parent_run_id"):
        lines.append(
            f"- MLflow: parent run `{summary['parent_run_id']}` in experiment "
            f"`{summary['experiment']}` of `{summary['tracking_uri']}`"
        )
    lines.append(
        f"- F1 in percent ({', '.join(variants) or 'n/a'} variant); J on 0-100, "
        "mean ± standard deviation of the overall J across runs"
    )
    lines.append("")
    header = [
        "job",
        *keys,
        "status",
        "F1 overall",
        *(f"F1 c{c}" for c in categories),
        "J ± std",
        "parse failures",
        "API errors",
        "input tokens",
        "output tokens",
        "cost $",
        "wall s",
    ]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for r in rows:
        j = "—"
        if r["j_overall"] is not None:
            j = f"{r['j_overall']:.2f}"
            if r["j_std_across_runs"] is not None:
                j += f" ± {r['j_std_across_runs']:.2f}"
        cells = [
            str(r["job"]),
            *(_cell(r["swept"].get(key)) for key in keys),
            r["status"],
            _cell(r["f1"].get("overall"), scale=100.0),
            *(_cell(r["f1"].get(c), scale=100.0) for c in categories),
            j,
            _cell(r["parse_failures"], "d"),
            _cell(r["api_errors"], "d"),
            _cell(r["input_tokens"], "d"),
            _cell(r["output_tokens"], "d"),
            _cell(r["estimated_cost_usd"], ".4f"),
            _cell(r["wall_time_s"], ".1f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if summary["failed_jobs"]:
        lines += ["", "## Failed jobs", ""]
        for failed in summary["failed_jobs"]:
            label = job_label(failed["swept"])
            error_text = (failed["error"] or "no error recorded").replace("\n", "\n  ")
            lines.append(f"- job {failed['job']} ({label}): {error_text}")
    return "\n".join(lines) + "\n"


def numeric_axis(summary: dict[str, Any]) -> Optional[str]:
    """The swept key when the sweep has exactly one swept key and all its values are numbers."""
    keys = summary["swept_keys"]
    if len(keys) != 1:
        return None
    for row in summary["rows"]:
        try:
            value = float(row["swept"].get(keys[0], "nan"))
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
    return keys[0]


def plot_sweep(summary: dict[str, Any], path: Path) -> Optional[Path]:
    """Main metric against the swept value, for a sweep with one numeric axis.

    J overall (0-100) with error bars of ± its standard deviation across runs when the
    judge ran, and F1 overall in percent; failed jobs are left out.

    Returns:
        ``path``, or ``None`` when there is no numeric axis or nothing to plot.
    """
    key = numeric_axis(summary)
    if key is None:
        return None
    done = sorted((float(r["swept"][key]), r) for r in summary["rows"] if r["status"] == COMPLETED)
    series = []
    j_points = [
        (x, r["j_overall"], r["j_std_across_runs"]) for x, r in done if r["j_overall"] is not None
    ]
    if j_points:
        series.append(("J overall (0-100)", j_points))
    f1_points = [
        (x, r["f1"]["overall"] * 100.0, None) for x, r in done if r["f1"].get("overall") is not None
    ]
    if f1_points:
        series.append(("F1 overall (percent)", f1_points))
    if not series:
        return None
    from locomo_exp.plots import _pyplot

    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4))
    for label, points in series:
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        errors = [p[2] if p[2] is not None else 0.0 for p in points]
        axis.errorbar(
            xs, ys, yerr=errors if any(errors) else None, marker="o", capsize=3, label=label
        )
    axis.set_xlabel(key)
    axis.set_ylabel("score")
    axis.set_title(summary["sweep"][:80])
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=100, format="png")
    plt.close(figure)
    return path


# ----------------------------------------------------------------------------- the callback


def _sweep_dir(config: DictConfig, start_dir: Path) -> Path:
    return (start_dir / Path(str(config.hydra.sweep.dir)).expanduser()).resolve()


class SweepCallback(Callback):
    """Hydra callback making a multirun one validated, tracked, summarised sweep.

    Registered in ``conf/config.yaml``::

        hydra:
          callbacks:
            sweep:
              _target_: locomo_exp.sweep.SweepCallback

    Does nothing in single-run mode. See the module docstring for what happens when.
    The object is pickled into joblib workers; it holds only plain data.
    """

    def __init__(self) -> None:
        self._context: Optional[SweepContext] = None
        self._finished = False

    # -- start ---------------------------------------------------------------------
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Validate every job, create the experiment and the parent run, write the context.

        Hydra turns an exception of a callback into a warning and goes on, so every
        failure here ends the process with :class:`SystemExit` instead.

        Raises:
            SystemExit: with :data:`EXIT_INVALID_SWEEP` when any job's config is invalid
                (after printing every problem), or when the tracking store cannot be
                set up; nothing has been launched then.
        """
        try:
            self._start(config)
        except SystemExit:
            raise
        except Exception as error:  # Hydra would only warn and launch anyway
            log.debug("sweep start failed", exc_info=True)
            sys.stderr.write(f"error: the sweep was not started: {type(error).__name__}: {error}\n")
            raise SystemExit(EXIT_INVALID_SWEEP) from None

    def _start(self, config: DictConfig) -> None:
        start_dir = Path(str(config.hydra.runtime.cwd or Path.cwd())).resolve()
        plan = plan_sweep(config)
        problems, target = validate_jobs(config, plan, start_dir)
        if problems:
            n_jobs = len(plan.jobs) if plan.jobs is not None else 1
            sys.stderr.write(
                f"error: the sweep was not started ({n_jobs} job(s) planned; no job ran and no "
                "API call was made):\n" + "".join(f"  - {p}\n" for p in problems)
            )
            raise SystemExit(EXIT_INVALID_SWEEP)
        sweep_dir = _sweep_dir(config, start_dir)
        enabled, uri, experiment = target if target is not None else (False, None, "")
        run_name = OmegaConf.select(config, "tracking.run_name", default=None) or plan.name
        context = SweepContext(
            name=str(run_name),
            sweep_dir=str(sweep_dir),
            swept_keys=plan.swept_keys,
            swept_overrides=plan.swept_overrides,
            jobs=plan.jobs,
        )
        if enabled and uri is not None:
            context.tracking_uri = uri
            context.experiment = experiment
            context.parent_run_id = self._start_parent(config, context, plan)
        context.write()
        self._context = context
        atexit.register(self._finish_at_exit)
        planned = str(len(plan.jobs)) if plan.jobs is not None else "?"
        log.info(
            "sweep %r: %s jobs, dir %s%s",
            context.name,
            planned,
            sweep_dir,
            f", MLflow parent run {context.parent_run_id}" if context.parent_run_id else "",
        )

    def _start_parent(self, config: DictConfig, context: SweepContext, plan: SweepPlan) -> str:
        import mlflow

        from locomo_exp import __version__

        assert context.tracking_uri is not None and context.experiment is not None
        experiment_id = tracking.ensure_experiment(context.tracking_uri, context.experiment)
        launcher = str(OmegaConf.select(config, "hydra.launcher._target_", default="") or "")
        fixed = [o for o in plan.fixed_overrides if not tracking.is_secret_key(override_key(o))]
        tags = {
            "locomo_exp.version": __version__,
            "sweep.role": "parent",
            "sweep.keys": ", ".join(plan.swept_keys),
            "sweep.overrides": " ".join(plan.swept_overrides)[:5000],
            "sweep.fixed_overrides": " ".join(fixed)[:5000],
            "sweep.dir": context.sweep_dir,
            "sweep.launcher": launcher.rsplit(".", 1)[-1],
            "sweep.n_jobs": str(len(plan.jobs)) if plan.jobs is not None else "unknown",
        }
        client = mlflow.MlflowClient(tracking_uri=context.tracking_uri)
        run = client.create_run(experiment_id, run_name=context.name, tags=tags)
        return run.info.run_id

    # -- end -----------------------------------------------------------------------
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Write the summary, end the parent run, and exit non-zero if a job failed.

        Raises:
            SystemExit: with :data:`EXIT_JOB_FAILED` when at least one job failed.
        """
        if self._context is None:
            return
        try:
            summary = self.finish()
        except Exception as error:  # Hydra would only warn and exit 0
            log.exception("sweep: could not write the summary")
            sys.stderr.write(f"error: the sweep summary failed: {type(error).__name__}: {error}\n")
            raise SystemExit(EXIT_JOB_FAILED) from None
        print(f"\nSweep summary: {Path(self._context.sweep_dir) / SUMMARY_MD}")
        print(render_sweep_summary(summary))
        if self._context.parent_run_id:
            print(
                f"MLflow: parent run {self._context.parent_run_id} in experiment "
                f"'{self._context.experiment}'.\n"
                f"  Open the UI with: mlflow ui --backend-store-uri {self._context.tracking_uri}"
            )
        if summary["n_failed"]:
            failed = ", ".join(
                f"{f['job']} ({job_label(f['swept'])})" for f in summary["failed_jobs"]
            )
            sys.stderr.write(
                f"error: {summary['n_failed']} of {summary['n_jobs']} sweep jobs failed: {failed}\n"
            )
            raise SystemExit(EXIT_JOB_FAILED)

    def _finish_at_exit(self) -> None:
        if not self._finished and self._context is not None:
            log.warning("sweep ended before all jobs returned; closing the parent run as FAILED")
            try:
                self.finish(interrupted=True)
            except Exception:  # best effort while the process exits
                log.exception("sweep: could not write the summary at exit")

    def finish(self, *, interrupted: bool = False) -> dict[str, Any]:
        """Gather job records, write the summary files, log them, end the parent run.

        Args:
            interrupted: the sweep did not reach its end (the parent ends FAILED).

        Returns:
            The summary (as in ``sweep_summary.json``).
        """
        context = self._context
        assert context is not None
        self._finished = True
        sweep_dir = Path(context.sweep_dir)
        records = read_job_records(sweep_dir)
        children = self._children(context)
        expected = range(len(context.jobs)) if context.jobs is not None else sorted(records)
        rows = []
        for num in expected:
            record = records.get(num)
            child = children.get(num)
            if record is None:
                overrides = context.jobs[num] if context.jobs is not None else []
                swept = swept_values(overrides, context.swept_keys)
                record = JobRecord(
                    job=num,
                    overrides=overrides,
                    swept=swept,
                    run_name=job_label(swept),
                    status=FAILED,
                    output_dir="",
                    error="the job did not report a result (crashed, killed or not run)",
                )
            if child is not None:
                record.run_id = record.run_id or child.info.run_id
                if child.info.status == "RUNNING":
                    self._client(context).set_terminated(child.info.run_id, "FAILED")
            summary = None
            if record.status == COMPLETED:
                summary_path = Path(record.output_dir) / "summary.json"
                try:
                    summary = json.loads(summary_path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as error:
                    record.status = FAILED
                    record.error = f"summary.json unreadable: {error}"
            rows.append(summary_row(record, summary))
        summary = build_sweep_summary(context, rows)
        json_path = sweep_dir / SUMMARY_JSON
        md_path = sweep_dir / SUMMARY_MD
        atomic_write_text(json_path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        atomic_write_text(md_path, render_sweep_summary(summary))
        files = [json_path, md_path]
        try:
            plot = plot_sweep(summary, sweep_dir / SUMMARY_PLOT)
        except Exception:  # a plot must not lose the summary
            log.exception("sweep: could not draw %s", SUMMARY_PLOT)
            plot = None
        if plot is not None:
            files.append(plot)
        if context.parent_run_id:
            client = self._client(context)
            for path in files:
                client.log_artifact(context.parent_run_id, str(path))
            client.set_tag(context.parent_run_id, "sweep.n_failed", str(summary["n_failed"]))
            client.set_tag(
                context.parent_run_id,
                "sweep.failed_jobs",
                ", ".join(str(f["job"]) for f in summary["failed_jobs"]) or "none",
            )
            status = "FAILED" if (summary["n_failed"] or interrupted) else "FINISHED"
            client.set_terminated(context.parent_run_id, status)
            log.info("MLflow parent run %s ended %s", context.parent_run_id, status)
        return summary

    @staticmethod
    def _client(context: SweepContext) -> Any:
        import mlflow

        return mlflow.MlflowClient(tracking_uri=context.tracking_uri)

    def _children(self, context: SweepContext) -> dict[int, Any]:
        if not context.parent_run_id:
            return {}
        client = self._client(context)
        experiment = client.get_experiment_by_name(context.experiment)
        runs = client.search_runs(
            [experiment.experiment_id],
            filter_string=f"tags.`mlflow.parentRunId` = '{context.parent_run_id}'",
            max_results=10000,
        )
        children: dict[int, Any] = {}
        for run in runs:
            num = run.data.tags.get("sweep.job_num")
            if num is not None and num.isdigit():
                children[int(num)] = run
        return children


__all__ = [
    "CONTEXT_FILE",
    "JOB_RECORD_FILE",
    "SUMMARY_JSON",
    "SUMMARY_MD",
    "SUMMARY_PLOT",
    "JobRecord",
    "SweepCallback",
    "SweepContext",
    "SweepPlan",
    "build_sweep_summary",
    "display_value",
    "job_label",
    "job_problems",
    "plan_sweep",
    "plot_sweep",
    "render_sweep_summary",
    "summary_row",
    "swept_values",
    "validate_jobs",
]
