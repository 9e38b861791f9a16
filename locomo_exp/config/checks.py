"""Checks of command-line overrides and composed keys against the config schema.

Hydra composes the config from YAML and the command line; the functions here run around
that composition so mistakes get the project's own one-line messages:

* before composing, :func:`unknown_override_keys` and :func:`unknown_group_options` report
  keys and group choices that do not exist, each with a suggestion;
* after composing, :func:`unknown_keys` reports keys added with ``+key=value`` that the
  schema does not define (raised as :class:`UnknownConfigKeyError` by
  :func:`to_experiment_config`), and :func:`keep_typed_text` puts back
  the text a user typed for string options Hydra read as numbers.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from omegaconf import DictConfig, OmegaConf, open_dict

from locomo_exp.config.schema import (
    MAX_BOOTSTRAP_SAMPLES,
    MAX_JUDGE_RUNS,
    ExperimentConfig,
)

logger = logging.getLogger(__name__)


class UnknownConfigKeyError(ValueError):
    """Config keys that the schema does not define, each with the closest known key."""

    def __init__(self, keys: list[tuple[str, str | None]]):
        self.keys = keys
        parts = [
            f"{key}" + (f" (did you mean {suggestion}?)" if suggestion else "")
            for key, suggestion in keys
        ]
        super().__init__("unknown config key(s): " + "; ".join(parts))


def unknown_keys(node: Any, schema: Any, prefix: str = "") -> list[tuple[str, str | None]]:
    """Keys of ``node`` missing from the structured ``schema`` (recursing into dataclass nodes)."""
    import dataclasses
    import difflib

    found: list[tuple[str, str | None]] = []
    if not isinstance(node, DictConfig) or not isinstance(schema, DictConfig):
        return found
    known = [str(k) for k in schema.keys()]
    for key in node.keys():
        name = f"{prefix}{key!s}"
        if str(key) not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            found.append((name, f"{prefix}{close[0]}" if close else None))
            continue
        child_schema = schema._get_node(key)
        if dataclasses.is_dataclass(OmegaConf.get_type(child_schema)):
            found += unknown_keys(node._get_node(key), child_schema, f"{name}.")
    return found


def schema_node(schema: Any, key: str) -> Any:
    """The schema node at a dotted key, or ``None`` when the schema has no such key.

    Below a plain dict field (``category_names``, ``baselines``) every
    key is allowed: the dict node itself is returned for any deeper key.
    """
    import dataclasses

    node = schema
    for part in key.split("."):
        if not isinstance(node, DictConfig):
            return None
        if not dataclasses.is_dataclass(OmegaConf.get_type(node)):
            return node  # a plain dict: free keys
        if part not in node.keys():  # (``in`` is False for a ``???`` value)
            return None
        node = node._get_node(part)
    return node


def _closest_key(schema: Any, key: str) -> str | None:
    """The schema key closest to a mistyped one, part by part (``dat.pth`` -> ``data.path``).

    Each dotted part the schema lacks is replaced by its closest name at that level
    (:func:`difflib.get_close_matches`, default cutoff 0.6), so a wrong group prefix
    (``dat.path``) is corrected as well as a wrong last part (``data.pth``).

    Returns:
        The corrected key, or ``None`` when some part has no close name (or lies below a
        plain dict field or a value).
    """
    import dataclasses
    import difflib

    node = schema
    parts: list[str] = []
    for part in key.split("."):
        if not isinstance(node, DictConfig):
            return None
        if not dataclasses.is_dataclass(OmegaConf.get_type(node)):
            return None
        names = [str(name) for name in node.keys()]
        if part not in names:
            close = difflib.get_close_matches(part, names, n=1)
            if not close:
                return None
            part = close[0]
        parts.append(part)
        node = node._get_node(part)
    return ".".join(parts)


CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
"""The package's config directory (``locomo_exp/conf/``)."""

NOT_GROUPS: dict[str, str] = {"templates": "judge.template"}
"""Folders of ``conf/`` that are not config groups, with the key that reads them:
``templates`` holds judge prompt files chosen with ``judge.template=<name>``."""


