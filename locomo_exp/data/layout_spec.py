"""What every file layout is made of: :class:`LayoutSpec`, and the :class:`Layout` it reads.

A layout is one module (``qa_results``, ``locomo``, ``mem0``, ``fields``) defining a
``LAYOUT = LayoutSpec(...)``, listed in :data:`locomo_exp.data.layouts.LAYOUTS`. Detection
(:func:`locomo_exp.data.detect.detect_layout`) tries the layouts of ``scope="file"`` on
the parsed file first, then locates the records (inside a wrapper if need be,
:mod:`.wrapped`) and tries the layouts of ``scope="records"`` on a sample of them, in
registry order; the first whose :attr:`LayoutSpec.matches` is true (or the one named by
``data.format``) builds the :class:`Layout`. No part of detection or loading names a
layout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from locomo_exp.config import DataConfig, FieldMap
from locomo_exp.data.raw import MISSING, RawItem, get_field, iter_records
from locomo_exp.data.verdicts import MULTI_SUFFIX, verdict_list


@dataclass(frozen=True)
class Layout:
    """How to read one file.

    Attributes:
        format: the layout's name (never ``auto``).
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

    format: str
    records: Any
    records_key: str | None
    fields: FieldMap
    prediction_key: str | None = None
    judge_field: str | None = None
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """A parsed file as a layout's ``matches`` and ``build`` see it.

    Attributes:
        obj: the parsed file.
        config: the ``data`` settings (``format``, ``prediction_key``, ``fields``...).
        records: the records located in the file (``obj`` itself for ``scope="file"``).
        records_key: dotted key of the records inside a wrapper, or ``None``.
        sample: a sample of the records (empty for ``scope="file"``).
        judge_key: the stored-verdict field detected in the sample, or ``None``.
    """

    obj: Any
    config: DataConfig
    records: Any
    records_key: str | None = None
    sample: list[dict[str, Any]] = field(default_factory=list)
    judge_key: str | None = None

    @property
    def forced(self) -> bool:
        """Whether ``data.format`` names a layout (no detection)."""
        return self.config.format != "auto"


def judge_field_name(records: Any, key: str | None) -> str | None:
    """The stored-verdict field as the report names it.

    Args:
        records: sample records.
        key: the verdict field, or ``None``.

    Returns:
        ``key``, with :data:`~locomo_exp.data.verdicts.MULTI_SUFFIX` when its first
        present value is a list of verdicts (``llm_judgments.*``); ``None`` for no key.
    """
    if key is None:
        return None
    for record in records:
        value = get_field(record, key)
        if value is not MISSING and value is not None:
            return key + MULTI_SUFFIX if verdict_list(value) is not None else key
    return key


def records_of(layout: Layout) -> Iterator[RawItem]:
    """The raw records of a list or dict-of-lists layout (the default ``iter_raw``).

    Raises:
        ValueError: when the records are neither a list nor a dict of lists.
    """
    return iter_records(layout.records, layout.records_key or "")


@dataclass(frozen=True)
class LayoutSpec:
    """One file layout.

    Attributes:
        name: the ``data.format`` value, written into ``summary.json`` (``input.format``),
            the card and MLflow (``data.format_detected``).
        scope: ``file`` (recognised on the parsed file, e.g. LoCoMo's list of samples)
            or ``records`` (recognised on a sample of the records, found inside a
            wrapper object if need be).
        looks_for: what detection looks for, as a phrase of the error text when no
            layout matches (``a Mem0 dict of lists with 'response'``).
        matches: a :class:`Candidate` -> whether the file has this layout.
        build: a :class:`Candidate` -> its :class:`Layout` (the field names, the
            stored-verdict field); called when ``matches`` is true or ``data.format``
            names the layout. Raises ``ValueError`` for a file it cannot read.
        iter_raw: a :class:`Layout` -> the raw records ``(where, conversation id,
            record)``; default: the records as a list or a dict of lists.
        benchmark: the benchmark whose answers the layout holds; LoCoMo's loading
            detects only ``locomo`` layouts (another benchmark's job reads its own, and
            its ``build`` refuses with a line saying so).
        own_f1: the ``f1.variant`` the harness that writes this layout reports (its files'
            per-question F1 and its papers), or ``None``; a run reporting another variant
            logs which one the file's own numbers use.
        own_judge: ``(verdict field, judge)`` when a published source documents the judge
            behind that field of the harness's files (the report says "per <source>, not
            recorded in the file"), or ``None`` (:mod:`.judge_source`).
    """

    name: str
    scope: Literal["file", "records"]
    looks_for: str
    matches: Callable[[Candidate], bool]
    build: Callable[[Candidate], Layout]
    iter_raw: Callable[[Layout], Iterator[RawItem]] = records_of
    benchmark: str = "locomo"
    own_f1: str | None = None
    own_judge: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        """Refuse a spec without a name or description (it would vanish from messages)."""
        for attribute in ("name", "looks_for"):
            if not str(getattr(self, attribute)).strip():
                raise ValueError(f"LayoutSpec {self.name!r}: {attribute} must not be empty")
        if self.name == "auto":
            raise ValueError("LayoutSpec: 'auto' is data.format's detection, not a layout")


__all__ = ["Candidate", "Layout", "LayoutSpec", "judge_field_name", "records_of"]
