"""A system's answers to LongMemEval: hypothesis files and ``.eval-results-<model>`` files.

LongMemEval's layout (``src/evaluation/evaluate_qa.py``; docs/field_notes.md §12): JSON
Lines (or a JSON list) of ``{question_id, hypothesis}``. Its scorer writes
``<hypothesis file>.eval-results-<model>``: the same rows plus ``autoeval_label: {model,
label}``, read here as a stored verdict (J) with the judge model named. Rows may carry other
fields (``usage``, ``tokens``). The question type, question and gold answer come from the
dataset file (``data.reference``, :mod:`.lme_reference`), matched by ``question_id``; an id
the dataset does not have is skipped with a warning and counted, as the authors' scorer does.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.longmemeval.reference import LmeQuestion, LmeReference
from locomo_exp.data.input_file import DataValidationError, RecordProblem, read_results_file

log = logging.getLogger(__name__)

ID_FIELD = "question_id"
HYPOTHESIS_FIELD = "hypothesis"
LABEL_FIELD = "autoeval_label"
"""The field names of LongMemEval's answer rows."""

_DETECT_ROWS = 5


def looks_like_lme(obj: Any) -> bool:
    """Whether parsed JSON is a LongMemEval answer file.

    Its rows have ``question_id`` and ``hypothesis``; no LoCoMo layout has a ``hypothesis``
    field.

    Args:
        obj: the parsed file (a list for JSON Lines).

    Returns:
        True when the first rows (up to 5) are objects with both fields (or the file is
        one such object: JSON Lines of one row).
    """
    if isinstance(obj, dict):
        obj = [obj]
    if not isinstance(obj, list) or not obj:
        return False
    rows = obj[:_DETECT_ROWS]
    return all(isinstance(r, dict) and ID_FIELD in r and HYPOTHESIS_FIELD in r for r in rows)


@dataclass(frozen=True)
class LmeAnswer:
    """One row of an answer file.

    Attributes:
        question_id: the question.
        hypothesis: the system's answer ("" when the file has null).
        label: the stored verdict (``autoeval_label.label``), or ``None`` when the row has none.
        label_model: the model that gave it (``autoeval_label.model``), or ``None``.
        position: 0-based index of the row in the file.
    """

    question_id: str
    hypothesis: str
    label: bool | None = None
    label_model: str | None = None
    position: int = 0


@dataclass
class LmeAnswers:
    """An answer file as read.

    Attributes:
        path: the file.
        sha256: hex digest of its bytes.
        rows: the rows, in file order.
        missing_hypotheses: ids whose hypothesis is null (kept as "").
    """

    path: Path
    sha256: str
    rows: list[LmeAnswer]
    missing_hypotheses: list[str] = field(default_factory=list)

    @property
    def labelled(self) -> bool:
        """Whether the rows carry stored verdicts (an ``.eval-results-*`` file)."""
        return any(r.label is not None for r in self.rows)

    @property
    def label_models(self) -> list[str]:
        """The stored verdicts' judge models, distinct, in order of first use."""
        return list(dict.fromkeys(r.label_model for r in self.rows if r.label_model))


def _not_lme(path: Path, obj: Any) -> DataValidationError:
    """The one line for a file that is not LongMemEval answers (naming a LoCoMo layout)."""
    from locomo_exp.config import DataConfig
    from locomo_exp.data.detect import detect_layout

    expected = (
        "LongMemEval answers are JSON Lines or a JSON list of {question_id, hypothesis} "
        "(an .eval-results-<model> file adds autoeval_label)"
    )
    try:
        layout = detect_layout(obj, DataConfig(path=None))
    except Exception:  # noqa: BLE001 -- any failure only means "not a LoCoMo layout"
        return DataValidationError([RecordProblem(str(path), "", None, f"{expected}")])
    return DataValidationError(
        [
            RecordProblem(
                str(path),
                "",
                None,
                f"is a LoCoMo results file (layout {layout.format}), not LongMemEval "
                f"answers: {expected}; drop benchmark=longmemeval to score it as LoCoMo",
            )
        ]
    )


def _label(path: Path, where: str, value: Any) -> tuple[bool, str | None]:
    """``autoeval_label`` -> (label, model); raises for any other shape."""
    if not isinstance(value, dict) or "label" not in value:
        raise DataValidationError(
            [RecordProblem(str(path), where, LABEL_FIELD, f"is {value!r}, not {{model, label}}")]
        )
    label = value["label"]
    if isinstance(label, bool):
        verdict = label
    elif label in (0, 1) and not isinstance(label, float):
        verdict = bool(label)
    else:
        raise DataValidationError(
            [
                RecordProblem(
                    str(path), where, f"{LABEL_FIELD}.label", f"is {label!r}, not true or false"
                )
            ]
        )
    model = value.get("model")
    return verdict, str(model) if model is not None else None


def _row(path: Path, index: int, where: str, raw: Any) -> tuple[LmeAnswer, bool]:
    """One row (``where``: ``line 7`` or ``[6]``) -> (answer, hypothesis was null)."""
    if not isinstance(raw, dict):
        raise DataValidationError(
            [RecordProblem(str(path), where, None, "is not an object {question_id, hypothesis}")]
        )
    qid = raw.get(ID_FIELD)
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or qid == "":
        raise DataValidationError(
            [RecordProblem(str(path), where, ID_FIELD, f"is {qid!r}, not a question id")]
        )
    if HYPOTHESIS_FIELD not in raw:
        raise DataValidationError(
            [RecordProblem(str(path), where, HYPOTHESIS_FIELD, "is missing")]
        )
    hypothesis = raw[HYPOTHESIS_FIELD]
    if hypothesis is not None and not isinstance(hypothesis, str):
        raise DataValidationError(
            [RecordProblem(str(path), where, HYPOTHESIS_FIELD, f"is {hypothesis!r}, not text")]
        )
    label: bool | None = None
    model: str | None = None
    if LABEL_FIELD in raw:
        label, model = _label(path, where, raw[LABEL_FIELD])
    answer = LmeAnswer(str(qid), hypothesis or "", label, model, index)
    return answer, hypothesis is None