def config_groups() -> dict[str, list[str]]:
    """The config groups a user chooses from (``benchmark=<name>``) with their options.

    Returns:
        Group name -> sorted option names, from the folders of ``conf/`` (minus
        :data:`NOT_GROUPS`) and their YAML files.
    """
    return {
        path.name: sorted(option.stem for option in path.glob("*.yaml"))
        for path in sorted(CONF_DIR.iterdir())
        if path.is_dir() and path.name not in NOT_GROUPS
    }


@functools.lru_cache(maxsize=1)
def schema_tree() -> DictConfig:
    """The schema as an OmegaConf node, built once per process (about 0.1 s each time).

    Shared: callers only read it (``OmegaConf.merge`` copies it; a value is tried on a
    ``copy.deepcopy`` of its node).
    """
    schema: DictConfig = OmegaConf.structured(ExperimentConfig)
    return schema


def parse_overrides(overrides: list[str]) -> list[Any]:
    """Hydra's own parse of command-line overrides; unparsable ones are left to Hydra."""
    return list(_parsed(tuple(overrides)))


@functools.lru_cache(maxsize=8)
def _parsed(overrides: tuple[str, ...]) -> tuple[Any, ...]:
    """:func:`parse_overrides`, parsed once per command line (four checks read it)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    parsed = []
    for line in overrides:
        if line.startswith("-"):
            continue
        try:
            parsed.append(parser.parse_override(line))
        except HydraException:
            continue
    return tuple(parsed)


def unknown_override_keys(overrides: list[str]) -> list[tuple[str, str | None]]:
    """Keys set with ``key=value`` that the schema does not have, each with a suggestion.

    Checked before Hydra composes, so a typo (``judge.run=3``) gets the project's
    "did you mean judge.runs?" instead of Hydra's advice to add it with ``+``. Hydra's own
    keys (``hydra.*``), group paths (``hydra/launcher``) and keys below plain dict fields
    are not checked; ``+key=value`` is checked after composition (:func:`to_experiment_config`).

    Args:
        overrides: command-line overrides as typed.

    Returns:
        ``[(key, suggestion or None), ...]`` for each unknown key.
    """
    from hydra.core.override_parser.types import OverrideType

    schema = schema_tree()
    groups = config_groups()  # a group choice (benchmark=<name>) is not a key
    found: list[tuple[str, str | None]] = []
    for override in parse_overrides(overrides):
        key = str(override.key_or_group)
        if override.type != OverrideType.CHANGE or "/" in key or key.split(".")[0] == "hydra":
            continue
        if key in groups:
            continue
        if override.package is not None or schema_node(schema, key) is not None:
            continue
        found.append((key, NOT_GROUPS.get(key) or _closest_key(schema, key)))
    return found


def unknown_group_options(overrides: list[str]) -> list[str]:
    """Config-group choices that do not exist (``scorer=f2``), each with the available ones.

    Checked before Hydra composes, so a wrong choice is one line instead of Hydra's
    message with its config search path. Sweeps (``f1=locomo,bogus``) and lists
    (``baselines=[a,b]``) are checked value by value.

    Args:
        overrides: command-line overrides as typed.

    Returns:
        One message per unknown choice, e.g. ``scorer=f2: no such option (available: both,
        f1, judge)``.
    """
    from hydra.core.override_parser.types import OverrideType

    groups = config_groups()
    problems: list[str] = []
    for override in parse_overrides(overrides):
        group = str(override.key_or_group)
        if override.type != OverrideType.CHANGE or group not in groups:
            continue
        if override.is_sweep_override():
            values = [str(v) for v in override.sweep_string_iterator()]
        else:
            value = override.value()
            values = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        available = groups[group]
        for value in values:
            if value not in available and value != "null":
                problems.append(
                    f"{group}={value}: no such option (available: {', '.join(available)})"
                )
    return problems


TEXT_OR_LIST_KEYS: frozenset[str] = frozenset({"data.path"})
"""Options typed ``Any`` (a path or a list of paths) whose scalar value is text as typed."""


def keep_typed_text(cfg: DictConfig, overrides: list[str]) -> list[str]:
    """Put back the text a user typed for string-typed options that Hydra read as numbers.

    Hydra parses every override value: ``data.path=2024.10`` becomes the float ``2024.1``,
    ``tracking.experiment=10e2`` becomes ``1000.0``, ``tracking.run_name=true`` becomes
    ``True``, and a string-typed option then receives that number's text. For each
    override of a ``str`` option whose value Hydra parsed as a number or boolean, the
    config gets the text exactly as typed (``2024.10``, ``10e2``, ``true``).

    Args:
        cfg: the composed config (changed in place).
        overrides: the task overrides (``HydraConfig.get().overrides.task``).

    Returns:
        The keys whose value was put back.
    """
    schema = schema_tree()
    restored = []
    for override in parse_overrides(overrides):
        if override.is_delete() or override.is_sweep_override() or override.package is not None:
            continue
        value = override.value()
        if isinstance(value, str) or value is None or not isinstance(value, (bool, int, float)):
            continue
        key = str(override.key_or_group)
        node = schema_node(schema, key)
        if node is None or isinstance(node, DictConfig):
            continue
        ref_type = node._metadata.ref_type
        # OmegaConf records ``Optional[str]`` (a typing.Union), which ``str | None`` is not equal to
        if ref_type is not str and ref_type != Optional[str] and key not in TEXT_OR_LIST_KEYS:  # noqa: UP045
            continue
        text = override.input_line.split("=", 1)[1].strip()
        if OmegaConf.select(cfg, key, throw_on_resolution_failure=False) != text:
            with open_dict(cfg):
                OmegaConf.update(cfg, key, text, merge=False)
            restored.append(key)
    return restored


MAX_EXPERIMENT_CHARS = 500
"""MLflow's limit on an experiment name (``mlflow.utils.validation.MAX_EXPERIMENT_NAME_LENGTH``)."""


