"""JSON reading helpers shared by the result types of :mod:`locomo_exp.results`."""

from __future__ import annotations

from typing import Any


def opt_float(value: Any) -> float | None:
    """``None`` stays ``None``; anything else becomes a ``float``."""
    return None if value is None else float(value)
