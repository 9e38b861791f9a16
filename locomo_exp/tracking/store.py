"""The MLflow store and one job's run: the only calls of MLflow's fluent API.

A thin layer: everything it logs is computed elsewhere (names in
:mod:`locomo_exp.tracking.metrics`). The tracking URI is
``tracking.uri``, else ``MLFLOW_TRACKING_URI``, else an absolute
``sqlite:///<start dir>/mlflow.db`` so every job of a sweep lands in one store
(docs/field_notes.md §5: MLflow >= 3.7 defaults to a SQLite file in the *current* directory).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.results import interrupts
from locomo_exp.tracking.names import finite_metrics

log = logging.getLogger(__name__)

# MLflow announces on stderr, at INFO, that it creates or upgrades a new SQLite store's
# tables ("Creating initial MLflow database tables...", "Updating database tables"): noise
# on a user's first run. Only that module's INFO lines go; its warnings and errors, and
# every other MLflow message, still show. (MLflow sets its loggers up without dictConfig,
# so this level is kept when mlflow is imported later.)
logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)

EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
"""Experiment tag by which MLflow 3 tells a GenAI experiment from a model-training one."""

EXPERIMENT_KIND = "custom_model_development"
"""The value MLflow's UI labels "Machine learning" (the other is ``genai_development``)."""


def resolve_tracking_uri(uri: str | None, start_dir: Path) -> str:
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


@dataclass(frozen=True)
class RunSpec:
    """What one job's new MLflow run is: where, under which experiment and name, with what.

    Attributes:
        tracking_uri: the store (see :func:`resolve_tracking_uri`).
        experiment: experiment name (created if missing).
        run_name: the run's display name.
        tags: extra tags.
        parent_run_id: nest the run under this run (works across processes: a sweep's
            children).
        params: logged when the run is created (the measurement's settings).
    """

    tracking_uri: str
    experiment: str
    run_name: str
    tags: Mapping[str, str] | None = None
    parent_run_id: str | None = None
    params: Mapping[str, str] | None = None


@contextlib.contextmanager
def mlflow_run(spec: RunSpec, *, log_file: Path | None = None) -> Iterator[Any]:
    """Open a NEW MLflow run; end it FINISHED, KILLED or FAILED.

    The run ends KILLED when interrupted (``KeyboardInterrupt``, which SIGTERM is turned
    into) and FAILED when the body raises anything else. Every job gets its own run:
    ``MLFLOW_RUN_ID`` in the environment is removed first (:func:`ignore_ambient_run_id`),
    so an old run is never resumed, overwritten or flipped to FAILED. The steps are
    :func:`run_creator`, :func:`activate_run` and :func:`ending_run`, which a run set up
    on a thread (:func:`~locomo_exp.tracking.pending.deferred_mlflow_run`) shares.

    Args:
        spec: the run to create.
        log_file: uploaded as an artifact when the run ends, whatever its status (the
            job's ``locomo_exp.log``); skipped when missing.

    Yields:
        The active ``mlflow.ActiveRun``.

    Raises:
        TrackingStoreError: the store cannot be opened, or the run not created (one line).
    """
    run = activate_run(spec.tracking_uri, run_creator(spec)())
    with ending_run(lambda: run, log_file):
        yield run


def run_creator(spec: RunSpec) -> Callable[[], str]:
    """The first step of every job's run: drop an ambient run id, then say how to create it.

    ``MLFLOW_RUN_ID`` is removed from the environment now (:func:`ignore_ambient_run_id`);
    the run itself is created when the returned function is called (on any thread).

    Args:
        spec: the run to create.

    Returns:
        A function creating the run (:func:`create_run`) and returning its id; it raises
        :class:`TrackingStoreError`.
    """
    ignore_ambient_run_id()
    return functools.partial(create_run, spec)


