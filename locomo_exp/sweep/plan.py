"""A sweep's plan: its jobs, composed and checked before any of them runs.

Every job's config is composed from the sweep's overrides exactly as Hydra will compose
it, and checked (schema, ``data.path`` exists, judge settings and API key via
:func:`locomo_exp.judge.preflight_judge`, one tracking store and experiment for all jobs).
One bad value (``judge.temperature=0.5,1.5``) stops the whole sweep before any job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from locomo_exp import tracking

if TYPE_CHECKING:
    from locomo_exp.benchmarks.plugin import SweepPlugin

BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
"""``hydra.sweeper._target_`` of Hydra's default sweeper (the one whose jobs we can list)."""


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
    """A job in messages and the summary: ``judge.temperature=0.5, judge.model=...``."""
    label = ", ".join(f"{key}={value}" for key, value in values.items())
    return label[:250] or "job"


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
    jobs: list[list[str]] | None

    @property
    def name(self) -> str:
        """``sweep judge.temperature=0.0,0.5,1.0`` (the parent run's default name)."""
        return (
            ("sweep " + " ".join(self.swept_overrides))[:250] if self.swept_overrides else "sweep"
        )

    def values_by_key(self) -> dict[str, list[str]]:
        """Swept key -> its display values in job order (from the override text without jobs)."""
        if self.jobs is not None:
            values: dict[str, list[str]] = {key: [] for key in self.swept_keys}
            for job in self.jobs:
                for key, value in swept_values(job, self.swept_keys).items():
                    values[key].append(value)
            return values
        return {override_key(o): [display_value(o.split("=", 1)[1])] for o in self.swept_overrides}


def expand_basic_sweep(parsed: list[Any]) -> list[list[str]]:
    """The jobs Hydra's basic sweeper will launch, in job-number order.

    PRIVATE HYDRA API: ``BasicSweeper.split_arguments`` lives in ``hydra._internal``;
    Hydra has no public way to list a sweep's jobs before launching them. This is the
    only use of it; hydra-core is pinned to 1.3.x in ``pyproject.toml``. Check this
    function first when upgrading Hydra.

    Args:
        parsed: the parsed overrides (``OverridesParser.parse_overrides``).

    Returns:
        One override list per job.
    """
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    batches: list[list[list[str]]] = BasicSweeper.split_arguments(parsed, None)
    return batches[0]


def plan_sweep(config: DictConfig) -> SweepPlan:
    """Expand a multirun's overrides into jobs the way Hydra's basic sweeper does.

    Args:
        config: the multirun's master config (with its ``hydra`` node).

    Returns:
        The :class:`SweepPlan` (``jobs=None`` for another sweeper).
    """
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    task = [
        str(o) for o in OmegaConf.to_container(config.hydra.overrides.task, resolve=False) or []
    ]
    sweeper = config.hydra.sweeper
    params = OmegaConf.select(sweeper, "params", default=None) or {}
    arguments = [f"{key}={value}" for key, value in params.items()] + task
    hydra = GlobalHydra.instance()
    loader = hydra.config_loader() if hydra.is_initialized() else None  # for glob() sweeps
    parsed = OverridesParser.create(config_loader=loader).parse_overrides(arguments)
    swept_overrides = [a for a, o in zip(arguments, parsed, strict=True) if o.is_sweep_override()]
    swept_keys = [o.get_key_element() for o in parsed if o.is_sweep_override()]
    fixed = [a for a, o in zip(arguments, parsed, strict=True) if not o.is_sweep_override()]
    jobs: list[list[str]] | None = None
    if OmegaConf.select(sweeper, "_target_", default="") == BASIC_SWEEPER:
        jobs = expand_basic_sweep(parsed)
    return SweepPlan(swept_overrides, swept_keys, fixed, jobs)


