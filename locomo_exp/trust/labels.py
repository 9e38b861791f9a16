"""Agreement of the judge with human correctness labels, and with stored verdicts.

Labels file (``judge.labels=labels.json|csv``), one entry per question:

* JSON: a list of objects, ``{"labels": [...]}``, or a dict ``{question_id: label}``;
  JSONL: one object per line. CSV: a header row, one row per question.
* Keys: ``question_id`` (or ``id``), or ``conversation_id`` (or ``conversation``) plus
  ``question``; and ``label`` (or ``verdict``). A ``question_id`` that matches no record
  falls back to conversation + question when both are given.
* Label values (any case): ``CORRECT`` / ``WRONG`` / ``AMBIGUOUS``, ``1`` / ``0``,
  ``true`` / ``false``. AMBIGUOUS entries are counted and left out of every statistic.

Questions are matched on the record's ``question_id``, else on its ``conversation_id``
and question text (case and spacing ignored); a conversation + question shared by several
records is not matched (reported). Judge verdicts are 0-100 (``None`` = unscored, left
out and counted); accepted means ``>= threshold`` (the judge protocol's ``accept_threshold``).
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.results import DisagreementRow, QARecord
from locomo_exp.stats.agreement import BinaryAgreement, binary_agreement

logger = logging.getLogger(__name__)

_TRUE = {"correct", "1", "true", "yes", "right"}
_FALSE = {"wrong", "0", "false", "no", "incorrect"}
_AMBIGUOUS = {"ambiguous"}
_ID_KEYS = ("question_id", "id")
_CONV_KEYS = ("conversation_id", "conversation")
_LABEL_KEYS = ("label", "verdict")


class LabelsError(ValueError):
    """A labels file cannot be used; the message is one line naming file, entry and field."""


@dataclass(frozen=True)
class Label:
    """One human label.

    Attributes:
        value: ``True`` correct, ``False`` wrong, ``None`` ambiguous.
        question_id: the question id, when given.
        conversation_id: the conversation, when given.
        question: the question text, when given.
        entry: 1-based entry number in the file (CSV: data row; JSON: list item).
        place: where it is, for messages: ``row 3`` (CSV, header on row 1), ``line 4``
            (JSON Lines, as editors number lines), ``entry 2`` (JSON).
    """

    value: bool | None
    question_id: str | None = None
    conversation_id: str | None = None
    question: str | None = None
    entry: int = 0
    place: str = ""


@dataclass(frozen=True)
class LabelSet:
    """A read labels file.

    Attributes:
        path: the file.
        labels: the entries in file order.
    """

    path: str
    labels: tuple[Label, ...]


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


def _parse_value(raw: Any, where: str) -> bool | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return bool(raw)
    text = str(raw).strip().lower() if raw is not None else ""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _AMBIGUOUS:
        return None
    raise LabelsError(f"{where}: field 'label': {raw!r} is not CORRECT, WRONG, AMBIGUOUS, 1 or 0")


def _first(entry: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in entry and entry[key] not in (None, ""):
            return entry[key]
    return None


def _label_from(entry: Any, where: str, number: int, place: str) -> Label:
    if not isinstance(entry, Mapping):
        raise LabelsError(
            f"{where}: expected an object with question_id and label, got {type(entry).__name__}"
        )
    raw_label = _first(entry, _LABEL_KEYS)
    if raw_label is None:
        raise LabelsError(f"{where}: field 'label' is missing")
    qid = _first(entry, _ID_KEYS)
    conv = _first(entry, _CONV_KEYS)
    question = entry.get("question")
    if qid is None and (conv is None or question in (None, "")):
        raise LabelsError(
            f"{where}: field 'question_id' is missing (or give conversation_id and question)"
        )
    return Label(
        value=_parse_value(raw_label, where),
        question_id=None if qid is None else str(qid),
        conversation_id=None if conv is None else str(conv),
        question=None if question in (None, "") else str(question),
        entry=number,
        place=place,
    )


def load_labels(path: str | Path) -> LabelSet:
    """Read a labels file (JSON, JSONL or CSV; format in the module doc).

    Args:
        path: the file; ``.csv`` is read as CSV, anything else as JSON (or JSONL).

    Returns:
        The :class:`LabelSet`.

    Raises:
        LabelsError: one line naming the file, the entry and the field: unreadable file,
            bad JSON/CSV, a missing key, an unknown label value, no entries, or the same
            question labelled twice with different values.
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise LabelsError(f"labels file {name}: cannot read it ({error})") from None
    entries: list[Any]
    if name.lower().endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text))
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        if not any(k in header for k in _LABEL_KEYS):
            raise LabelsError(
                f"labels file {name}: the CSV header has no 'label' column "
                f"(got {', '.join(header) or 'none'})"
            )
        entries = list(reader)
        places = [f"row {i + 2}" for i in range(len(entries))]
    else:
        lines: list[int] | None = None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as json_error:
            obj, lines = [], []
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    obj.append(json.loads(line))
                except json.JSONDecodeError as error:
                    at = json_error if len(lines) == 0 else error  # a JSONL file's bad line
                    where_line = at.lineno if at is json_error else number
                    raise LabelsError(
                        f"labels file {name}: not JSON, JSONL or CSV ({at.msg}, line {where_line})"
                    ) from None
                lines.append(number)
        if isinstance(obj, Mapping) and "labels" in obj:
            obj = obj["labels"]
        if isinstance(obj, Mapping):
            entries = [{"question_id": k, "label": v} for k, v in obj.items()]
        elif isinstance(obj, list):
            entries = obj
        else:
            raise LabelsError(
                f"labels file {name}: expected a list of labels or an object, "
                f"got {type(obj).__name__}"
            )
        if lines is not None and len(lines) == len(entries):
            places = [f"line {number}" for number in lines]  # as editors number lines
        else:
            places = [f"entry {i + 1}" for i in range(len(entries))]
    where = [f"labels file {name}, {place}" for place in places]
    if not entries:
        raise LabelsError(f"labels file {name}: no labels")
    labels = tuple(
        _label_from(e, w, i + 1, place)
        for i, (e, w, place) in enumerate(zip(entries, where, places, strict=True))
    )
    seen: dict[tuple[str | None, ...], Label] = {}
    for label, w in zip(labels, where, strict=True):
        key = (
            (label.question_id,)
            if label.question_id
            else (label.conversation_id, _norm(label.question or ""))
        )
        if key in seen and seen[key].value != label.value:
            raise LabelsError(
                f"{w}: field 'label': the same question is labelled differently "
                f"in {seen[key].place}"
            )
        seen.setdefault(key, label)
    return LabelSet(name, labels)


