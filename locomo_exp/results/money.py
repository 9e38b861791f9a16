"""US dollar amounts as stored and printed: rounded to a millionth of a dollar.

Costs are sums of token counts times prices per million tokens, so binary floating point
leaves noise in the last digits (``0.004730549999999999`` for 0.00473055). Every cost the
project writes (``summary.json``, ``card.json``, ``sweep_summary.json``) or prints goes
through :func:`round_money`, so one amount has one spelling everywhere.
"""

from __future__ import annotations

from typing import Any

USD_DECIMALS = 6
"""Decimals kept for US dollar amounts (a millionth of a dollar: below any API's unit price)."""

USD_SUFFIX = "_usd"
"""Keys holding US dollars end with this (``estimated_cost_usd``, ``total_cost_usd``)."""


def usd(value: float | None) -> float | None:
    """A US dollar amount rounded to :data:`USD_DECIMALS` decimals (``None`` stays ``None``)."""
    return None if value is None else round(float(value), USD_DECIMALS)


def _all_rounded(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return usd(value)
    if isinstance(value, dict):
        return {key: _all_rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_all_rounded(item) for item in value]
    return value


def round_money(obj: Any) -> Any:
    """A copy of a JSON-like object with every amount under a ``*_usd`` key rounded.

    Args:
        obj: dicts, lists and scalars (e.g. a ``summary.json`` body). Under a key ending
            in ``_usd`` every number is rounded (also in nested dicts, e.g. a cost per
            control); other values are left as they are.

    Returns:
        The copy; ``obj`` is not changed.
    """
    if isinstance(obj, dict):
        return {
            key: _all_rounded(value)
            if isinstance(key, str) and key.endswith(USD_SUFFIX)
            else round_money(value)
            for key, value in obj.items()
        }
    if isinstance(obj, list):
        return [round_money(item) for item in obj]
    return obj
