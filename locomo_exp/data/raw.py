"""Walking a parsed results file: raw records, their locations, and dotted field access."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MISSING: Any = object()
"""Stands for an absent field (distinct from a JSON ``null``)."""

RawItem = tuple[str, str | None, Any]
"""``(where, conversation id, raw record)``: ``where`` is e.g. ``[3]`` or ``["0"][7]``."""


def get_field(raw: dict[str, Any], key: str | None) -> Any:
    """Read a possibly dotted key (``meta.category``); :data:`MISSING` when absent."""
    if key is None:
        return MISSING
    value: Any = raw
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def iter_records(obj: Any, prefix: str = "") -> Iterator[RawItem]:
    """Yield the raw records of a list, or of a dict of conversation -> list.

    Args:
        obj: a JSON list of records, or a dict whose values are lists of records (the key
            is the conversation id).
        prefix: prepended to every ``where`` (the records key of a wrapper).

    Yields:
        :data:`RawItem` in file order; a dict value that is not a list yields one
        :data:`MISSING` record so that it is reported.

    Raises:
        ValueError: when ``obj`` is neither.
    """
    if isinstance(obj, list):
        for index, raw in enumerate(obj):
            yield f"{prefix}[{index}]", None, raw
    elif isinstance(obj, dict):
        for key, items in obj.items():
            if not isinstance(items, list):
                yield f'{prefix}["{key}"]', str(key), MISSING
                continue
            for index, raw in enumerate(items):
                yield f'{prefix}["{key}"][{index}]', str(key), raw
    else:
        raise ValueError("expected a JSON list of records or a dict of lists of records")


def sample_records(obj: Any, limit: int = 200) -> list[dict[str, Any]]:
    """Up to ``limit`` record objects of a list or dict of lists, for detecting fields."""
    found: list[dict[str, Any]] = []
    try:
        for _, _, raw in iter_records(obj):
            if isinstance(raw, dict):
                found.append(raw)
                if len(found) >= limit:
                    break
    except ValueError:
        return []
    return found


__all__ = ["MISSING", "RawItem", "get_field", "iter_records", "sample_records"]