@dataclass(frozen=True)
class LabelMatch:
    """Labels matched to records.

    Attributes:
        values: question id -> label value (``None`` = ambiguous), for matched records.
        unmatched: labels that matched no record (or several), with the reason.
    """

    values: dict[str, bool | None]
    unmatched: tuple[tuple[Label, str], ...] = ()


def _word(value: bool | None) -> str:
    return "AMBIGUOUS" if value is None else "CORRECT" if value else "WRONG"


def match_labels(
    labels: LabelSet | Iterable[Label], records: Sequence[QARecord], *, log_unmatched: bool = True
) -> LabelMatch:
    """Match labels to records by question id, else by conversation + question text.

    Args:
        labels: the labels.
        records: the run's records.
        log_unmatched: log the first five unmatched labels.

    Returns:
        The :class:`LabelMatch`; unmatched labels are logged (first five).

    Raises:
        LabelsError: two entries give one question different labels (e.g. once by id and
            once by conversation + question); the message names the question and entries.
    """
    items = labels.labels if isinstance(labels, LabelSet) else tuple(labels)
    by_id = {r.question_id: r for r in records}
    by_text: dict[tuple[str, str], list[QARecord]] = {}
    for record in records:
        key = (str(record.conversation_id), _norm(record.question))
        by_text.setdefault(key, []).append(record)
    values: dict[str, bool | None] = {}
    given_by: dict[str, Label] = {}
    unmatched: list[tuple[Label, str]] = []

    def assign(question_id: str, label: Label) -> None:
        first = given_by.setdefault(question_id, label)
        if first is not label and first.value != label.value:
            where = labels.path if isinstance(labels, LabelSet) else "labels"
            raise LabelsError(
                f"labels file {where}: question {question_id} is labelled "
                f"{_word(first.value)} by {first.place or f'entry {first.entry}'} and "
                f"{_word(label.value)} by {label.place or f'entry {label.entry}'}; keep one "
                "label per question"
            )
        values[question_id] = label.value

    for label in items:
        if label.question_id is not None and label.question_id in by_id:
            assign(label.question_id, label)
            continue
        if label.conversation_id is not None and label.question is not None:
            hits = by_text.get((label.conversation_id, _norm(label.question)), [])
            if len(hits) == 1:
                assign(hits[0].question_id, label)
                continue
            if len(hits) > 1:
                unmatched.append(
                    (label, f"{len(hits)} records share this conversation and question")
                )
                continue
        unmatched.append((label, "no record with this question id or conversation + question"))
    for label, reason in unmatched[:5] if log_unmatched else []:
        logger.warning(
            "labels: entry %d (%s) not matched: %s",
            label.entry,
            label.question_id or f"{label.conversation_id}: {label.question}",
            reason,
        )
    return LabelMatch(values, tuple(unmatched))