def read_lme_answers(path: str | Path) -> LmeAnswers:
    """Read and check a LongMemEval answer file.

    Args:
        path: a hypothesis file or an ``.eval-results-<model>`` file (JSON Lines or a JSON
            list).

    Returns:
        :class:`LmeAnswers`.

    Raises:
        DataValidationError: one line naming the file, the record (``line 7`` of JSON Lines,
            as editors number lines; ``[6]`` of a JSON list) and the field when the
            file is unreadable, is a LoCoMo results file or another layout, has a row that
            is not an object, has no ``question_id`` or ``hypothesis``, a hypothesis that is
            not text, an ``autoeval_label`` that is not ``{model, label: true/false}``, a
            label on some rows only, or a repeated ``question_id``.
    """
    parsed = read_results_file(path)
    obj = parsed.obj
    if isinstance(obj, dict) and ID_FIELD in obj and HYPOTHESIS_FIELD in obj:
        obj = [obj]  # JSON Lines of one row parse as one object
    if not looks_like_lme(obj):
        raise _not_lme(parsed.path, obj)
    rows: list[LmeAnswer] = []
    missing: list[str] = []
    first_at: dict[str, int] = {}
    for index, raw in enumerate(obj):
        answer, was_null = _row(parsed.path, index, parsed.where(index), raw)
        if answer.question_id in first_at:
            raise DataValidationError(
                [
                    RecordProblem(
                        str(parsed.path),
                        parsed.where(index),
                        ID_FIELD,
                        f"duplicate question id {answer.question_id!r} "
                        f"(first at {parsed.where(first_at[answer.question_id])})",
                    )
                ]
            )
        first_at[answer.question_id] = index
        rows.append(answer)
        if was_null:
            missing.append(answer.question_id)
    labelled = [r for r in rows if r.label is not None]
    if labelled and len(labelled) < len(rows):
        row = next(r for r in rows if r.label is None)
        raise DataValidationError(
            [
                RecordProblem(
                    str(parsed.path),
                    parsed.where(row.position),
                    LABEL_FIELD,
                    f"is missing while {len(labelled)} other row(s) have one; an eval-results "
                    "file labels every row",
                )
            ]
        )
    if missing:
        log.warning(
            "%s: %d hypothesis(es) are null (kept as empty answers), e.g. %s",
            parsed.path,
            len(missing),
            missing[0],
        )
    return LmeAnswers(parsed.path, parsed.sha256, rows, missing)


@dataclass(frozen=True)
class LmeItem:
    """One answered question: the dataset's question and the system's answer.

    Attributes:
        question: the question (type, gold answer) from the dataset file.
        answer: the answer row.
    """

    question: LmeQuestion
    answer: LmeAnswer


@dataclass
class LmeMatched:
    """Answer rows matched to the dataset's questions.

    Attributes:
        items: answered questions in the answer file's order.
        skipped_ids: ids of rows the dataset does not have (skipped, as the authors do).
        unanswered_ids: dataset questions with no row (not scored; counted).
    """

    items: list[LmeItem]
    skipped_ids: list[str]
    unanswered_ids: list[str]


def match_reference(answers: LmeAnswers, reference: LmeReference) -> LmeMatched:
    """Match answer rows to the dataset's questions by ``question_id``.

    Rows whose id the dataset does not have are skipped with one warning and counted, as
    LongMemEval's ``evaluate_qa.py`` does; questions without a row are counted too.

    Args:
        answers: the answer file.
        reference: the dataset file's questions.

    Returns:
        :class:`LmeMatched`.

    Raises:
        DataValidationError: when no row matches a dataset question (the wrong dataset).
    """
    items: list[LmeItem] = []
    skipped: list[str] = []
    for row in answers.rows:
        question = reference.questions.get(row.question_id)
        if question is None:
            skipped.append(row.question_id)
        else:
            items.append(LmeItem(question, row))
    answered = {item.question.question_id for item in items}
    unanswered = [qid for qid in reference.questions if qid not in answered]
    if not items:
        raise DataValidationError(
            [
                RecordProblem(
                    str(answers.path),
                    "",
                    ID_FIELD,
                    f"none of its {len(answers.rows)} question ids is in data.reference "
                    f"({reference.path}); is it the dataset these answers were made for?",
                )
            ]
        )
    if skipped:
        log.warning(
            "%s: %d row(s) have a question_id that %s does not have; skipped (as LongMemEval's "
            "evaluate_qa.py does), e.g. %s",
            answers.path,
            len(skipped),
            reference.path.name,
            ", ".join(skipped[:3]),
        )
    if unanswered:
        log.warning(
            "%s: %d of %d dataset question(s) have no answer row; not scored, e.g. %s",
            answers.path,
            len(unanswered),
            len(reference.questions),
            ", ".join(unanswered[:3]),
        )
    return LmeMatched(items, skipped, unanswered)


__all__ = [
    "LmeAnswer",
    "LmeAnswers",
    "LmeItem",
    "LmeMatched",
    "looks_like_lme",
    "match_reference",
    "read_lme_answers",
]
