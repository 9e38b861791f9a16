"""A finished run's judge-check warnings, read back from its ``summary.json``.

The sweep summary and ``mode=compare`` show other runs' results; a J the run's own report
flags (J inflated, J deflated, low agreement, ...) must be flagged wherever it is shown
again. This module reads the warnings from any benchmark's ``summary.json``:

- LoCoMo: ``summary["judge"]["trust"]["warnings"]`` (:mod:`locomo_exp.trust.checks`);
- a benchmark plug-in's run: ``summary["warnings"]`` (written by the plug-in's checks);
- any: a status value ``"warning: <text>"`` when no list was written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATUS_WARNING_PREFIX = "warning: "
"""How a finished part's status carries its warnings (``trust.checks.WARNING_PREFIX``)."""


def run_warnings(summary: Mapping[str, Any] | None) -> list[str]:
    """The judge-check warnings of one run, in the order its report shows them.

    Args:
        summary: the run's ``summary.json`` content (LoCoMo's or a plug-in's); ``None`` for
            a run without one.

    Returns:
        Each warning's full text once (e.g. ``"J inflated (the judge rejected 0/7 ...)"``);
        ``[]`` when the run has none.
    """
    if not summary:
        return []
    judge = summary.get("judge")
    trust = judge.get("trust") if isinstance(judge, Mapping) else None
    found: list[str] = []
    for source in (
        summary.get("warnings"),
        trust.get("warnings") if isinstance(trust, Mapping) else None,
    ):
        if isinstance(source, list):
            found += [str(w) for w in source if w]
    if not found:
        status = summary.get("status")
        for value in (status or {}).values() if isinstance(status, Mapping) else ():
            if isinstance(value, str) and value.startswith(STATUS_WARNING_PREFIX):
                found.append(value[len(STATUS_WARNING_PREFIX):])
    return list(dict.fromkeys(found))


def warning_head(warning: str) -> str:
    """A warning's first words, before its parenthesised measurement.

    ``"J inflated (the judge accepted 7/7 ...)"`` -> ``"J inflated"``.
    """
    return warning.split(" (", 1)[0].strip().rstrip(":;,.")


def status_with_warnings(status: str, warnings: list[str]) -> str:
    """A job's status word with its warnings' heads: ``COMPLETED — WARNING: J inflated``.

    Args:
        status: the job's status (``COMPLETED``, ``FAILED``, ...).
        warnings: :func:`run_warnings` of the job.

    Returns:
        ``status`` unchanged when there is no warning.
    """
    if not warnings:
        return status
    heads = list(dict.fromkeys(warning_head(w) for w in warnings))
    return f"{status} — WARNING: {'; '.join(heads)}"


__all__ = ["STATUS_WARNING_PREFIX", "run_warnings", "status_with_warnings", "warning_head"]
