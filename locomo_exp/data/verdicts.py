"""Judge verdicts stored in a results file by the file's authors: fields, scale, aggregates.

Published LoCoMo files carry another judge's verdicts under several names and encodings
(docs/field_notes.md §2, §8):

* one verdict per question: ``llm_score`` (Mem0 harness, 0/1), ``grade`` (Zep, true/false),
  ``is_correct``, ``judgment`` (true/false or ``"CORRECT"``/``"WRONG"``), or LoCoMo's own
  ``<name>_llm`` (1/0);
* several verdicts per question: ``llm_judgments: {judgment_1: true, judgment_2: ...}``
  -- one per judge run.

Every importer puts them on 0-100 with the same rule, decided once per file from all the
verdicts (:func:`locomo_exp.data.answer_values.stored_judge_scale`). A question's stored J
is the mean of its verdicts; :func:`stored_judge_detail` adds the majority vote and the
J of each run, which is how files with several judgments are published.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS
from locomo_exp.results import QARecord

VERDICT_FIELDS: tuple[str, ...] = ("llm_score", "grade", "is_correct", "judgment", "llm_judgments")
"""Field names of stored verdicts that are detected, in order of preference."""

MULTI_SUFFIX = ".*"
"""Appended to the field name when it holds several verdicts (``llm_judgments.*``)."""

_NUMBER_RE = re.compile(r"(\d+)")


def _natural_key(key: str) -> list[Any]:
    """``judgment_2`` before ``judgment_10``."""
    return [int(part) if part.isdigit() else part for part in _NUMBER_RE.split(str(key))]


def detect_verdict_field(
    items: Iterable[Any], candidates: Sequence[str] = VERDICT_FIELDS
) -> str | None:
    """The stored-verdict field of a file's records, if any.

    Args:
        items: raw records (dicts; anything else is ignored).
        candidates: field names to look for, in order of preference.

    Returns:
        The first candidate present in some record; else the first found one level down,
        as a dotted name (``evaluation.is_correct`` for ``{"evaluation": {"is_correct":
        true, ...}}``); else ``None``.
    """
    present: set[str] = set()
    nested: dict[str, str] = {}
    for item in items:
        if isinstance(item, dict):
            present.update(k for k in candidates if k in item)
            for key, value in item.items():
                if isinstance(value, dict) and key not in candidates:
                    for name in candidates:
                        if name in value:
                            nested.setdefault(name, f"{key}.{name}")
    top = next((name for name in candidates if name in present), None)
    return top or next((nested[name] for name in candidates if name in nested), None)


def verdict_list(value: Any) -> list[Any] | None:
    """The verdicts of one question when the field holds several, else ``None``.

    Args:
        value: the field's value: a dict ``{judgment_1: ..., judgment_2: ...}`` (ordered
            by the number in the key) or a list.

    Returns:
        The verdicts in run order, or ``None`` for a single verdict.
    """
    if isinstance(value, dict):
        return [value[key] for key in sorted(value, key=_natural_key)]
    if isinstance(value, list):
        return list(value)
    return None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _majority(verdicts: Sequence[float]) -> float:
    """100 when more than half of the verdicts are correct (>= 50 on 0-100), else 0."""
    correct = sum(1 for v in verdicts if v >= 50)
    return 100.0 if correct * 2 > len(verdicts) else 0.0


def _group_stats(records: list[QARecord], members: tuple[int, ...]) -> dict[str, Any]:
    chosen = [r for r in records if r.category in members and r.stored_judgments]
    n_runs = max((len(r.stored_judgments) for r in chosen), default=0)
    per_run: list[float | None] = []
    for run in range(n_runs):
        per_run.append(
            _mean([r.stored_judgments[run] for r in chosen if len(r.stored_judgments) > run])
        )
    finite_runs = [v for v in per_run if v is not None]
    return {
        "count": len(chosen),
        "mean": _mean([r.stored_judge_score for r in chosen if r.stored_judge_score is not None]),
        "majority": _mean([_majority(r.stored_judgments) for r in chosen]),
        "per_run": per_run,
        "runs_mean": _mean(finite_runs),
        "runs_std": statistics.stdev(finite_runs) if len(finite_runs) > 1 else None,
    }


def stored_judge_detail(records: list[QARecord], field: str | None) -> dict[str, Any] | None:
    """Stored J as the file's authors compute it: mean, majority vote and per run.

    Args:
        records: loaded records; ``stored_judgments`` on 0-100.
        field: the verdict field read (e.g. ``llm_judgments.*``), for the report.

    Returns:
        ``None`` when no record carries a verdict, else ``{"field", "n_judgments",
        "groups": {key: {"count", "mean", "majority", "per_run", "runs_mean",
        "runs_std"}}}`` with every value on 0-100 and keys ``"1"``..``"5"``,
        ``overall_1_4``, ``overall``. ``mean`` is the mean over questions of each
        question's mean verdict; ``majority`` counts a question correct when more than half
        of its verdicts are; ``per_run[k]`` is the J of the k-th verdict of every question
        (e.g. ``judgment_1``); ``runs_std`` is the sample standard deviation across runs
        (the "J ± x" of papers), ``None`` with fewer than two runs.

    Example:
        Three questions judged T,T,F / T,F,F / T,F,F give mean 44.44, majority 33.33 and
        runs 100 / 33.33 / 0.
    """
    if not any(r.stored_judgments for r in records):
        return None
    return {
        "field": field,
        "n_judgments": max(len(r.stored_judgments) for r in records),
        "groups": {key: _group_stats(records, members) for key, members in CATEGORY_GROUPS.items()},
    }


def mean_and_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (n - 1) of finite values.

    Args:
        values: numbers (NaN ignored).

    Returns:
        ``(mean, std)``; ``std`` is ``None`` with fewer than two values, both ``None``
        with none. ``[50, 100]`` gives ``(75.0, 35.355...)``.
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return None, None
    return _mean(finite), (statistics.stdev(finite) if len(finite) > 1 else None)


__all__ = [
    "MULTI_SUFFIX",
    "VERDICT_FIELDS",
    "detect_verdict_field",
    "mean_and_std",
    "stored_judge_detail",
    "verdict_list",
]
