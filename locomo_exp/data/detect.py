"""Which layout a results file has, where its records are, and which fields they use.

Detection needs no option for every layout public LoCoMo result files use
(:func:`detect_layout`): the layouts of :data:`~.layouts.LAYOUTS` (the project's
``qa_results``, LoCoMo's own output ``locomo``, the Mem0 harness ``mem0``, and other field
names public harnesses use, ``fields``), also inside a wrapper object with metadata
(:mod:`.wrapped`), each with its stored-verdict field (:mod:`.verdicts`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from locomo_exp.config import DataConfig
from locomo_exp.data import wrapped
from locomo_exp.data.layout_spec import Candidate, Layout
from locomo_exp.data.layouts import (
    AUTO,
    LOCOMO,
    LOCOMO_LAYOUTS,
    expected_layouts_message,
    layout_spec,
)
from locomo_exp.data.raw import sample_records
from locomo_exp.data.verdicts import detect_verdict_field

UNDETECTED = expected_layouts_message()
"""The error when no layout matches (built from :data:`~.layouts.LAYOUTS`)."""


_ROLE_HINTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("question", ("question", "query", "quest", "q")),
    ("ground_truth", ("gold", "truth", "answer", "ref", "label", "expected", "target")),
    ("prediction", ("pred", "response", "output", "out", "gen", "hyp", "sys", "model")),
    ("category", ("category", "cat", "type", "kind")),
)
"""Fragments of a key that suggest its role, most telling first (for the hint only)."""


def suggested_fields_command(keys: list[str]) -> str:
    """A ready ``data.format=fields ...`` command guessing each role from the key names.

    Args:
        keys: the record keys found, in order of first appearance.

    Returns:
        ``data.format=fields data.fields.question=q data.fields.ground_truth=gold ...``;
        a role no key suggests gets ``<key>``.
    """
    taken: set[str] = set()
    parts = ["data.format=fields"]
    for role, hints in _ROLE_HINTS:
        chosen = next(
            (
                key
                for hint in hints
                for key in keys
                if key not in taken
                and (key.lower() == hint or (len(hint) > 2 and hint in key.lower()))
            ),
            None,
        )
        if chosen is not None:
            taken.add(chosen)
        parts.append(f"data.fields.{role}={chosen or '<key>'}")
    return " ".join(parts)


def undetected_message(sample: list[dict[str, Any]]) -> str:
    """The one line for records in no known layout: the keys found and a ready command."""
    keys = list(dict.fromkeys(str(k) for record in sample for k in record))
    if not keys:
        return UNDETECTED
    return (
        f"cannot detect the format: the records have the keys {', '.join(keys[:20])}"
        + (f" (+{len(keys) - 20} more)" if len(keys) > 20 else "")
        + ", and no known set of question, gold answer and prediction fields; name them, e.g. "
        + suggested_fields_command(keys)
    )


def detect_format(obj: Any) -> str:
    """Guess a results file's layout from its parsed JSON.

    Args:
        obj: parsed JSON.

    Returns:
        A layout name of :data:`~.layouts.LAYOUTS` (``qa_results``, ``locomo``, ``mem0``
        or ``fields``: field names detected).

    Raises:
        ValueError: if no known layout matches (the caller names the file).
    """
    return detect_layout(obj, DataConfig(path=None)).format


def detect_layout(obj: Any, config: DataConfig) -> Layout:
    """Decide the layout, the records and the fields of a parsed file.

    The LoCoMo layouts of :data:`~.layouts.LAYOUTS` are tried in order, those recognised
    on the whole file (``scope="file"``) first, then, on a sample of the records located
    in the file, the others; ``data.format`` other than ``auto`` takes the named layout
    (a layout of another benchmark refuses: its job reads it).

    Args:
        obj: the parsed file.
        config: ``data`` settings: ``format`` (``auto`` detects), ``records_key``,
            ``prediction_key``, ``fields`` (used with ``format=fields``).

    Returns:
        :class:`Layout`.

    Raises:
        ValueError: when ``data.format`` is not a layout, when no layout matches (the keys
            found and a ready ``data.format=fields`` command, :func:`undetected_message`),
            when several record lists exist with no ``records_key``, when a ``locomo`` file
            has no single prediction key, or when ``data.fields.judge_score`` is given for
            a layout that does not use ``data.fields`` (it would be ignored).
    """
    fmt = str(config.format)
    whole = Candidate(obj, config, obj)
    if fmt != AUTO:
        spec = layout_spec(fmt)  # an unknown name fails here, listing the layouts
        if spec.benchmark != LOCOMO:  # read by its benchmark's job; build says which
            return spec.build(whole)
    if config.fields.judge_score and fmt != "fields":
        raise ValueError(
            f"data.fields.judge_score={config.fields.judge_score} applies only with "
            f"data.format=fields (data.format is {fmt}); stored verdicts of the known "
            "layouts are detected (llm_score, grade, is_correct, judgment, llm_judgments.*, "
            "<name>_llm): drop the option, or set data.format=fields with the whole field map"
        )
    for spec in LOCOMO_LAYOUTS:
        if spec.scope == "file" and (fmt == spec.name or (fmt == AUTO and spec.matches(whole))):
            return spec.build(whole)
    found = wrapped.locate_records(obj, config.records_key)
    sample = sample_records(found.records)
    candidate = Candidate(
        obj, config, found.records, found.key, sample, detect_verdict_field(sample)
    )
    for spec in LOCOMO_LAYOUTS:
        if spec.scope == "records" and (
            fmt == spec.name or (fmt == AUTO and spec.matches(candidate))
        ):
            layout = spec.build(candidate)
            return replace(layout, partitions=found.partitions) if found.partitions else layout
    raise ValueError(undetected_message(sample))


__all__ = [
    "UNDETECTED",
    "Layout",
    "detect_format",
    "detect_layout",
    "suggested_fields_command",
    "undetected_message",
]
