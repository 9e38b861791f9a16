"""Names of a sweep's child runs and of its per-job metrics, from the swept values.

Pure functions: a swept value becomes a short label (``T=0.5``, ``sonnet-4-6``, a file
name), a child run is named by its labels first (``T=0.5 · sonnet-4-6 · both``), and a
swept key becomes a legal MLflow tag name. Used by :mod:`locomo_exp.tracking.metrics`
and re-exported by :mod:`locomo_exp.tracking`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath

from locomo_exp.tracking.names import metric_name

RUN_NAME_SEPARATOR = " · "
"""Between the parts of a child run's name: ``T=0.5 · sonnet-4-6 · both``."""

_DATE_SUFFIX_RE = re.compile(r"-\d{8}$")


def model_short_name(model: str) -> str:
    """A model id as shown in run names: ``claude-sonnet-4-6`` -> ``sonnet-4-6``.

    The ``claude-`` prefix and a trailing snapshot date (``-20251001``) are dropped.
    """
    short = model[len("claude-") :] if model.startswith("claude-") else model
    return _DATE_SUFFIX_RE.sub("", short) or model


def single_run_name(
    stem: str, scorer: str, *, f1_variant: str, limit: int | None, judge_model: str | None,
    judge_runs: int = 1,
) -> str:
    """A single run's default name: what tells it apart from the other runs of its file.

    ``zep_locomo_grades · both · sonnet-4-6 ×3 · f1=squad · sample 200``: the input file's
    stem, the scorer, the judge (model, and runs when several) when it ran, the F1 variant
    when it is not LoCoMo's, the sample size when ``data.limit`` took one.

    Args:
        stem: the input file's name without its extension.
        scorer: ``f1``, ``judge`` or ``both``.
        f1_variant: ``f1.variant``.
        limit: ``data.limit`` (``None``: every question).
        judge_model: the judge model id when the judge runs, else ``None``.
        judge_runs: ``judge.runs``.

    Returns:
        The name.
    """
    parts = [stem, scorer]
    if judge_model:
        parts.append(model_short_name(judge_model) + (f" ×{judge_runs}" if judge_runs > 1 else ""))
    if f1_variant != "locomo":
        parts.append(f"f1={f1_variant}")
    if limit:
        parts.append(f"sample {limit}")  # not the full benchmark
    return RUN_NAME_SEPARATOR.join(parts)


def _is_file_value(key: str, value: str) -> bool:
    """Whether a swept ``data.*`` value is a file path (shown by its file name)."""
    return key.startswith("data.") and ("/" in value or value.endswith((".json", ".jsonl")))


def swept_label(key: str, value: str) -> str:
    """One swept value as a run-name part, the value first where a short form exists.

    ``judge.temperature`` -> ``T=0.5``; ``judge.model`` -> the model's short name
    (``sonnet-4-6``); the ``judge`` preset group and ``scorer`` -> the value itself
    (``haiku-4-5``, ``both``); a file path (``data.path``, ``data.runs``, ...) -> its file
    name without the folder and extension; any other key -> ``key=value``.
    """
    key = key.lstrip("+~")
    if _is_file_value(key, value):
        return PurePosixPath(value.strip("'\"")).stem or value
    if key == "judge.temperature":
        return f"T={value}"
    if key == "judge.model":
        return model_short_name(value)
    if key in ("judge", "scorer"):
        return value
    return f"{key}={value}"


def child_run_name(
    swept: Mapping[str, str], *, model: str | None = None, scorer: str | None = None
) -> str:
    """A sweep child's run name: swept values first, then the model and the scorer.

    The runs list of the MLflow UI cuts long names, so the part that differs between
    children comes first: ``T=0.5 · sonnet-4-6 · both`` for a sweep over
    ``judge.temperature`` with ``scorer=both`` and the Sonnet judge.

    Args:
        swept: swept key -> display value, in sweep order.
        model: the judge model id when the job runs the judge (``None`` otherwise);
            left out when the model (``judge.model`` or ``judge``) is swept.
        scorer: the job's scorer; left out when ``scorer`` is swept.

    Returns:
        The name (at most 250 characters), ``job`` when there is nothing to show.
    """
    keys = {key.lstrip("+~") for key in swept}
    parts = [swept_label(key, value) for key, value in swept.items()]
    if model and not keys & {"judge.model", "judge"}:
        parts.append(model_short_name(model))
    if scorer and "scorer" not in keys:
        parts.append(scorer)
    return RUN_NAME_SEPARATOR.join(parts)[:250] or "job"


def swept_tag_name(key: str) -> str:
    """MLflow tag name of a swept key (``+judge.x`` -> ``judge.x``; illegal characters -> ``_``)."""
    return metric_name(key.lstrip("+~"))


def sweep_value_label(swept: Mapping[str, str]) -> str:
    """A job's swept values as one metric-name part: ``T:0.5``, ``T:0.5 haiku-4-5``.

    Like the run name (:func:`swept_label`) with ``=`` written ``:``, since MLflow metric
    names cannot hold ``=``.
    """
    parts = [
        swept_label(key, value) if _is_file_value(key.lstrip("+~"), value)
        else swept_label(key, value).replace("=", ":", 1)
        for key, value in swept.items()
    ]
    return metric_name(" ".join(parts)) or "job"