def job_problems(cfg: Any, start_dir: Path) -> list[str]:
    """Problems that would make a job fail whatever happens at run time.

    Checks that ``data.path`` (one file, a list of files or glob patterns, pooled) or
    ``data.runs`` and ``data.categories_from`` name existing files, that MLflow can use
    ``tracking.uri`` (:func:`locomo_exp.tracking.check_tracking_uri`), and,
    when the judge runs, :func:`locomo_exp.judge.preflight_judge` (temperature range, the
    model's acceptance of a temperature, API key, ...). The file's content is not read:
    invalid records fail that job alone (see :mod:`locomo_exp.data`).

    Args:
        cfg: the job's typed :class:`~locomo_exp.config.ExperimentConfig`.
        start_dir: directory relative paths are resolved against.

    Returns:
        One message per problem (empty when the job can start).
    """
    from locomo_exp.data import DataValidationError, expand_paths
    from locomo_exp.experiment import resolve_path

    problems: list[str] = []
    key, spec = ("data.runs", cfg.data.runs) if cfg.data.runs else ("data.path", cfg.data.path)
    if not spec or spec == "???":
        problems.append("data.path is not set")
    else:
        try:  # one path, a list of paths or globs (pooled), or data.runs
            paths = expand_paths(spec if isinstance(spec, str) else list(spec), start_dir)
        except DataValidationError as error:
            problems += [f"{key}: {problem}" for problem in error.problems]
        else:
            for path in paths:
                if not path.is_file():
                    problems.append(f"{key}: no such file ({path})")
    if cfg.data.categories_from:
        path = resolve_path(cfg.data.categories_from, start_dir)
        if not path.is_file():
            problems.append(
                f"data.categories_from={cfg.data.categories_from}: no such file ({path})"
            )
    if cfg.tracking.enabled:
        try:
            tracking.check_tracking_uri(
                tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir),
                connect_timeout_s=cfg.tracking.connect_timeout_s,
            )
        except ValueError as error:
            problems.append(str(error))
    try:
        plugin = _plugin(cfg, start_dir)  # a registered benchmark's job: its own checks
    except ValueError as error:  # a benchmark without sweep hooks
        plugin = None
        problems.append(str(error))
    if plugin is not None:
        problems += plugin.sweep_problems(cfg, start_dir)
    if cfg.scorer.uses_judge:
        from locomo_exp.benchmarks.registry import protocols_in_use
        from locomo_exp.judge import preflight_judge

        try:
            with protocols_in_use():  # the judge resolves the plug-ins' protocols by name
                judge = cfg.judge if plugin is None else plugin.sweep_judge_config(cfg.judge)
                preflight_judge(judge, [])
        except ValueError as error:
            problems.append(str(error))
    return problems


def _plugin(cfg: Any, start_dir: Path) -> SweepPlugin:
    """The registered benchmark that runs the job (LoCoMo, the last, claims the rest).

    Raises:
        ValueError: a plug-in claims the job but has no sweep hooks (one line).
    """
    from locomo_exp.benchmarks.plugin import SweepPlugin
    from locomo_exp.benchmarks.registry import plugin_for

    plugin = plugin_for(cfg, start_dir)
    if not isinstance(plugin, SweepPlugin):
        raise ValueError(f"{plugin.title} jobs do not run in a sweep: run each job on its own")
    return plugin


def _benchmark_title(cfg: Any, start_dir: Path) -> str:
    """The title of the registered benchmark a job is (``LoCoMo``: the default, the last)."""
    from locomo_exp.benchmarks.registry import plugin_for

    return plugin_for(cfg, start_dir).title


def compose_job(master: DictConfig, overrides: list[str], job_num: int = 0) -> Any:
    """Compose one job's typed config from the master config, as the launcher will.

    The job's Hydra config (with ``hydra.job.num``) is current while the config resolves,
    as in the job itself, so ``judge.cache_path=cache_${hydra:job.num}.sqlite`` resolves
    to ``cache_0.sqlite`` for job 0; the previous Hydra config is restored afterwards.

    Args:
        master: the multirun's master config.
        overrides: the job's override list.
        job_num: the job's number.

    Returns:
        The job's typed :class:`~locomo_exp.config.ExperimentConfig`.

    Raises:
        hydra.errors.HydraException, omegaconf.errors.OmegaConfBaseException: when the
            overrides do not compose (unknown key, wrong type).
        locomo_exp.config.ConfigValueError: a value out of range or a name no registry
            knows (:func:`locomo_exp.benchmarks.names.registry_name_problems`).
    """
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    from locomo_exp.benchmarks.names import registry_name_problems
    from locomo_exp.config import to_experiment_config
    from locomo_exp.config.checks import keep_typed_text

    loader = GlobalHydra.instance().config_loader()
    job_cfg = loader.load_sweep_config(master_config=master, sweep_overrides=list(overrides))
    with read_write(job_cfg.hydra.job), open_dict(job_cfg.hydra.job):
        job_cfg.hydra.job.num = job_num
        job_cfg.hydra.job.id = f"job_id_for_{job_num}"
    task = OmegaConf.to_container(job_cfg.hydra.overrides.task, resolve=False)
    task_overrides = [str(o) for o in task] if isinstance(task, list) else []
    hydra_config = HydraConfig.instance()
    previous = hydra_config.cfg
    hydra_config.set_config(job_cfg)
    try:
        with read_write(job_cfg), open_dict(job_cfg):
            del job_cfg["hydra"]
        keep_typed_text(job_cfg, task_overrides)  # data.path=2024.10 stays 2024.10
        return to_experiment_config(job_cfg, registry_name_problems)
    finally:
        hydra_config.cfg = previous


TrackingTarget = tuple[bool, str | None, str]
"""``(enabled, store URI, experiment)`` of a job."""


