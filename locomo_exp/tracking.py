"""MLflow logging: one run per job, params from the resolved config, finite metrics only.

A thin layer: everything it logs is computed elsewhere. The tracking URI is
``tracking.uri``, else ``MLFLOW_TRACKING_URI``, else an absolute
``sqlite:///<start dir>/mlflow.db`` so every job of a sweep lands in one store
(FIELD_NOTES §5: MLflow >= 3.7 defaults to a SQLite file in the *current* directory).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

log = logging.getLogger(__name__)

MAX_PARAM_VALUE_CHARS = 6000
"""MLflow truncates longer param values; we cut them ourselves, marking the cut."""

_SECRET_KEY_RE = re.compile(r"(api[_-]?key|secret|token|password|authorization)$", re.IGNORECASE)
_ILLEGAL_NAME_CHARS_RE = re.compile(r"[^A-Za-z0-9_\-. /:]")


def resolve_tracking_uri(uri: Optional[str], start_dir: Path) -> str:
    """The tracking URI a run logs to.

    Args:
        uri: ``tracking.uri`` from config, or ``None``.
        start_dir: the directory the user started in.

    Returns:
        ``uri``; else ``$MLFLOW_TRACKING_URI``; else ``sqlite:///<start_dir>/mlflow.db``
        (absolute). A relative ``sqlite:///x.db`` is made absolute against ``start_dir``.
    """
    uri = uri or os.environ.get("MLFLOW_TRACKING_URI") or None
    if not uri:
        return f"sqlite:///{(start_dir / 'mlflow.db').resolve()}"
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        relative = uri[len("sqlite:///") :]
        return f"sqlite:///{(start_dir / relative).resolve()}"
    return uri


def is_secret_key(name: str) -> bool:
    """Whether a config key looks like a secret (``api_key``, ``token``, ...); never logged."""
    return bool(_SECRET_KEY_RE.search(name.rsplit(".", 1)[-1]))


def metric_name(name: str) -> str:
    """Replace characters MLflow refuses in metric/param names with ``_`` (max 250 chars)."""
    return _ILLEGAL_NAME_CHARS_RE.sub("_", name)[:250]


def finite_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Keep only numeric, finite metrics, with legal names (never log NaN or inf).

    Args:
        metrics: name -> value; ``None``, NaN, inf and non-numbers are dropped.

    Returns:
        name -> float.
    """
    kept: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value):
            kept[metric_name(name)] = float(value)
    return kept


