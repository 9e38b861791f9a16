"""Load run directories written by locomo_exp for comparison.

A run directory holds ``scores.jsonl`` (one JSON object per question), ``summary.json``,
``config.yaml`` and, when written by a version that has it, ``card.json``. Per-question
metrics (:data:`locomo_exp.compare.metrics.COMPARED_METRICS`) are converted to points
(0-100): F1 variants and BLEU-1 are stored 0-1, J 0-100.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from locomo_exp.compare.metrics import COMPARED_METRICS
from locomo_exp.compare.run_data import CompareError, RunData
from locomo_exp.report.card import build_card
from locomo_exp.results.run_log import check_version

logger = logging.getLogger(__name__)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(f"{path}: missing (not a run directory written by locomo_exp)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CompareError(f"{path}: cannot be read as JSON ({exc})") from None


def read_scores(path: Path) -> list[dict[str, Any]]:
    """Read ``scores.jsonl``.

    Args:
        path: the file.

    Returns:
        The rows.

    Raises:
        CompareError: naming the file, the line and the field, when the file is missing,
            a line is not a JSON object, or ``question``/``conversation_id``/``category``
            is missing.
    """
    if not path.is_file():
        raise CompareError(f"{path}: missing (not a run directory written by locomo_exp)")
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CompareError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise CompareError(f"{path}: line {number}: expected a JSON object")
            # conversation_id may be null (a file without conversations): those questions
            # form one cluster, so the comparison falls back to question-level intervals
            if "conversation_id" not in row:
                raise CompareError(f"{path}: line {number}: field 'conversation_id' missing")
            for name in ("question", "category"):
                if row.get(name) is None:
                    raise CompareError(f"{path}: line {number}: field '{name}' missing")
            rows.append(row)
    if not rows:
        raise CompareError(f"{path}: no questions")
    return rows


def _number(value: Any, scale: float, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CompareError(f"{where}: expected a number, got {value!r}")
    if value != value:  # NaN: not scored
        return None
    return float(value) * scale


def metric_values(rows: list[dict[str, Any]], path: Path) -> dict[str, list[float | None]]:
    """Per-row values in points of every metric at least one row carries.

    Args:
        rows: ``scores.jsonl`` rows.
        path: the file (for messages).

    Returns:
        metric name -> list aligned with ``rows``.

    Raises:
        CompareError: when a metric field holds a non-number (file, line, field named).
    """
    out: dict[str, list[float | None]] = {}
    for spec in COMPARED_METRICS:
        if not any(spec.field in row for row in rows):
            continue
        out[spec.name] = [
            _number(row.get(spec.field), spec.scale, f"{path}: line {i + 1}: field '{spec.field}'")
            for i, row in enumerate(rows)
        ]
    return out


def load_run(run_dir: Path, name: str | None = None) -> RunData:
    """Load one run directory.

    Args:
        run_dir: a directory holding ``scores.jsonl``, ``summary.json``, ``config.yaml``
            (a path to its ``scores.jsonl`` is accepted too).
        name: display name (default: the directory name).

    Returns:
        :class:`RunData`. When ``scores.jsonl`` has no per-question stored verdicts but
        ``summary.json`` has stored J, they are recovered from the input file
        (:func:`locomo_exp.compare.stored_verdicts.recover_stored_judge`).

    Raises:
        CompareError: a missing directory or file, or an unreadable line or field.
    """
    if run_dir.is_file() and run_dir.name == "scores.jsonl":
        run_dir = run_dir.parent
    if not run_dir.is_dir():
        raise CompareError(f"{run_dir}: not a directory (compare.runs takes run directories)")
    rows = read_scores(run_dir / "scores.jsonl")
    summary = _read_json(run_dir / "summary.json")
    try:
        check_version(summary, str(run_dir / "summary.json"))  # a newer layout: one line
    except ValueError as error:
        raise CompareError(str(error)) from None
    config_path = run_dir / "config.yaml"
    try:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise CompareError(
            f"{config_path}: missing (not a run directory written by locomo_exp)"
        ) from None
    except (OSError, yaml.YAMLError) as exc:
        raise CompareError(f"{config_path}: cannot be read as YAML ({exc})") from None
    card_path = run_dir / "card.json"
    if card_path.is_file():
        card = _read_json(card_path)
    else:  # rebuilt: what the run's process knew (command, date, commit) is unknown
        card = build_card(config, summary, argv=[])
        card.update({"command_line": None, "date": None})
        card["tool"] = {"name": card["tool"]["name"], "version": None, "git_commit": None}
    values = metric_values(rows, run_dir / "scores.jsonl")
    run = RunData(run_dir, name or run_dir.name, rows, values, summary, config, card)
    if "stored_j" not in values and summary.get("stored_judge"):
        from locomo_exp.compare.stored_verdicts import recover_stored_judge

        recovered, note = recover_stored_judge(run)
        run.notes.append(note)
        if recovered is not None:
            values["stored_j"] = recovered
    return run


def display_names(
    labels: Sequence[Any] | None, dir_names: Sequence[str], summaries: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Display names of compared runs: the labels given, else each run's input file name.

    The same rule for LoCoMo's and a plug-in benchmark's comparisons: input files with the
    same name get their run directory's name added (``answers.json (13-35-16)``); a run
    without an input path keeps its directory name.

    Args:
        labels: ``compare.labels`` (one per run), or ``None``.
        dir_names: each run directory's display name (:func:`unique_names`).
        summaries: each run's ``summary.json`` (``input.path`` names its file).

    Returns:
        One name per run, in order.
    """
    if labels is not None:
        return [str(label).strip() for label in labels]
    files = [Path(str((s.get("input") or {}).get("path") or "")).name for s in summaries]
    counts = {name: files.count(name) for name in files}
    return [
        run if not name else name if counts[name] == 1 else f"{name} ({run})"
        for name, run in zip(files, dir_names, strict=True)
    ]


def unique_names(paths: list[Path]) -> list[str]:
    """Short distinct display names: directory names, with parents added on collisions."""
    depth = 1
    while True:
        names = ["/".join(p.resolve().parts[-depth:]) for p in paths]
        if len(set(names)) == len(names) or depth > 6:
            return (
                names
                if len(set(names)) == len(names)
                else [f"{i + 1}:{n}" for i, n in enumerate(names)]
            )
        depth += 1


__all__ = [
    "CompareError",
    "RunData",
    "display_names",
    "load_run",
    "metric_values",
    "read_scores",
    "unique_names",
]
