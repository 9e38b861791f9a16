"""Records beside metadata: ``{"summary": {...}, "detailed_results": [records]}``.

Some harnesses wrap their records in an object that also holds the run's own aggregates.
:func:`locate_records` finds the list (or dict of conversation -> list) of record objects
inside the wrapper with no option; ``data.records_key=a.b`` names it when several
candidates exist -- except when the other lists hold the same records as one full list
(``{"responses": [all], "by_type": {"temporal": {"responses": [some]}}}``): that list is
read and the others are named as its partitions. Sibling values that are plain numbers
are kept as the file's own aggregates (:func:`file_aggregates`) so that the report can
show them beside ours.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from locomo_exp.data.fields import QUESTION_NAMES

MAX_DEPTH = 4
"""How deep inside the wrapper records are looked for."""


def _is_record(item: Any) -> bool:
    return isinstance(item, dict) and any(name in item for name in QUESTION_NAMES)


def is_record_list(value: Any) -> bool:
    """A non-empty list whose first element is a record object (it has a question field)."""
    return isinstance(value, list) and bool(value) and _is_record(value[0])


def is_records(value: Any) -> bool:
    """A list of records, or a non-empty dict whose every value is a list of records."""
    if is_record_list(value):
        return True
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(v, list) for v in value.values())
        and any(is_record_list(v) for v in value.values())
    )


def _candidates(obj: Any, prefix: str, depth: int) -> list[str]:
    if not isinstance(obj, dict) or depth > MAX_DEPTH:
        return []
    found: list[str] = []
    for key, value in obj.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if is_records(value):
            found.append(path)
        elif isinstance(value, dict):
            found.extend(_candidates(value, path, depth + 1))
    return found


def select(obj: Any, key: str) -> Any:
    """The value at a dotted key of nested objects.

    Raises:
        ValueError: when a part of ``key`` is absent.
    """
    value = obj
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise ValueError(f"data.records_key={key}: no key '{part}' in the file")
        value = value[part]
    return value


@dataclass(frozen=True)
class FoundRecords:
    """Where the records of a file are.

    Attributes:
        records: the list (or dict of conversation -> list) of records.
        key: its dotted key inside the wrapper object, or ``None`` when the file itself
            is the records.
        partitions: dotted keys of other lists in the file that hold only records of
            ``records`` (a breakdown by type, say), not read again.
    """

    records: Any
    key: str | None
    partitions: tuple[str, ...] = ()


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [item for items in value.values() if isinstance(items, list) for item in items]


def _record_counts(value: Any) -> Counter[str]:
    return Counter(json.dumps(item, sort_keys=True, default=str) for item in _flat(value))


def _full_list(obj: Any, found: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """The one candidate whose records include every other candidate's, with the others.

    Records are compared as whole objects (every field, as parsed), counted with
    multiplicity; a list that holds one record the full list lacks makes the lists
    different (``None``).
    """
    counts = {key: _record_counts(select(obj, key)) for key in found}
    for key in sorted(found, key=lambda k: -sum(counts[k].values())):
        if all(not (counts[other] - counts[key]) for other in found if other != key):
            return key, tuple(other for other in found if other != key)
        break  # only the largest list can hold all the others
    return None


def locate_records(obj: Any, records_key: str | None = None) -> FoundRecords:
    """The records of a file, unwrapped when they sit inside an object beside metadata.

    Args:
        obj: the parsed file.
        records_key: ``data.records_key`` (dotted), or ``None`` to detect.

    Returns:
        :class:`FoundRecords`: ``obj`` itself and key ``None`` when it is already a list or
        a dict of lists; else the one list / dict of lists of records found inside and its
        dotted key (e.g. ``detailed_results``). When several lists are found and the
        largest holds every record of the others (they are partitions of it, e.g.
        ``responses`` and ``by_type.temporal.responses``), the largest is read and the
        others are listed in ``partitions``.

    Raises:
        ValueError: when ``records_key`` does not name records, or when several lists
            hold different records (the message lists them and asks for
            ``data.records_key``).
    """
    if records_key:
        value = select(obj, records_key)
        if not (is_records(value) or (isinstance(value, list) and value)):
            raise ValueError(
                f"data.records_key={records_key} is not a list of records or a dict of lists "
                "of records"
            )
        return FoundRecords(value, records_key)
    if not isinstance(obj, dict) or all(isinstance(v, list) for v in obj.values()):
        return FoundRecords(obj, None)
    found = _candidates(obj, "", 0)
    if len(found) == 1:
        return FoundRecords(select(obj, found[0]), found[0])
    if len(found) > 1:
        full = _full_list(obj, found)
        if full is not None:
            return FoundRecords(select(obj, full[0]), full[0], full[1])
        raise ValueError(
            f"several lists of records in the file: {', '.join(found)}; "
            "they hold different records: choose one with data.records_key=<key>"
        )
    return FoundRecords(obj, None)


def find_records(obj: Any, records_key: str | None = None) -> tuple[Any, str | None]:
    """``(records, key)`` of :func:`locate_records` (partitions dropped).

    Raises:
        ValueError: as :func:`locate_records`.
    """
    found = locate_records(obj, records_key)
    return found.records, found.key


def file_aggregates(obj: Any, records_key: str | None) -> dict[str, float]:
    """The wrapper's sibling values that are plain numbers, by dotted key.

    Args:
        obj: the parsed file.
        records_key: where the records are (left out), or ``None`` (no wrapper: nothing).

    Returns:
        e.g. ``{"summary.accuracy": 0.5, "summary.total": 2}``; booleans, text and lists
        are left out. These are the file's own aggregates, shown as given (no rescaling).
    """
    if records_key is None or not isinstance(obj, dict):
        return {}
    found: dict[str, float] = {}

    def walk(node: dict[str, Any], prefix: str, depth: int) -> None:
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if path == records_key:
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[path] = value
            elif isinstance(value, dict) and depth < MAX_DEPTH and not is_records(value):
                walk(value, path, depth + 1)

    walk(obj, "", 0)
    return found