def flatten_params(tree: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten a nested config into ``{"a.b.c": "value"}`` with one stringification.

    Keys that look like secrets (``api_key``, ``token``, ...) are left out.

    Args:
        tree: nested dicts/lists of plain values (e.g. ``OmegaConf.to_container``).
        prefix: key prefix for recursion.

    Returns:
        Flat param dict; values longer than :data:`MAX_PARAM_VALUE_CHARS` are cut.
    """
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if _SECRET_KEY_RE.search(str(key)):
            continue
        if isinstance(value, Mapping) and value:
            flat.update(flatten_params(value, f"{name}."))
            continue
        text = format_param(value)
        if len(text) > MAX_PARAM_VALUE_CHARS:
            text = text[: MAX_PARAM_VALUE_CHARS - 15] + "...[truncated]"
        flat[metric_name(name)] = text
    return flat


_DECIMAL_RE = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NOISE_DIGITS = 16
"""A decimal with this many significant digits is taken as float noise from arithmetic."""


def clean_float_text(text: str) -> str:
    """Undo binary floating-point noise in a decimal written by a program.

    Hydra's float ``range()`` sweeps compute values such as ``0.7000000000000001`` and
    ``0.8999999999999999`` (FIELD_NOTES §6). A decimal with 16 or more significant digits
    is rewritten with 15 (``0.7``, ``0.9``); anything shorter, and every non-decimal
    text, is returned unchanged, so what a user typed (``0.50``, ``1e-3``) stays as typed.

    Args:
        text: a value as text.

    Returns:
        The text, or its 15-significant-digit form when it was float noise.
    """
    stripped = text.strip()
    if not _DECIMAL_RE.match(stripped):
        return text
    mantissa = re.split(r"[eE]", stripped)[0]
    digits = re.sub(r"\D", "", mantissa).lstrip("0")
    if len(digits) < _NOISE_DIGITS:
        return text
    return repr(float(format(float(stripped), ".15g")))


def format_param(value: Any) -> str:
    """The one stringification used for every param value.

    Enums give their value, floats their shortest round-trip ``repr`` (so ``0.3`` stays
    ``0.3``) with float noise removed by :func:`clean_float_text` (a ``range()`` sweep's
    ``0.7000000000000001`` is logged as ``0.7``), ``None`` gives ``"null"``; lists and
    dicts are written as JSON-like text.
    """
    if hasattr(value, "value") and not isinstance(value, (int, float, str)):
        value = value.value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return clean_float_text(repr(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_param(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {format_param(v)}" for k, v in value.items()) + "}"
    return str(value)


@contextlib.contextmanager
def mlflow_run(
    *,
    tracking_uri: str,
    experiment: str,
    run_name: str,
    tags: Optional[Mapping[str, str]] = None,
    parent_run_id: Optional[str] = None,
) -> Iterator[Any]:
    """Open a NEW MLflow run; end it FINISHED, KILLED or FAILED.

    The run ends KILLED when interrupted (``KeyboardInterrupt``, which SIGTERM is turned
    into) and FAILED when the body raises anything else. Every job gets its own run:
    ``MLFLOW_RUN_ID`` in the environment is removed first (:func:`ignore_ambient_run_id`),
    so an old run is never resumed, overwritten or flipped to FAILED.

    Args:
        tracking_uri: the store (see :func:`resolve_tracking_uri`).
        experiment: experiment name (created if missing).
        run_name: the run's display name.
        tags: extra tags.
        parent_run_id: nest the run under this run (works across processes).

    Yields:
        The active ``mlflow.ActiveRun``.

    Raises:
        TrackingStoreError: the store cannot be opened, or the run not created (one line).
    """
    import mlflow

    ignore_ambient_run_id()
    try:
        mlflow.set_tracking_uri(tracking_uri)
        ensure_experiment(tracking_uri, experiment)
        mlflow.set_experiment(experiment)
        run = mlflow.start_run(
            run_name=run_name, tags=dict(tags or {}), parent_run_id=parent_run_id
        )
    except Exception as error:  # bad scheme, unwritable sqlite path, server down ...
        raise TrackingStoreError(tracking_uri, error) from error
    status = "FAILED"
    try:
        yield run
        status = "FINISHED"
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):  # Ctrl-C / SIGTERM (JudgeInterrupted)
            status = "KILLED"
        mlflow.set_tag("error", f"{type(error).__name__}: {error}"[:5000])
        raise
    finally:
        mlflow.end_run(status=status)
        log.info("MLflow run %s ended %s", run.info.run_id, status)


class TrackingStoreError(ValueError):
    """The MLflow store named by ``tracking.uri`` cannot be opened or written."""

    def __init__(self, uri: str, error: BaseException):
        text = str(error).strip()
        first = text.splitlines()[0].strip() if text else type(error).__name__
        super().__init__(
            f"tracking.uri={uri}: MLflow cannot use this store ({first[:300]}); "
            "fix tracking.uri or use tracking=none"
        )


RUN_ID_ENV = "MLFLOW_RUN_ID"
"""MLflow's ``start_run()`` resumes this run when it is set; we never do."""


def ignore_ambient_run_id() -> Optional[str]:
    """Remove ``MLFLOW_RUN_ID`` from this process's environment, with a warning.

    ``mlflow.start_run()`` without ``run_id`` resumes the run named by ``MLFLOW_RUN_ID``
    (e.g. left in a shell by an earlier script): a job would log into that old run and end
    it FAILED when the job fails. Jobs always start their own run instead.

    Returns:
        The value that was removed, or ``None``.
    """
    value = os.environ.pop(RUN_ID_ENV, None)
    if value:
        log.warning(
            "%s=%s is set in the environment; ignored: every job starts its own MLflow run",
            RUN_ID_ENV,
            value,
        )
    return value


def default_artifact_location(tracking_uri: str) -> Optional[str]:
    """For a ``sqlite:///`` store, an ``mlartifacts`` folder beside the database file.

    MLflow would otherwise put artifacts in ``./mlruns`` of whatever directory a job
    happens to run in. Other stores keep their server's own default (``None``).
    """
    if tracking_uri.startswith("sqlite:///"):
        database = Path(tracking_uri[len("sqlite:///") :])
        return (database.parent / "mlartifacts").resolve().as_uri()
    return None


def ensure_experiment(tracking_uri: str, name: str) -> str:
    """Create the experiment if it does not exist yet; return its id.

    A concurrent creation by another process is tolerated (the existing one is used).
    """
    import mlflow
    from mlflow.exceptions import MlflowException

    client = mlflow.MlflowClient(tracking_uri=tracking_uri)
    existing = client.get_experiment_by_name(name)
    if existing is not None:
        return existing.experiment_id
    try:
        return client.create_experiment(
            name, artifact_location=default_artifact_location(tracking_uri)
        )
    except MlflowException:
        existing = client.get_experiment_by_name(name)
        if existing is None:
            raise
        return existing.experiment_id


def log_params(params: Mapping[str, str]) -> None:
    """Log params once each (MLflow refuses a second, different value)."""
    import mlflow

    mlflow.log_params(dict(params))


def set_tags(tags: Mapping[str, str]) -> None:
    """Set tags on the active run."""
    import mlflow

    mlflow.set_tags(dict(tags))


def log_metrics(metrics: Mapping[str, Any]) -> int:
    """Log finite metrics; return how many were logged."""
    import mlflow

    kept = finite_metrics(metrics)
    if kept:
        mlflow.log_metrics(kept)
    return len(kept)


def log_artifacts(paths: list[Path]) -> None:
    """Upload files as artifacts of the active run (missing files are skipped)."""
    import mlflow

    for path in paths:
        if path.is_file():
            mlflow.log_artifact(str(path))


def log_table(rows: list[dict[str, Any]], artifact_file: str) -> None:
    """Log per-question rows with ``mlflow.log_table`` so the UI can show and filter them.

    Nested values (lists of judge runs) are written as JSON text.
    """
    import json

    import mlflow

    if not rows:
        return
    columns: dict[str, list[Any]] = {}
    keys = list(dict.fromkeys(key for row in rows for key in row))
    for key in keys:
        values = [row.get(key) for row in rows]
        if any(isinstance(v, (list, dict)) for v in values):
            values = [json.dumps(v, ensure_ascii=False) if v is not None else None for v in values]
        columns[key] = values
    mlflow.log_table(data=columns, artifact_file=artifact_file)
