"""The types a loaded run is held in: :class:`RunData` and :class:`CompareError`.

A module of its own so that loading runs (:mod:`.run_dirs`), recovering stored verdicts
(:mod:`.stored_verdicts`) and the statistics (:mod:`.engine`) share them without importing
each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class CompareError(ValueError):
    """A comparison that cannot be made; the message is one line for the user."""


@dataclass
class RunData:
    """One loaded run.

    Attributes:
        path: the run directory.
        name: display name (unique among the compared runs).
        rows: the ``scores.jsonl`` rows, in file order.
        values: metric name -> per-row value in points (``None`` where absent).
        summary: ``summary.json``.
        config: ``config.yaml`` as a dict.
        card: the run's card (``card.json``, or rebuilt from config + summary).
        notes: how values were obtained (e.g. stored J recovered from the input file).
    """

    path: Path
    name: str
    rows: list[dict[str, Any]]
    values: dict[str, list[float | None]]
    summary: dict[str, Any]
    config: dict[str, Any]
    card: dict[str, Any]
    notes: list[str] = field(default_factory=list)


__all__ = ["CompareError", "RunData"]
