"""MLflow side of ``mode=compare``: fetch a logged run's files, log the comparison run."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from locomo_exp.config.secrets import redact_uri
from locomo_exp.tracking.headline import NOTE_TAG
from locomo_exp.tracking.names import finite_metrics
from locomo_exp.tracking.store import (
    RunSpec,
    error_reason,
    log_artifacts,
    log_metrics,
    mlflow_run,
)

log = logging.getLogger(__name__)

RUN_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")
"""What an MLflow run id looks like (32 lower-case hex digits)."""

RUN_FILES = ("scores.jsonl", "summary.json", "config.yaml", "card.json")
"""The artifacts of a run that ``compare`` reads (``card.json`` optional)."""

COMPARE_KIND_TAG = "locomo_exp.kind"


class RunFetchError(ValueError):
    """An MLflow run whose files cannot be fetched; one line naming the run and file."""


def looks_like_run_id(text: str) -> bool:
    """True when ``text`` has the form of an MLflow run id (32 hex digits)."""
    return bool(RUN_ID_PATTERN.match(str(text).strip()))


def fetch_run_files(tracking_uri: str, run_id: str, dest: Path) -> Path:
    """Download the files ``compare`` needs from an MLflow run's artifacts.

    Args:
        tracking_uri: the store holding the run.
        run_id: the run's id.
        dest: directory to download into (``dest/<run_id>`` is created).

    Returns:
        The directory holding ``scores.jsonl``, ``summary.json``, ``config.yaml`` (and
        ``card.json`` when the run logged one).

    Raises:
        RunFetchError: the run does not exist in the store, or lacks a required file.
    """
    import mlflow

    target = Path(dest) / run_id
    target.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        try:
            mlflow.artifacts.download_artifacts(
                run_id=run_id, artifact_path=name, dst_path=str(target), tracking_uri=tracking_uri
            )
        except Exception as error:  # unknown run, missing artifact, unreachable store
            if name == "card.json":
                continue
            raise RunFetchError(
                f"MLflow run {run_id} in {redact_uri(tracking_uri)}: cannot fetch {name} "
                f"({error_reason(error)})"
            ) from None
    log.info("fetched MLflow run %s into %s", run_id, target)
    return target


def log_comparison(
    *,
    tracking_uri: str,
    experiment: str,
    run_name: str,
    tags: Mapping[str, str],
    metrics: Mapping[str, Any],
    artifacts: list[Path],
    params: Mapping[str, str] | None = None,
    description: str = "",
) -> tuple[str, str]:
    """Log a finished comparison as its own MLflow run.

    Args:
        tracking_uri: the store.
        experiment: experiment name.
        run_name: display name of the run.
        tags: links to the compared runs (``CompareResult.mlflow_tags``).
        metrics: differences, bounds and p-values in points
            (``CompareResult.mlflow_metrics``); non-finite values are left out.
        artifacts: ``compare.md``, ``compare.json``, forest plots.
        params: logged as they are (why an interval was not measured,
            ``CompareResult.mlflow_params``).
        description: the run's description (``mlflow.note.content``), when not empty.

    Returns:
        ``(run_id, experiment_id)`` of the new run.

    Raises:
        TrackingStoreError: the store cannot be opened (one line).
    """
    note = {NOTE_TAG: description} if description else {}
    spec = RunSpec(
        tracking_uri=tracking_uri,
        experiment=experiment,
        run_name=run_name,
        tags={COMPARE_KIND_TAG: "compare", **dict(tags), **note},
        params=params,
    )
    with mlflow_run(spec) as run:
        log_metrics(finite_metrics(metrics))
        log_artifacts([p for p in artifacts if Path(p).is_file()])
        return run.info.run_id, run.info.experiment_id


__all__ = ["RUN_FILES", "RunFetchError", "fetch_run_files", "log_comparison", "looks_like_run_id"]