@contextlib.contextmanager
def ending_run(
    get_run: Callable[[], Any],
    log_file: Path | None,
    settle: Callable[[BaseException], Any] | None = None,
) -> Iterator[None]:
    """End a job's run when the block ends: FINISHED, KILLED or FAILED (:func:`end_run`).

    Args:
        get_run: the active run (called when the block ends).
        log_file: uploaded when the run ends (skipped when missing).
        settle: the run while the block raises the given error, or ``None`` when there
            is none to end (default: ``get_run``).

    Raises:
        BaseException: the block's own error, after the run ended.
        locomo_exp.interrupts.Interrupted: the block ended, but a signal was recorded
            meanwhile (its ``KeyboardInterrupt`` was swallowed): the run ends KILLED.
    """
    try:
        yield
        interrupts.raise_if_received()  # an interrupt swallowed in the block: KILLED, not FINISHED
    except BaseException as error:
        run = settle(error) if settle is not None else get_run()
        if run is not None:
            end_run(run, error, log_file)
        raise
    end_run(get_run(), None, log_file)


def create_run(spec: RunSpec) -> str:
    """Create the run (and log ``spec.params``) with the client, without making it active.

    Safe on any thread (MLflow's active run is per thread). Created with the client: the
    fluent ``start_run`` of a new run would also import GitPython and probe the working
    tree for source tags the card already records (``tool.git_commit``).

    Args:
        spec: the run to create.

    Returns:
        The run id.

    Raises:
        TrackingStoreError: bad scheme, unwritable sqlite path, server down ... (one line).
    """
    import mlflow
    from mlflow.entities import Param

    uri = spec.tracking_uri
    quiet_secret_links(uri)
    try:
        mlflow.set_tracking_uri(uri)
        experiment_id = ensure_experiment(uri, spec.experiment)
        run_tags = {**source_tags(), **dict(spec.tags or {})}
        if spec.parent_run_id:
            run_tags[PARENT_RUN_TAG] = spec.parent_run_id
        client = mlflow.MlflowClient(tracking_uri=uri)
        created = client.create_run(experiment_id, run_name=spec.run_name, tags=run_tags)
        run_id: str = created.info.run_id
        if spec.params:  # what mlflow.log_params sends
            client.log_batch(run_id, params=[Param(k, str(v)) for k, v in spec.params.items()])
    except Exception as error:
        raise TrackingStoreError(uri, error) from error
    return run_id


SUPPRESS_LINKS_ENV = "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"
"""MLflow's switch for the "View run ... at: <server URL>" lines it prints when a run ends."""


def quiet_secret_links(tracking_uri: str) -> None:
    """Stop MLflow printing its run links when ``tracking_uri`` holds a password.

    When a run on an ``http(s)`` server ends, MLflow prints "View run <name> at: <URL>"
    with the URL as given, user info included; with a password in ``$MLFLOW_TRACKING_URI``
    that would put it on the console. The job prints its own UI hint (masked) instead.
    """
    from locomo_exp.config.secrets import uri_secret_spans

    if uri_secret_spans(tracking_uri):
        os.environ[SUPPRESS_LINKS_ENV] = "true"


def activate_run(tracking_uri: str, run_id: str) -> Any:
    """Make the created run this thread's active run (``mlflow.start_run(run_id=...)``)."""
    import mlflow

    try:
        return mlflow.start_run(run_id=run_id)
    except Exception as error:
        raise TrackingStoreError(tracking_uri, error) from error


def end_run(run: Any, error: BaseException | None, log_file: Path | None) -> None:
    """End the active run FINISHED (no ``error``), KILLED (``KeyboardInterrupt``) or FAILED.

    A failed run gets the tag ``error``; ``log_file`` is uploaded whatever the status.
    """
    import mlflow

    status = "FINISHED"
    if error is not None:
        status = "KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED"
        mlflow.set_tag("error", f"{type(error).__name__}: {error}"[:5000])
    if log_file is not None and Path(log_file).is_file():
        try:
            for handler in logging.getLogger().handlers:
                handler.flush()
            mlflow.log_artifact(str(log_file))
        except Exception:  # the log must not hide the job's own outcome
            log.warning("could not upload %s to the MLflow run", log_file, exc_info=True)
    mlflow.end_run(status=status)
    log.info("MLflow run %s ended %s", run.info.run_id, status)


PARENT_RUN_TAG = "mlflow.parentRunId"
"""The tag by which MLflow nests a run under its parent (a sweep's children)."""


