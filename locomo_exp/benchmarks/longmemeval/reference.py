"""``data.reference=<LongMemEval dataset file>``: its questions, read streaming.

LongMemEval's dataset files are JSON lists of ``{question_id, question_type, question,
answer, question_date, haystack_dates, haystack_session_ids, haystack_sessions,
answer_session_ids}`` (docs/field_notes.md §12): 15 MB (oracle), 265 MB (``_s``), 2.7 GB
(``_m``). Only the question fields are kept: the file is parsed as a stream of JSON events
(``ijson``), the haystacks are walked past (their sessions counted, to name the variant),
and the bytes are hashed as they are read, so memory does not grow with the haystacks
(``benchmarks/lme_reference_memory.py`` measures it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import ijson

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.data.input_file import absolute_path, check_regular_file, file_error

READ_CHUNK = 1 << 16
"""Bytes read at a time (64 KiB)."""


@dataclass(frozen=True)
class LmeQuestion:
    """One LongMemEval question.

    Attributes:
        question_id: the id (``_abs`` ending for abstention questions).
        question_type: one of :data:`locomo_exp.benchmarks.longmemeval.facts.QUESTION_TYPES`.
        question: the question text.
        answer: the gold answer as given (a string, or an integer for 26 questions).
        question_date: the date the question is asked (differs between variants).
        position: 0-based index in the dataset file.
    """

    question_id: str
    question_type: str
    question: str
    answer: str | int
    question_date: str | None
    position: int

    @property
    def abstention(self) -> bool:
        """Whether this is an abstention question (id ends in ``_abs``)."""
        return lme.is_abstention(self.question_id)

    @property
    def kind(self) -> str:
        """The judge criterion: ``abstention`` for ``_abs`` ids, else the type."""
        return lme.judge_kind(self.question_id, self.question_type)

    @property
    def gold_text(self) -> str:
        """The gold answer as text (``str(answer)`` for an integer)."""
        return str(self.answer)


@dataclass
class LmeReference:
    """The questions of a LongMemEval dataset file.

    Attributes:
        path: the file (absolute).
        sha256: hex digest of the file's bytes.
        size_bytes: the file's size.
        questions: question id -> :class:`LmeQuestion`, in file order.
        sessions: haystack sessions in the whole file (summed over questions).
        variant: ``oracle``, ``s``, ``m``, ``questions only`` or ``unknown``, from the mean
            sessions per question (:func:`locomo_exp.benchmarks.longmemeval.facts.variant_of`).
    """

    path: Path
    sha256: str
    size_bytes: int
    questions: dict[str, LmeQuestion] = field(default_factory=dict)
    sessions: int = 0
    variant: str = "unknown"

    @property
    def mean_sessions(self) -> float:
        """Haystack sessions per question (0 for an empty file)."""
        return self.sessions / len(self.questions) if self.questions else 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description (no questions) for ``summary.json`` and the card."""
        return {
            "path": str(self.path),
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "questions": len(self.questions),
            "variant": self.variant,
            "mean_sessions_per_question": round(self.mean_sessions, 2),
        }


class _HashingReader:
    """A binary file whose bytes are hashed as they are read."""

    def __init__(self, handle: IO[bytes]):
        self._handle = handle
        self.digest = hashlib.sha256()
        self.size = 0

    def read(self, n: int = -1) -> bytes:
        data = self._handle.read(n)
        self.digest.update(data)
        self.size += len(data)
        return data


_ANOTHER_LAYOUT = (
    "is not a LongMemEval dataset file (expected a JSON list of {question_id, question_type, "
    "question, answer, ...}, e.g. longmemeval_oracle.json)"
)


def _layout_error(path: Path, index: int, keys: set[str]) -> Exception:
    if {"sample_id", "qa"} & keys:
        return file_error(
            path,
            f"record [{index}] has {', '.join(sorted({'sample_id', 'qa'} & keys))}: this is "
            "LoCoMo's dataset (locomo10.json), not LongMemEval's; give data.reference="
            "longmemeval_oracle.json (or _s/_m), or benchmark=locomo",
        )
    shown = ", ".join(sorted(keys)[:8]) or "none"
    return file_error(path, f"record [{index}] (keys: {shown}) {_ANOTHER_LAYOUT}")


