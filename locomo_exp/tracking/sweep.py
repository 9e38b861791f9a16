"""A sweep's parent run and its children in MLflow: the only ``MlflowClient`` calls.

The parent run is created by the launching process before any job starts and ended by
it after the last job; jobs (other processes) nest their runs under it by id. Names come
from :mod:`locomo_exp.tracking.metrics`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.tracking.names import finite_metrics
from locomo_exp.tracking.store import ensure_experiment, quiet_secret_links, table_columns

log = logging.getLogger(__name__)

SWEEP_TABLE_FILE = "sweep_summary_table.json"
"""The parent's ``mlflow.log_table`` artifact: one row per job."""


@dataclass(frozen=True)
class ChildRun:
    """A sweep job's run as found in the store.

    Attributes:
        run_id: MLflow run id.
        status: MLflow run status (``RUNNING``, ``FINISHED``, ``FAILED``, ``KILLED``).
    """

    run_id: str
    status: str


def _client(tracking_uri: str) -> Any:
    import mlflow

    quiet_secret_links(tracking_uri)  # the parent's end would print its URL, password included
    return mlflow.MlflowClient(tracking_uri=tracking_uri)


def start_parent_run(
    tracking_uri: str,
    experiment: str,
    run_name: str,
    tags: Mapping[str, str],
    params: Mapping[str, str],
) -> str:
    """Create the experiment if needed and the sweep's parent run (left RUNNING).

    Args:
        tracking_uri: the sweep's one store.
        experiment: the experiment name.
        run_name: the parent's name (``sweep judge.temperature=0.0,0.5``).
        tags: from :func:`locomo_exp.tracking.metrics.parent_tags`.
        params: from :func:`locomo_exp.tracking.metrics.parent_params` (swept keys).

    Returns:
        The parent run's id.
    """
    from mlflow.entities import Param

    experiment_id = ensure_experiment(tracking_uri, experiment)
    client = _client(tracking_uri)
    run = client.create_run(experiment_id, run_name=run_name, tags=dict(tags))
    if params:
        client.log_batch(run.info.run_id, params=[Param(k, v) for k, v in params.items()])
    return str(run.info.run_id)


def child_runs(tracking_uri: str, experiment: str, parent_run_id: str) -> dict[int, ChildRun]:
    """The runs nested under a parent, by their ``sweep.job_num`` tag."""
    client = _client(tracking_uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return {}
    runs = client.search_runs(
        [found.experiment_id],
        filter_string=f"tags.`mlflow.parentRunId` = '{parent_run_id}'",
        max_results=10000,
    )
    children: dict[int, ChildRun] = {}
    for run in runs:
        num = run.data.tags.get("sweep.job_num")
        if num is not None and num.isdigit():
            children[int(num)] = ChildRun(run.info.run_id, run.info.status)
    return children


def mark_run_failed(tracking_uri: str, run_id: str, status: str = "FAILED") -> None:
    """End a run left RUNNING (a killed worker) as ``status`` (``KILLED`` when interrupted)."""
    _client(tracking_uri).set_terminated(run_id, status)


SWEEP_PLOT_KEY = "sweep_plot"
"""MLflow image key of the sweep plot on the parent run (its chart views' image card)."""


def finish_parent_run(
    tracking_uri: str,
    run_id: str,
    *,
    files: list[Path],
    tags: Mapping[str, str],
    metrics: Mapping[str, Any],
    table: list[dict[str, Any]],
    status: str,
    chart_image: Path | None = None,
) -> None:
    """Log the sweep's results on its parent run and end it.

    Args:
        tracking_uri: the store.
        run_id: the parent run.
        files: uploaded as artifacts (summary markdown/json, plot); missing ones skipped.
        tags: e.g. ``sweep.n_failed``, ``sweep.failed_jobs``.
        metrics: from :func:`locomo_exp.tracking.metrics.parent_metrics`.
        table: rows for ``log_table`` (:data:`SWEEP_TABLE_FILE`), may be empty.
        status: ``FINISHED``, ``FAILED`` or ``KILLED`` (the sweep was interrupted).
        chart_image: the sweep plot (J and F1 against the swept value with 95% interval
            bars), also logged as an MLflow image under :data:`SWEEP_PLOT_KEY`: MLflow's
            chart views give every image key an image card, the one way they show an
            interval (their bar, line, scatter and parallel charts draw none; issue 30 §4).
            ``None`` or a missing file: no image.
    """
    from mlflow.entities import Metric, RunTag
    from mlflow.utils.time import get_current_time_millis

    client = _client(tracking_uri)
    for path in files:
        if Path(path).is_file():
            client.log_artifact(run_id, str(path))
    now = get_current_time_millis()  # type: ignore[no-untyped-call]
    client.log_batch(
        run_id,
        metrics=[Metric(k, v, now, 0) for k, v in finite_metrics(metrics).items()],
        tags=[RunTag(k, v) for k, v in tags.items()],
    )
    if table:
        client.log_table(run_id, data=table_columns(table), artifact_file=SWEEP_TABLE_FILE)
    if chart_image is not None and Path(chart_image).is_file():
        from PIL import Image

        with Image.open(chart_image) as image:
            client.log_image(run_id, image.convert("RGB"), key=SWEEP_PLOT_KEY, step=0)
    client.set_terminated(run_id, status)
    log.info("MLflow parent run %s ended %s", run_id, status)


__all__ = [
    "SWEEP_PLOT_KEY",
    "SWEEP_TABLE_FILE",
    "ChildRun",
    "child_runs",
    "finish_parent_run",
    "mark_run_failed",
    "start_parent_run",
]