def source_tags() -> dict[str, str]:
    """MLflow's own source tags of a local run: user, entry point and source type.

    What the run page shows as "Created by" and "Source" (the git commit is the card's
    ``tool.git_commit`` param).
    """
    import getpass
    import sys

    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment (a container without passwd)
        user = "unknown"
    return {
        "mlflow.user": user,
        "mlflow.source.name": sys.argv[0] if sys.argv and sys.argv[0] else "locomo_exp",
        "mlflow.source.type": "LOCAL",
    }


class TrackingStoreError(ValueError):
    """The MLflow store named by ``tracking.uri`` cannot be opened or written.

    The message shows the URI with any password masked
    (:func:`locomo_exp.config.secrets.redact_uri`: ``$MLFLOW_TRACKING_URI`` may hold one).
    """

    def __init__(self, uri: str, error: BaseException):
        from locomo_exp.config.secrets import redact_uri

        super().__init__(
            f"tracking.uri={redact_uri(uri)}: MLflow cannot use this store "
            f"({redact_uri(error_reason(error))}); fix tracking.uri or use tracking=none"
        )


def error_reason(error: BaseException) -> str:
    """The reason of ``error`` in a few whole words, for a one-line message; never cut.

    A connection error deep in a chain (``requests`` → ``urllib3`` → ``OSError``) gives
    the operating system's words (``Connection refused``); otherwise the first line of
    the message, whole.

    Args:
        error: the exception raised by MLflow or the store.

    Returns:
        One line.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return str(current.strerror)
        reason = getattr(current, "reason", None)
        current = reason if isinstance(reason, BaseException) else (
            current.__cause__ or current.__context__
        )
    text = str(error).strip()
    found = re.search(r"\[Errno -?\d+\] ([^'\"\])\]]+)", text)
    if found:
        return found.group(1).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


RUN_ID_ENV = "MLFLOW_RUN_ID"
"""MLflow's ``start_run()`` resumes this run when it is set; we never do."""


def ignore_ambient_run_id() -> str | None:
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


def default_artifact_location(tracking_uri: str) -> str | None:
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

    A new experiment is created as a model-training experiment: tag
    :data:`EXPERIMENT_KIND_TAG` = :data:`EXPERIMENT_KIND` (MLflow 3 otherwise treats an
    untagged experiment as GenAI and opens it on empty trace charts). An existing
    experiment is left as it is (its kind may have been chosen in the UI). A concurrent
    creation by another process is tolerated (the existing one is used).

    Args:
        tracking_uri: the store.
        name: the experiment name.

    Returns:
        The experiment id.

    Raises:
        mlflow.exceptions.MlflowException: the store refuses the creation and no
            experiment of that name exists.
    """
    import mlflow
    from mlflow.exceptions import MlflowException

    client = mlflow.MlflowClient(tracking_uri=tracking_uri)
    existing = client.get_experiment_by_name(name)
    if existing is not None:
        return existing.experiment_id
    try:
        return client.create_experiment(
            name,
            artifact_location=default_artifact_location(tracking_uri),
            tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND},
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


def log_dict(content: Any, artifact_file: str) -> None:
    """Log a JSON-ready object as a JSON artifact of the active run (``metrics.json``)."""
    import mlflow

    mlflow.log_dict(content, artifact_file)


def table_columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Rows as the columns ``mlflow.log_table`` takes; nested values become JSON text.

    Args:
        rows: one dict per row; a key missing from a row is ``None`` there.

    Returns:
        column name -> values, columns in first-seen order.
    """
    import json

    columns: dict[str, list[Any]] = {}
    keys = list(dict.fromkeys(key for row in rows for key in row))
    for key in keys:
        values = [row.get(key) for row in rows]
        if any(isinstance(v, (list, dict)) for v in values):
            values = [json.dumps(v, ensure_ascii=False) if v is not None else None for v in values]
        columns[key] = values
    return columns


def log_table(rows: list[dict[str, Any]], artifact_file: str) -> None:
    """Log rows on the active run with ``mlflow.log_table`` so the UI can show and filter them.

    Args:
        rows: one dict per row (per question); nested values (judge runs) become JSON text.
        artifact_file: the table's artifact name (``scores_table.json``).
    """
    import mlflow

    if rows:
        mlflow.log_table(data=table_columns(rows), artifact_file=artifact_file)