class ConfigValueError(ValueError):
    """A config value outside its allowed range; the message names the key and the range."""


def unused_judge_settings(cfg: ExperimentConfig) -> list[str]:
    """Judge settings given with a scorer that does not run the judge, one line each.

    Args:
        cfg: the typed config.

    Returns:
        ``[]`` when the judge runs or nothing judge-only is set; else lines such as
        ``"scorer=f1: judge.labels=labels.csv is ignored (the judge does not run; use
        scorer=both)"`` (a labels file is not even opened).
    """
    if cfg.scorer.uses_judge:
        return []
    judge = cfg.judge
    given = {
        "judge.dry_run": True if judge.dry_run else None,  # nothing counted, nothing said
        "judge.labels": judge.labels,
        "judge.panel": list(judge.panel) or None,
        "judge.audit.max_false_accept": judge.audit.max_false_accept,
        "judge.audit.max_false_reject": judge.audit.max_false_reject,
        "judge.audit.controls": [c.path for c in judge.audit.controls] or None,
    }
    return [
        f"scorer={cfg.scorer.name.value}: {key}={value} is ignored (the judge does not run; "
        "use scorer=both)"
        for key, value in given.items()
        if value is not None
    ]


NameCheck = Callable[[ExperimentConfig], list[str]]
"""Checks names against a registry above the config layer (judge protocols, file layouts):
one line per unknown name, e.g. :func:`locomo_exp.benchmarks.names.registry_name_problems`."""


