"""Which layout a results file has, where its records are, and which fields they use.

Detection needs no option for every layout public LoCoMo result files use
(:func:`detect_layout`): the project's ``qa_results``, LoCoMo's own output (``locomo``),
the Mem0 harness (``mem0``), records beside metadata (a wrapper, :mod:`.wrapped`), and
other field names public harnesses use (``fields``, :mod:`.fields`), each with its
stored-verdict field (:mod:`.verdicts`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from locomo_exp.config import DataConfig, DataFormat, FieldMap
from locomo_exp.data import fields as fields_layout
from locomo_exp.data import locomo, mem0, qa_results, wrapped
from locomo_exp.data.raw import MISSING, get_field, sample_records
from locomo_exp.data.verdicts import MULTI_SUFFIX, detect_verdict_field, verdict_list

UNDETECTED = (
    "cannot detect the format (expected a qa_results list with 'predicted_answer', a LoCoMo "
    "list of {sample_id, qa}, a Mem0 dict of lists with 'response', or records with a question, "
    "a gold answer and a prediction field, possibly inside an object); set data.format "
    "and, for other layouts, data.format=fields with data.fields.question=... etc."
)


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


@dataclass(frozen=True)
class Layout:
    """How to read one file.

    Attributes:
        format: the layout (never ``auto``).
        records: the part of the file holding the records (the file itself, or the value
            at ``records_key``).
        records_key: dotted key of the records inside a wrapper, or ``None``.
        fields: field names of the records.
        prediction_key: the ``<name>_prediction`` key of a ``locomo`` file.
        judge_field: the stored-verdict field as named in the report: ``llm_score``,
            ``llm_judgments.*`` (several per question), ``<name>_llm``...; ``None`` if none.
        partitions: dotted keys of other lists holding only records of ``records``
            (not read again; :func:`~.wrapped.locate_records`).
    """

    format: DataFormat
    records: Any
    records_key: str | None
    fields: FieldMap
    prediction_key: str | None = None
    judge_field: str | None = None
    partitions: tuple[str, ...] = ()


def detect_format(obj: Any) -> DataFormat:
    """Guess a results file's layout from its parsed JSON.

    Args:
        obj: parsed JSON.

    Returns:
        ``qa_results``, ``locomo``, ``mem0`` or ``fields`` (field names detected).

    Raises:
        ValueError: if no known layout matches (the caller names the file).
    """
    return detect_layout(obj, DataConfig(path=None)).format


def _judge_field_name(records: list[dict[str, Any]], key: str | None) -> str | None:
    if key is None:
        return None
    for record in records:
        value = get_field(record, key)
        if value is not MISSING and value is not None:
            return key + MULTI_SUFFIX if verdict_list(value) is not None else key
    return key


def detect_layout(obj: Any, config: DataConfig) -> Layout:
    """Decide the layout, the records and the fields of a parsed file.

    Args:
        obj: the parsed file.
        config: ``data`` settings: ``format`` (``auto`` detects), ``records_key``,
            ``prediction_key``, ``fields`` (used with ``format=fields``).

    Returns:
        :class:`Layout`.

    Raises:
        ValueError: when no layout matches, when several record lists exist with no
            ``records_key``, when a ``locomo`` file has no single prediction key, or when
            ``data.fields.judge_score`` is given for a layout that does not use
            ``data.fields`` (it would be ignored).
    """
    fmt = DataFormat(config.format)
    if fmt == DataFormat.longmemeval:
        raise ValueError(
            "data.format=longmemeval is read by the LongMemEval job (benchmark=longmemeval), "
            "not as a LoCoMo layout"
        )
    if config.fields.judge_score and fmt != DataFormat.fields:
        raise ValueError(
            f"data.fields.judge_score={config.fields.judge_score} applies only with "
            f"data.format=fields (data.format is {fmt.value}); stored verdicts of the known "
            "layouts are detected (llm_score, grade, is_correct, judgment, llm_judgments.*, "
            "<name>_llm): drop the option, or set data.format=fields with the whole field map"
        )
    if fmt == DataFormat.locomo or (fmt == DataFormat.auto and locomo.matches(obj)):
        prediction_key = config.prediction_key or locomo.detect_prediction_key(obj)
        judge_key = locomo.detect_judge_key(obj, prediction_key)
        return Layout(
            DataFormat.locomo,
            obj,
            None,
            locomo.field_map(prediction_key, judge_key),
            prediction_key,
            judge_key,
        )
    found = wrapped.locate_records(obj, config.records_key)
    records, records_key = found.records, found.key
    sample = sample_records(records)
    judge_key = detect_verdict_field(sample)
    layout = _record_layout(fmt, records, records_key, sample, judge_key, config)
    return replace(layout, partitions=found.partitions) if found.partitions else layout


def _record_layout(
    fmt: DataFormat,
    records: Any,
    records_key: str | None,
    sample: list[dict[str, Any]],
    judge_key: str | None,
    config: DataConfig,
) -> Layout:
    if fmt == DataFormat.fields:
        mapping = config.fields
        return Layout(
            fmt,
            records,
            records_key,
            mapping,
            judge_field=_judge_field_name(sample, mapping.judge_score),
        )
    judge_name = _judge_field_name(sample, judge_key)
    if fmt == DataFormat.qa_results or (fmt == DataFormat.auto and qa_results.matches(sample)):
        return Layout(
            DataFormat.qa_results,
            records,
            records_key,
            qa_results.field_map(judge_key),
            judge_field=judge_name,
        )
    if fmt == DataFormat.mem0 or (fmt == DataFormat.auto and mem0.matches(sample)):
        return Layout(
            DataFormat.mem0,
            records,
            records_key,
            mem0.field_map(judge_key, sample),
            judge_field=judge_name,
        )
    detected = fields_layout.detect_field_map(sample, judge_key)
    if detected is None:
        raise ValueError(undetected_message(sample))
    return Layout(DataFormat.fields, records, records_key, detected, judge_field=judge_name)


__all__ = [
    "Layout",
    "UNDETECTED",
    "detect_format",
    "detect_layout",
    "suggested_fields_command",
    "undetected_message",
]