def validate_jobs(
    master: DictConfig, plan: SweepPlan, start_dir: Path
) -> tuple[list[str], TrackingTarget | None]:
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
    targets: dict[TrackingTarget, list[int]] = {}
    composed: list[tuple[str, Any]] = []
    for num, overrides in enumerate(jobs):
        label = f"job {num} ({job_label(swept_values(overrides, plan.swept_keys))})"
        try:
            cfg = compose_job(master, overrides, num)
        except MissingMandatoryValue as error:
            problems.append(f"{label}: {error.full_key or 'a required value'} is required")
            continue
        except Exception as error:  # noqa: BLE001 - any composition error is reported
            problems.append(f"{label}: {type(error).__name__}: {error}".splitlines()[0])
            continue
        found = job_problems(cfg, start_dir)
        problems.extend(f"{label}: {problem}" for problem in found)
        if not found:
            composed.append((label, cfg))
        uri = (
            tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
            if cfg.tracking.enabled
            else None
        )
        targets.setdefault((cfg.tracking.enabled, uri, cfg.tracking.experiment), []).append(num)
    if len(targets) > 1:
        shown = "; ".join(
            f"jobs {nums}: "
            + (f"uri={tracking.redact_uri(str(uri))} experiment={exp}" if on else "tracking off")
            for (on, uri, exp), nums in targets.items()
        )
        problems.append(
            "tracking must be the same for every job of a sweep (one store, one experiment); "
            f"do not sweep tracking.*: {shown}"
        )
    if not problems:  # a benchmark plug-in's job reads and checks its own input
        problems = every_input_invalid(
            [(label, cfg) for label, cfg in composed
             if _benchmark_title(cfg, start_dir) == "LoCoMo"],
            start_dir,
        )
    target = next(iter(targets)) if len(targets) == 1 else None
    return problems, target


def every_input_invalid(composed: list[tuple[str, Any]], start_dir: Path) -> list[str]:
    """Each job's input problem when no job's input can be scored, else nothing.

    A sweep whose jobs would all stop on their input (unknown category, empty file...)
    measures nothing: it is refused before its directory, MLflow store or parent run is
    created. Inputs are read (validated, ~40 ms for LoCoMo's 1,540 questions) until one
    is valid, each distinct ``data`` setting once; one valid input lets the sweep start,
    and a job with an invalid one fails alone, as before.

    Args:
        composed: ``(label, typed config)`` of each job whose settings passed the checks.
        start_dir: directory relative paths are resolved against.

    Returns:
        One line per job (``job 0 (...): FILE: record [1]: field 'category': ...``), or
        ``[]`` when an input is valid, no job is given, or an input could not be judged.
    """
    from locomo_exp.data import DataValidationError, load_data

    problems: list[str] = []
    seen: dict[str, str] = {}
    for label, cfg in composed:
        key = repr(cfg.data)
        if key not in seen:
            try:
                load_data(cfg.data, start_dir, cfg.category_names)
            except DataValidationError as error:
                seen[key] = str(error).replace("\n", "\n    ")
            except Exception:  # noqa: BLE001 - not an input problem: the job will say
                return []
            else:
                return []
        problems.append(f"{label}: {seen[key]}")
    return problems


def mixed_benchmark_refusal(master: DictConfig, plan: SweepPlan, start_dir: Path) -> str | None:
    """One line refusing a sweep whose jobs are of more than one benchmark, else ``None``.

    A benchmark plug-in's sweep (``-m data.path=a,b`` over answer files, or a judge setting
    swept over one) runs like a LoCoMo one: one MLflow parent, its jobs as children, a
    summary with the plug-in's figures and each job against the baseline job as
    ``mode=compare`` compares the plug-in's runs. Its jobs must all be of that benchmark (a
    summary has one kind of figure). A job whose config does not compose is left to
    :func:`validate_jobs`.

    Args:
        master: the multirun's master config.
        plan: from :func:`plan_sweep`.
        start_dir: directory relative paths are resolved against.

    Returns:
        The refusal line, or ``None``.
    """
    jobs = plan.jobs if plan.jobs is not None else [plan.fixed_overrides]
    kinds: dict[str, list[int]] = {}
    for num, overrides in enumerate(jobs):
        try:
            cfg = compose_job(master, overrides, num)
        except Exception:  # noqa: BLE001 - validate_jobs reports it
            continue
        kinds.setdefault(_benchmark_title(cfg, start_dir), []).append(num)
    if len(kinds) > 1:
        parts = [f"jobs {nums} are {title} answer files"
                 for title, nums in kinds.items() if title != "LoCoMo"]
        if "LoCoMo" in kinds:
            parts.append(f"jobs {kinds['LoCoMo']} LoCoMo ones")
        return (
            f"a sweep's jobs must be of one benchmark: {', '.join(parts)}; run one sweep per "
            "benchmark"
        )
    return None