def validate_values(cfg: ExperimentConfig, check_names: NameCheck | None = None) -> None:
    """Range checks the schema's types cannot express.

    Args:
        cfg: the typed config.
        check_names: the names' check by the registries that resolve them
            (:func:`locomo_exp.benchmarks.names.registry_name_problems`); its lines come first in
            the error. The config layer imports no registry; ``None`` leaves the names to
            the code that resolves them, which refuses an unknown one with the same line.

    Raises:
        ConfigValueError: ``judge.runs`` above :data:`MAX_JUDGE_RUNS`,
            ``report.bootstrap_samples`` not in 0-:data:`MAX_BOOTSTRAP_SAMPLES` (0: no
            intervals), an empty ``tracking.experiment`` with tracking on, a problem
            ``check_names`` finds, or a ``judge.api_key_env`` / ``judge.base_url`` that
            may hold a credential
            (:func:`locomo_exp.config.secrets.judge_value_problems`; values not repeated),
            or a ``tracking.uri`` holding a password or token
            (:func:`locomo_exp.config.secrets.tracking_uri_problem`), or any setting that,
            resolved, holds a key (:func:`locomo_exp.config.secrets.resolved_problems`).
    """
    for line in unused_judge_settings(cfg):  # scorer=f1 with judge-only settings
        logger.warning("%s", line)
    problems = check_names(cfg) if check_names is not None else []
    if cfg.judge.runs > MAX_JUDGE_RUNS:  # below 1: the judge's preflight says so
        problems.append(f"judge.runs={cfg.judge.runs} must be between 1 and {MAX_JUDGE_RUNS}")
    if not 0 <= cfg.report.bootstrap_samples <= MAX_BOOTSTRAP_SAMPLES:
        problems.append(
            f"report.bootstrap_samples={cfg.report.bootstrap_samples} must be between 0 and "
            f"{MAX_BOOTSTRAP_SAMPLES:,}"
        )
    if cfg.tracking.enabled and not str(cfg.tracking.experiment or "").strip():
        problems.append(
            "tracking.experiment is empty: give an MLflow experiment name "
            "(e.g. tracking.experiment=locomo_exp) or use tracking=none"
        )
    if cfg.data.limit is not None and cfg.data.limit < 1:  # a setting, not the file's fault
        problems.append(f"data.limit={cfg.data.limit} must be at least 1 (or null: every question)")
    cap = cfg.judge.max_cost_usd
    if cap is not None and not cap >= 0.0:  # NaN too
        problems.append(f"judge.max_cost_usd={cap} must be >= 0 USD (or null: no cap)")
    audit = cfg.judge.audit
    if audit.runs is not None and audit.runs < 1:
        problems.append(f"judge.audit.runs={audit.runs} must be >= 1 (or null: judge.runs)")
    if audit.max_share is not None and not 0.0 <= audit.max_share <= 1.0:
        problems.append(
            f"judge.audit.max_share={audit.max_share} must be a share between 0 and 1 "
            "(or null: no cap)"
        )
    if cfg.tracking.enabled and len(str(cfg.tracking.experiment or "")) > MAX_EXPERIMENT_CHARS:
        problems.append(
            f"tracking.experiment is {len(str(cfg.tracking.experiment))} characters long; MLflow "
            f"takes experiment names of at most {MAX_EXPERIMENT_CHARS}"
        )
    from locomo_exp.config.secrets import (
        judge_value_problems,
        resolved_problems,
        tracking_uri_problem,
    )

    problems += judge_value_problems(cfg.judge.api_key_env, cfg.judge.base_url)
    uri_problem = tracking_uri_problem(cfg.tracking.uri)
    if uri_problem:
        problems.append(uri_problem)
    problems += resolved_problems(cfg)  # a key from a config file or ${oc.env:...}
    if problems:
        raise ConfigValueError("; ".join(problems))


def to_experiment_config(
    cfg: DictConfig | ExperimentConfig, check_names: NameCheck | None = None
) -> ExperimentConfig:
    """Convert a composed Hydra config into a typed :class:`ExperimentConfig`.

    Args:
        cfg: the composed config (or an already typed one, returned as is).
        check_names: passed to :func:`validate_values` (the command line and the sweep
            pass :func:`locomo_exp.benchmarks.names.registry_name_problems`).

    Returns:
        An :class:`ExperimentConfig` instance with enums and nested dataclasses.

    Raises:
        omegaconf.errors.ValidationError: if a value does not fit the schema.
        UnknownConfigKeyError: for keys the schema does not have
            (``+data.pathh=x`` passes Hydra's composition but is refused here).
        ConfigValueError: for values out of range or unknown names (:func:`validate_values`).
    """
    if isinstance(cfg, ExperimentConfig):
        return cfg
    schema = schema_tree()
    unknown = unknown_keys(cfg, schema)
    if unknown:
        raise UnknownConfigKeyError(unknown)
    merged = OmegaConf.merge(schema, cfg)
    if merged.data.get("runs") and OmegaConf.is_missing(merged.data, "path"):
        merged.data.path = None  # data.runs=[...] names the files; data.path is not needed
    obj = OmegaConf.to_object(merged)
    assert isinstance(obj, ExperimentConfig)
    validate_values(obj, check_names)
    return obj
