"""Counted nouns in messages (``1 question``, ``2 questions``) and a failed job's paid calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def counted(n: int, singular: str, plural: str | None = None, thousands: bool = False) -> str:
    """``n`` followed by the noun in the number it takes.

    Args:
        n: the count.
        singular: the noun for one (``"question"``).
        plural: the noun for any other count; default ``singular + "s"``.
        thousands: write ``n`` with ``,`` between thousands (``1,540``).

    Returns:
        E.g. ``counted(1, "question") == "1 question"``, ``counted(0, "question") ==
        "0 questions"``, ``counted(2, "batch", "batches") == "2 batches"``.
    """
    word = singular if n == 1 else (plural or singular + "s")
    return f"{n:,} {word}" if thousands else f"{n} {word}"


def paid_words(paid: Mapping[str, Any]) -> str:
    """What a failed job paid: ``$0.0981 paid for 18 calls (756000 input, 432 output tokens)``.

    Args:
        paid: ``calls``, ``input_tokens``, ``output_tokens``, ``cost_usd`` (USD); a ``None``
            figure is unknown (replies without token usage, a model without a price).

    Returns:
        One phrase; unknown figures read ``cost unknown`` / ``tokens unknown``, never 0.
    """
    cost = paid.get("cost_usd")
    money = "cost unknown" if cost is None else f"${float(cost):.4f}"
    tokens_in, tokens_out = paid.get("input_tokens"), paid.get("output_tokens")
    tokens = (
        "tokens unknown" if tokens_in is None or tokens_out is None
        else f"{tokens_in} input, {tokens_out} output tokens"
    )
    return f"{money} paid for {counted(int(paid.get('calls') or 0), 'call')} ({tokens})"
