"""Who judged the verdicts stored in an input file: what the file states, what is published.

A file's stored verdicts ("stored J") come from a judge this run never called. What is known
about it is recorded, and nothing more: the field the verdicts were read from; the judge
model when the file itself names it (a wrapper's ``metadata.judge_model``, say, see
:data:`STATED_KEYS`); else, for a layout whose harness is documented in a published source
(:attr:`~.layout_spec.LayoutSpec.own_judge`), that source's judge, marked as not recorded in
the file; else "not recorded in the file".
"""

from __future__ import annotations

from typing import Any

from locomo_exp.data.wrapped import MAX_DEPTH, is_records

STATED_KEYS = ("judge_model", "grader_model", "evaluator_model", "eval_model")
"""Keys of a wrapper object (outside the records) whose text names the judge model."""

NOT_RECORDED = "not recorded in the file"


def stated_judge(obj: Any, records_key: str | None) -> tuple[str, str] | None:
    """The judge model a file names beside its records, with the key that names it.

    Args:
        obj: the parsed file.
        records_key: where the records are (not searched), or ``None`` (no wrapper: the
            file is only records, and names nothing).

    Returns:
        ``("metadata.judge_model", "gpt-4.1-mini")`` for the first key of
        :data:`STATED_KEYS` found with a non-empty text value (breadth first, at most
        :data:`~.wrapped.MAX_DEPTH` levels), or ``None``.
    """
    if records_key is None or not isinstance(obj, dict):
        return None
    level: list[tuple[str, dict[str, Any]]] = [("", obj)]
    for _ in range(MAX_DEPTH + 1):
        deeper: list[tuple[str, dict[str, Any]]] = []
        for prefix, node in level:
            for key in STATED_KEYS:
                value = node.get(key)
                if isinstance(value, str) and value.strip():
                    return (f"{prefix}{key}", value.strip())
            for key, value in node.items():
                path = f"{prefix}{key}"
                if path != records_key and isinstance(value, dict) and not is_records(value):
                    deeper.append((path + ".", value))
        level = deeper
    return None


def stored_judge_source(
    field: str | None,
    stated: tuple[str, str] | None,
    published: tuple[str, str] | None,
) -> dict[str, Any] | None:
    """What is known of the judge behind a file's stored verdicts.

    Args:
        field: the field the verdicts were read from (``llm_score``), or ``None`` (none).
        stated: :func:`stated_judge`'s ``(key, model)``, or ``None``.
        published: the layout's ``own_judge`` ``(verdict field, judge per its source)``, or
            ``None``; used only when the verdicts were read from that field and the file
            names no judge.

    Returns:
        ``None`` without stored verdicts; else ``{"field", "model", "stated_in", "per_source",
        "text"}``: ``model`` and ``stated_in`` (the file's key) when the file names the
        judge, ``per_source`` the published description when only that is known, ``text``
        one line for the report, the card and MLflow.
    """
    if field is None:
        return None
    out: dict[str, Any] = {"field": field, "model": None, "stated_in": None, "per_source": None}
    if stated is not None:
        out["model"], out["stated_in"] = stated[1], stated[0]
        out["text"] = f"{stated[1]} (named by the file's `{stated[0]}`; protocol {NOT_RECORDED})"
    elif published is not None and published[0] == field:
        out["per_source"] = published[1]
        out["text"] = f"{published[1]}; {NOT_RECORDED}"
    else:
        out["text"] = NOT_RECORDED
    return out


__all__ = [
    "NOT_RECORDED",
    "STATED_KEYS",
    "stated_judge",
    "stored_judge_source",
]
