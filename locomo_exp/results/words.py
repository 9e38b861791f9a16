"""Counted nouns in messages: ``1 question``, ``2 questions``, ``1,540 questions``."""

from __future__ import annotations


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
