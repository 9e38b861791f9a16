"""Turning one raw record into a :class:`~locomo_exp.results.QARecord`, collecting every problem.

Each problem names the file, the record and the field (:class:`RecordProblem`); the
loader (:mod:`.read_file`) reports all of them at once before anything is scored.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.benchmark.locomo import CATEGORY_IDS, DEFAULT_CATEGORY_NAMES
from locomo_exp.config import FieldMap
from locomo_exp.data.answer_values import (
    answer_text,
    gold_answer,
    gold_text,
    number_conversions,
    number_from_text,
    prediction_answer,
    show,
    stored_judge_score,
)
from locomo_exp.data.input_file import RecordProblem
from locomo_exp.data.raw import MISSING as _MISSING
from locomo_exp.data.raw import get_field as _get
from locomo_exp.data.stored_metrics import stored_metric_values
from locomo_exp.data.verdicts import verdict_list
from locomo_exp.results import QARecord

_CATEGORY_ALIASES = {"commonsense": 3, "open_domain_knowledge": 3}

CategoryLookup = Callable[[str | None, str, str | None], int | None]
"""``(conversation id, question, gold answer or None) -> category id or None``: categories
taken from elsewhere; raises ``ValueError`` (the message names why) when the answer is ambiguous."""


def parse_category(value: Any, names: dict[int, str] | None = None) -> int:
    """Turn a category given as an int, a numeric string or a name into LoCoMo's id.

    Names are matched against ``names`` (default :data:`DEFAULT_CATEGORY_NAMES`),
    ignoring case and treating ``-`` and spaces as ``_``; ``commonsense`` means 3.
    Beware: some published files attach names to other ids (docs/field_notes.md §3).

    Args:
        value: the category as found in the file.
        names: display names keyed by id.

    Returns:
        The category id, 1-5.

    Raises:
        ValueError: for anything else.
    """
    names = names or DEFAULT_CATEGORY_NAMES
    if isinstance(value, bool):
        raise ValueError(f"not a category: {value!r}")
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        category = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        category = int(value.strip())
    elif isinstance(value, str):
        key = value.strip().lower().replace("-", "_").replace(" ", "_")
        by_name = {name.lower(): cid for cid, name in names.items()} | _CATEGORY_ALIASES
        if key not in by_name:
            raise ValueError(
                f"unknown category {value!r} (expected 1-5 or one of {', '.join(sorted(by_name))})"
            )
        category = by_name[key]
    else:
        raise ValueError(f"category must be an int, a numeric string or a name, got {value!r}")
    if category not in CATEGORY_IDS:
        raise ValueError(f"unknown category {value!r} (LoCoMo categories are 1-5)")
    return category


def non_negative(value: Any, scale: float = 1.0) -> float:
    """A finite, non-negative number times ``scale`` (e.g. ``1e-3`` for milliseconds -> seconds).

    Numbers stored as text (``"0.657"``, as the Mem0 harness writes latencies) are read
    as numbers (:func:`~.answer_values.number_from_text`).

    Raises:
        ValueError: for booleans, other text, NaN/Infinity or negative numbers.
    """
    value = number_from_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {show(value)}")
    if value < 0:
        raise ValueError(f"expected a non-negative number, got {show(value)}")
    return float(value) * scale


@dataclass
class Built:
    """What :meth:`RecordBuilder.build` makes of one raw record.

    Attributes:
        record: the record, or ``None`` when it is invalid or has no gold.
        problems: why it is invalid.
        no_gold: set when the record is valid but its gold is null/empty/blank (excluded).
        missing_prediction: set when its prediction is null, NaN or Infinity.
        verdicts: the stored judge verdicts as read (bool, text label or number), for the
            file's scale; empty when the record has none.
        stored_metrics: per-question metrics the file carries (``f1_score``, ``<name>_f1``),
            from :func:`~.stored_metrics.stored_metric_values`.
        category_taken: the record had no category and took the one ``category_lookup``
            gave.
        numbers: its gold and prediction numbers read as text, ``(as in the file, as
            read, "gold" or "prediction")`` (:func:`~.answer_values.number_conversions`).
    """

    record: QARecord | None
    problems: list[RecordProblem]
    no_gold: RecordProblem | None = None
    missing_prediction: RecordProblem | None = None
    verdicts: list[Any] = field(default_factory=list)
    stored_metrics: dict[str, float] = field(default_factory=dict)
    category_taken: bool = False
    numbers: list[tuple[str, str, str]] = field(default_factory=list)


def _parses_to(raw: Any, names: dict[int, str] | None) -> int | None:
    """The category id ``raw`` names, or ``None`` when it names none."""
    try:
        return parse_category(raw, names)
    except ValueError:
        return None


@dataclass
class RecordBuilder:
    """Turns one raw record into a :class:`QARecord`, collecting every problem."""

    path: str
    mapping: FieldMap
    names: dict[int, str]
    category_lookup: CategoryLookup | None = None
    lookup_source: str = "data.categories_from"

    def build(self, raw: Any, where: str, conversation_id: str | None, position: int) -> Built:
        """Read one raw record.

        Args:
            raw: the record as parsed (anything: non-objects are a problem).
            where: its location for messages, e.g. ``["0"][3]``.
            conversation_id: the conversation it sits under in the file, if any.
            position: 0-based reading-order index.

        Returns:
            :class:`Built`: the record, or every problem found (file, record, field).
        """
        problems: list[RecordProblem] = []

        def problem(field_name: str | None, message: str) -> None:
            problems.append(RecordProblem(self.path, where, field_name, message, position))

        if not isinstance(raw, dict):
            problem(
                None,
                "expected a JSON object, got "
                + (type(raw).__name__ if raw is not _MISSING else "something else"),
            )
            return Built(None, problems)
        m = self.mapping

        question = _get(raw, m.question)
        if question is _MISSING:
            problem(m.question, "missing question")
        elif question is None or (isinstance(question, str) and not question.strip()):
            problem(m.question, "question is empty")
        elif not isinstance(question, str):
            problem(m.question, f"question must be text, got {type(question).__name__}")

        category: int | None = None
        raw_category = _get(raw, m.category)
        found: int | None = None
        lookup_failed = False
        category_taken = False
        if self.category_lookup is not None and isinstance(question, str):
            conv_key = _get(raw, m.conversation_id)
            conv_key = str(conv_key) if conv_key not in (_MISSING, None) else conversation_id
            try:
                found = self.category_lookup(
                    conv_key, question, gold_text(_get(raw, m.ground_truth))
                )
            except ValueError as error:  # e.g. two categories for this question there
                if raw_category is _MISSING:  # else the record's own category stands
                    problem(m.category, str(error))
                    lookup_failed = True
            if raw_category is _MISSING and found is not None:
                raw_category = found
                category_taken = True
            elif found is not None and _parses_to(raw_category, self.names) not in (None, found):
                problem(
                    m.category,
                    f"category {raw_category!r} differs from {found} in {self.lookup_source}",
                )
        if lookup_failed:
            pass
        elif raw_category is _MISSING:
            problem(
                m.category,
                "missing category"
                + (
                    ", and no record with the same conversation and question in "
                    f"{self.lookup_source}"
                    if self.category_lookup is not None
                    else ""
                ),
            )
        else:
            try:
                category = parse_category(raw_category, self.names)
            except ValueError as error:
                problem(m.category, str(error))

        adversarial = _get(raw, m.adversarial_answer or "adversarial_answer")
        adversarial_text: str | None = None
        if adversarial is not _MISSING:
            try:
                adversarial_text = answer_text(adversarial)
            except TypeError as error:
                problem(m.adversarial_answer or "adversarial_answer", str(error))

        gold = _get(raw, m.ground_truth)
        ground_truth: str | None = None
        references: tuple[str, ...] = ()
        no_gold: str | None = None
        has_adversarial = adversarial_text is not None and bool(adversarial_text.strip())
        if gold is _MISSING:
            if category == 5 and has_adversarial:
                ground_truth = adversarial_text  # LoCoMo cat-5 items may carry only this
            else:
                problem(m.ground_truth, "missing ground truth")
        else:
            try:
                read = gold_answer(gold)
            except TypeError as error:
                problem(m.ground_truth, str(error))
            else:
                ground_truth, references = read.text, read.references
                if read.missing is not None:
                    if category == 5 and has_adversarial:
                        ground_truth = adversarial_text  # as for a cat-5 item without `answer`
                    else:
                        no_gold = f"no gold answer (it is {read.missing}): question excluded"

        prediction = _get(raw, m.prediction)
        prediction_text = ""
        prediction_missing: str | None = None
        if prediction is _MISSING:
            problem(m.prediction, "missing prediction")
        else:
            try:
                prediction_text, prediction_missing = prediction_answer(prediction)
            except TypeError as error:
                problem(m.prediction, str(error))

        question_id = _get(raw, m.question_id)
        if question_id is _MISSING or question_id is None:
            question_id = f"{conversation_id}:{position}" if conversation_id else f"q{position}"
        conv = _get(raw, m.conversation_id)
        conversation = str(conv) if conv not in (_MISSING, None) else conversation_id

        evidence_raw = _get(raw, m.evidence or "evidence")
        evidence: tuple[str, ...] = ()
        if isinstance(evidence_raw, list):
            evidence = tuple(str(e) for e in evidence_raw)

        latencies: dict[str, float | None] = {}
        for name in ("search_latency", "total_latency"):
            seconds_key = getattr(m, f"{name}_s")
            ms_key = getattr(m, f"{name}_ms")
            latencies[name] = None
            for key, scale in ((seconds_key, 1.0), (ms_key, 1e-3)):
                value = _get(raw, key)
                if value is _MISSING or value is None:
                    continue
                try:
                    latencies[name] = non_negative(value, scale)
                except ValueError as error:
                    problem(key, str(error))

        context_tokens: int | None = None
        tokens = _get(raw, m.context_tokens)
        if tokens not in (_MISSING, None):
            try:
                context_tokens = int(non_negative(tokens))
            except ValueError as error:
                problem(m.context_tokens, str(error))

        verdicts: list[Any] = []
        raw_verdict: Any = _get(raw, m.judge_score)
        if raw_verdict not in (_MISSING, None):
            several = verdict_list(raw_verdict)
            for index, value in enumerate(several if several is not None else [raw_verdict]):
                try:
                    stored_judge_score(value)
                except ValueError as error:
                    where_field = m.judge_score if several is None else f"{m.judge_score}[{index}]"
                    problem(where_field, str(error))
                else:
                    verdicts.append(value)
            if several is not None and not several:
                problem(m.judge_score, "no verdict in an empty list of judgments")

        if problems:
            return Built(None, problems)
        assert category is not None and isinstance(question, str)
        if no_gold is not None:
            return Built(
                None, [], no_gold=RecordProblem(self.path, where, m.ground_truth, no_gold, position)
            )
        return Built(
            QARecord(
                question_id=str(question_id),
                question=question,
                ground_truth=ground_truth,
                prediction=prediction_text,
                category=category,
                conversation_id=conversation,
                evidence=evidence,
                adversarial_answer=adversarial_text,
                search_latency_s=latencies["search_latency"],
                total_latency_s=latencies["total_latency"],
                context_tokens=context_tokens,
                stored_judge_score=None,  # set with the file's scale by the loader
                position=position,
                references=references,
                prediction_missing=prediction_missing is not None,
            ),
            [],
            missing_prediction=None
            if prediction_missing is None
            else RecordProblem(
                self.path, where, m.prediction, f"prediction is {prediction_missing}", position
            ),
            verdicts=verdicts,
            category_taken=category_taken,
            numbers=[
                (*pair, role)
                for role, value in (("gold", gold), ("prediction", prediction))
                if value is not _MISSING
                for pair in number_conversions(value)
            ],
            stored_metrics=stored_metric_values(
                raw, {str(k) for k in (m.prediction, m.ground_truth, m.judge_score) if k}
            ),
        )