@dataclass(frozen=True)
class AgreementReport:
    """The judge against a reference (human labels or stored verdicts).

    Attributes:
        reference_name: ``"human labels"`` or ``"stored verdicts"``.
        overall: agreement over every compared question (``None`` if none).
        per_category: category id -> agreement of that category's questions.
        n_ambiguous: AMBIGUOUS labels matched to records (left out).
        ambiguous_per_category: category id -> AMBIGUOUS count.
        n_unscored: compared questions the judge gave no verdict (left out).
        n_unmatched: labels matching no record.
        disagreements: up to ``max_disagreements``, in file order.
        n_disagreements: all disagreements.
        reference: per compared question, the reference verdict (file order).
        judge: per compared question, the judge's accept (same order).
    """

    reference_name: str
    overall: BinaryAgreement | None
    per_category: dict[int, BinaryAgreement]
    n_ambiguous: int = 0
    ambiguous_per_category: dict[int, int] = field(default_factory=dict)
    n_unscored: int = 0
    n_unmatched: int = 0
    disagreements: tuple[DisagreementRow, ...] = ()
    n_disagreements: int = 0
    reference: tuple[bool, ...] = ()
    judge: tuple[bool, ...] = ()


def _compare(
    reference_name: str,
    records: Sequence[QARecord],
    verdicts: Mapping[str, float | None],
    reference: Mapping[str, bool | None],
    *,
    threshold: float,
    max_disagreements: int,
    confidence: float,
    n_unmatched: int = 0,
) -> AgreementReport:
    ref_all: list[bool] = []
    got_all: list[bool] = []
    per_cat: dict[int, tuple[list[bool], list[bool]]] = {}
    ambiguous: dict[int, int] = {}
    unscored = 0
    disagreements: list[DisagreementRow] = []
    for record in sorted(records, key=lambda r: r.position):
        if record.question_id not in reference:
            continue
        truth = reference[record.question_id]
        if truth is None:
            ambiguous[record.category] = ambiguous.get(record.category, 0) + 1
            continue
        verdict = verdicts.get(record.question_id)
        if verdict is None:
            unscored += 1
            continue
        accepted = verdict >= threshold
        ref_all.append(truth)
        got_all.append(accepted)
        refs, gots = per_cat.setdefault(record.category, ([], []))
        refs.append(truth)
        gots.append(accepted)
        if accepted != truth:
            disagreements.append(
                DisagreementRow(
                    record.question_id,
                    record.category,
                    record.question,
                    record.gold_text,
                    record.prediction,
                    truth,
                    float(verdict),
                )
            )
    return AgreementReport(
        reference_name=reference_name,
        overall=binary_agreement(ref_all, got_all, confidence) if ref_all else None,
        per_category={
            c: binary_agreement(r, g, confidence) for c, (r, g) in sorted(per_cat.items())
        },
        n_ambiguous=sum(ambiguous.values()),
        ambiguous_per_category=dict(sorted(ambiguous.items())),
        n_unscored=unscored,
        n_unmatched=n_unmatched,
        disagreements=tuple(disagreements[:max_disagreements]),
        n_disagreements=len(disagreements),
        reference=tuple(ref_all),
        judge=tuple(got_all),
    )


def compare_with_labels(
    records: Sequence[QARecord],
    verdicts: Mapping[str, float | None],
    labels: LabelSet | LabelMatch,
    *,
    threshold: float,
    max_disagreements: int = 20,
    confidence: float = 0.95,
) -> AgreementReport:
    """Agreement, Cohen's kappa, sensitivity and specificity of the judge vs human labels.

    Args:
        records: the run's records.
        verdicts: question id -> judge verdict on 0-100, or ``None``.
        labels: the labels file read by :func:`load_labels` (or already matched).
        threshold: a verdict >= this is an accept.
        max_disagreements: how many disagreements to keep for the report.
        confidence: level of the Wilson intervals.

    Returns:
        The :class:`AgreementReport` (overall and per category; AMBIGUOUS left out).
    """
    match = labels if isinstance(labels, LabelMatch) else match_labels(labels, records)
    return _compare(
        "human labels",
        records,
        verdicts,
        match.values,
        threshold=threshold,
        max_disagreements=max_disagreements,
        confidence=confidence,
        n_unmatched=len(match.unmatched),
    )


def compare_with_stored(
    records: Sequence[QARecord],
    verdicts: Mapping[str, float | None],
    *,
    threshold: float,
    max_disagreements: int = 20,
    confidence: float = 0.95,
) -> AgreementReport | None:
    """Agreement and kappa between our judge and the verdicts stored in the file.

    The stored verdict (``QARecord.stored_judge_score``, 0-100, from another harness's
    judge) is the reference: "sensitivity" is then the share of their accepts we accept.

    Args:
        records: the run's records.
        verdicts: question id -> our verdict on 0-100, or ``None``.
        threshold: accept threshold on 0-100, for both judges.
        max_disagreements: how many disagreements to keep.
        confidence: level of the Wilson intervals.

    Returns:
        The :class:`AgreementReport`, or ``None`` when no record has a stored verdict.
    """
    reference = {
        r.question_id: r.stored_judge_score >= threshold
        for r in records
        if r.stored_judge_score is not None
    }
    if not reference:
        return None
    return _compare(
        "stored verdicts",
        records,
        verdicts,
        reference,
        threshold=threshold,
        max_disagreements=max_disagreements,
        confidence=confidence,
    )