class _Item:
    """The fields of one dataset item collected from the event stream."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.keys: set[str] = set()
        self.sessions = 0


def _question(path: Path, index: int, item: _Item) -> LmeQuestion:
    """Check one collected item and build its question."""
    if not {"question_id", "question_type"} <= item.keys:
        raise _layout_error(path, index, item.keys)
    values = item.values
    where = f"record [{index}]"
    question_id = values.get("question_id")
    if not isinstance(question_id, str) or not question_id:
        raise file_error(path, f"{where}: field 'question_id' is {question_id!r}, not an id")
    qtype = values.get("question_type")
    if qtype not in lme.QUESTION_TYPES:
        raise file_error(
            path,
            f"{where} ({question_id}): field 'question_type' is {qtype!r}, not one of "
            f"{', '.join(lme.QUESTION_TYPES)}",
        )
    question = values.get("question")
    if not isinstance(question, str):
        raise file_error(path, f"{where} ({question_id}): field 'question' is not a string")
    answer = values.get("answer")
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, bool) or not isinstance(answer, (str, int)):
        raise file_error(
            path, f"{where} ({question_id}): field 'answer' is {answer!r}, not a string or integer"
        )
    date = values.get("question_date")
    return LmeQuestion(
        question_id, str(qtype), question, answer, str(date) if date is not None else None, index
    )


_SCALARS = {"string", "number", "boolean", "null"}


def _add(reference: LmeReference, question: LmeQuestion, sessions: int) -> None:
    """Add a question; a repeated id is an error naming both records."""
    first = reference.questions.get(question.question_id)
    if first is not None:
        raise file_error(
            reference.path,
            f"record [{question.position}]: field 'question_id': duplicate id "
            f"{question.question_id!r} (first at record [{first.position}])",
        )
    reference.questions[question.question_id] = question
    reference.sessions += sessions


def read_lme_reference(path: str | Path) -> LmeReference:
    """Read the questions of a LongMemEval dataset file, streaming.

    Memory stays that of the 500 questions whatever the size of the haystacks: only the
    five question fields are kept, sessions are counted, not stored.

    Args:
        path: the dataset file (``longmemeval_oracle.json``, ``_s_cleaned``, ``_m_cleaned``,
            or the shared rebuilt reference with empty haystacks).

    Returns:
        :class:`LmeReference`.

    Raises:
        DataValidationError: one line naming the file (and the record and field) when the
            file is missing or not a regular file, is not JSON, is not a list, is another
            benchmark's dataset (LoCoMo's ``locomo10.json``), has an item without
            ``question_id``/``question_type``, an unknown type, a non-string question, an
            answer that is neither a string nor an integer, or a repeated ``question_id``.
    """
    full = absolute_path(path)
    check_regular_file(full, "reference file")
    reference = LmeReference(full, "", 0)
    with full.open("rb") as handle:
        reader = _HashingReader(handle)
        item: _Item | None = None
        index = -1
        try:
            events = ijson.parse(reader, buf_size=READ_CHUNK, use_float=True)
            first = next(events, None)
            if first is None or first[:2] != ("", "start_array"):
                raise file_error(full, _ANOTHER_LAYOUT)
            for prefix, event, value in events:
                if prefix == "item":
                    if event == "start_map":
                        item, index = _Item(), index + 1
                    elif event == "map_key" and item is not None:
                        item.keys.add(str(value))
                    elif event == "end_map" and item is not None:
                        _add(reference, _question(full, index, item), item.sessions)
                        item = None
                    else:
                        raise file_error(
                            full, f"record [{index + 1}] is not an object; " + _ANOTHER_LAYOUT
                        )
                elif item is not None and event in _SCALARS:
                    key = prefix[5:]
                    if key in lme.REFERENCE_FIELDS:
                        item.values[key] = value
                    elif prefix == "item.haystack_session_ids.item":
                        item.sessions += 1
        except ijson.JSONError as error:
            raise file_error(full, f"is not valid JSON ({error})") from None
        # drain to the end so the hash covers every byte
        while reader.read(READ_CHUNK):
            pass
    reference.sha256 = reader.digest.hexdigest()
    reference.size_bytes = reader.size
    if not reference.questions:
        raise file_error(full, "contains no questions; " + _ANOTHER_LAYOUT)
    reference.variant = lme.variant_of(reference.mean_sessions)
    return reference


__all__ = ["LmeQuestion", "LmeReference", "read_lme_reference"]
