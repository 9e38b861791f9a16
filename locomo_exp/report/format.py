"""Number and cell formatting shared by the report's sections."""

from __future__ import annotations

from typing import Any

MISSING = "n/a"
"""The one way the report prints a value that is missing (not measured, or undefined)."""


def fmt_pct(value: float | None, scale: float = 100.0, digits: int = 2) -> str:
    """Format a 0-1 score as a percentage.

    Args:
        value: a score on 0-1, or ``None``.
        scale: multiplier (100 for percent).
        digits: decimals.

    Returns:
        ``0.5145 -> "51.45"``; ``None`` -> ``"n/a"``.
    """
    if value is None:
        return MISSING
    return f"{value * scale:.{digits}f}"


def fmt_num(value: float | None, digits: int = 2) -> str:
    """Format a number as is (no scaling): ``66.875 -> "66.88"``; ``None`` -> ``"n/a"``."""
    return MISSING if value is None else f"{value:.{digits}f}"


def table_cell(text: Any, limit: int = 80) -> str:
    """Text for one markdown table cell: ``|`` escaped, newlines as spaces, cut at ``limit``.

    Args:
        text: any value (``None`` -> empty).
        limit: maximum length in characters; longer text ends with ``…``.

    Returns:
        The cell text.
    """
    cell = "" if text is None else str(text)
    cell = cell.replace("|", "\\|").replace("\n", " ")
    return cell if len(cell) <= limit else cell[: limit - 1] + "…"
