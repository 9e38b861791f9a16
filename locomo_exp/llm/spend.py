"""Spend accounting: what tokens cost at a model's list price (USD per million tokens).

Cost = (input tokens x input price + output tokens x output price) / 10^6 x a factor
(``judge.batch.price_factor`` for batch replies); prices are USD per million tokens, as the
providers publish them (each preset's ``judge.model_info``, docs/field_notes.md §4).
"""

from __future__ import annotations

import re
from typing import Any

_DATED_ID_RE = re.compile(r"^(.+?)-\d{8}$")


def find_price(model: str, prices: dict[str, Any]) -> dict[str, float] | None:
    """The price entry of a model: its exact id, else its id without a date suffix.

    Args:
        model: model id, e.g. ``claude-sonnet-4-5-20250929``.
        prices: ``{model: {"input": usd_per_mtok, "output": usd_per_mtok}}``.

    Returns:
        ``{"input": ..., "output": ...}`` in USD per million tokens, or ``None``.
    """
    entry = prices.get(model)
    if entry is None:
        match = _DATED_ID_RE.match(model)
        entry = prices.get(match.group(1)) if match else None
    if entry is None:
        return None
    return {"input": float(entry["input"]), "output": float(entry["output"])}


def estimate_cost_usd(
    model: str, input_tokens: float, output_tokens: float, prices: dict[str, Any]
) -> float | None:
    """Estimated cost in US dollars.

    Args:
        model: model id.
        input_tokens: input tokens.
        output_tokens: output tokens.
        prices: price table, ``{model: {"input", "output"}}`` in USD per million tokens.

    Returns:
        The cost, or ``None`` when the model has no price entry.
    """
    return cost_usd(find_price(model, prices), input_tokens, output_tokens)


def cost_usd(
    price: dict[str, float] | None,
    input_tokens: float,
    output_tokens: float,
    factor: float = 1.0,
) -> float | None:
    """Cost in US dollars of some tokens at a price entry (see :func:`find_price`).

    Args:
        price: ``{"input": ..., "output": ...}`` in USD per million tokens, or ``None``.
        input_tokens: input tokens.
        output_tokens: output tokens.
        factor: multiplier of the list price (``judge.batch.price_factor`` for batch
            replies, 1.0 for realtime calls).

    Returns:
        The cost in USD, or ``None`` when there is no price.
    """
    if price is None:
        return None
    return (input_tokens * price["input"] + output_tokens * price["output"]) / 1_000_000 * factor


__all__ = ["cost_usd", "estimate_cost_usd", "find_price"]
