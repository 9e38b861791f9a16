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


GROUP_FIELDS = {"diff": 1.0, "difference": 100.0}
"""A plug-in ``compare.json`` group's difference field and its scale to points: ``diff`` is
in points already (``benchmarks/pipeline_compare.py``), ``difference`` is 0-1 (the plug-ins
with their own comparison)."""


def pair_prefix(run_a: str, run_b: str) -> str:
    """``compare/<A>_vs_<B>``, sanitised to MLflow's metric-name character set."""
    pair = re.sub(r"[^A-Za-z0-9_\-. :]+", "_", f"{run_a}_vs_{run_b}")
    return f"compare/{pair.replace('..', '_')}"


def _groups(node: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """Every group of a ``compare.json`` tree: a mapping with a ``pvalue`` key, by key path."""
    if not isinstance(node, Mapping):
        return []
    if "pvalue" in node and any(key in node for key in GROUP_FIELDS):
        return [(path, node)]
    return [found for key, value in node.items() for found in _groups(value, (*path, str(key)))]


def plugin_comparison_metrics(
    body: Mapping[str, Any], run_a: str, run_b: str, flips: Mapping[str, int]
) -> dict[str, float]:
    """A plug-in comparison's MLflow metrics, read from its ``compare.json``.

    Every group of the file (a mapping with ``pvalue`` and ``diff`` or ``difference``, at
    any depth: ``profiles/<profile>/<group>``, ``groups/<group>``)
    gives ``<prefix>/<path>/diff``, ``ci_low``, ``ci_high`` (points, 0-100, the
    comparison's own interval), ``p`` and ``p_holm`` (as the file has them); the flips give
    ``<prefix>/flips/gained`` and ``lost`` (questions). ``<prefix>`` is
    :func:`pair_prefix`; the path leaves out the file's top key (``profiles``, ``groups``).
    A value not measured (``None``) is not logged.

    Args:
        body: ``compare.json``.
        run_a: run A's display name.
        run_b: run B's display name.
        flips: ``{"gained": n, "lost": n}`` (B's view against A).

    Returns:
        ``{metric name: value}``; names at most 250 characters.
    """
    prefix = pair_prefix(run_a, run_b)
    out: dict[str, float] = {}
    for path, group in _groups(body, ()):
        name = re.sub(r"[^A-Za-z0-9_\-. :/]+", "_", "/".join(path[1:] or path))
        field = next(key for key in GROUP_FIELDS if key in group)
        scale = GROUP_FIELDS[field]
        ci = group.get("ci") or [None, None]
        values = {"diff": group.get(field), "ci_low": ci[0], "ci_high": ci[1],
                  "p": group.get("pvalue"), "p_holm": group.get("pvalue_holm")}
        for key, value in values.items():
            if value is None:
                continue
            factor = scale if key in ("diff", "ci_low", "ci_high") else 1.0
            out[f"{prefix}/{name}/{key}"[:250]] = round(float(value) * factor, 6)
    for direction, count in flips.items():
        out[f"{prefix}/flips/{direction}"[:250]] = float(count)
    return out


__all__ = [
    "RUN_FILES", "RunFetchError", "fetch_run_files", "log_comparison", "looks_like_run_id",
    "pair_prefix", "plugin_comparison_metrics",
]
