"""Reading results files: answers of a memory system to LoCoMo questions.

Supported layouts (``data.format``):

* ``qa_results`` -- a JSON list of ``{question, ground_truth, predicted_answer, category}``
  with optional ``question_id, conversation_id, evidence, search_latency_s,
  total_latency_s, context_tokens``.
* ``locomo`` -- LoCoMo's own output: a list of samples ``{sample_id, qa: [...]}`` whose QA
  items hold the gold fields and one ``<name>_prediction`` key.
* ``mem0`` -- the Mem0 evaluation harness: a dict of conversation index -> list of
  ``{question, answer, response, category, ...}``.
* ``fields`` -- any JSON list, dict of lists or JSON Lines, with a :class:`FieldMap`.
* ``auto`` -- detect one of the first three from the file's shape.

Every problem in a file is collected and reported at once, each naming the file, the
record and the field (:class:`DataValidationError`), before anything is scored.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Optional

from locomo_exp.answer_values import (
    StoredScaleError,
    answer_text,
    gold_answer,
    prediction_answer,
    show,
    stored_judge_scale,
    stored_judge_score,
)
from locomo_exp.config import DataConfig, DataFormat, FieldMap, OnInvalid, OnMissingPrediction
from locomo_exp.input_file import (
    DataValidationError,
    RecordProblem,
    file_error,
    read_results_file,
)
from locomo_exp.records import CATEGORY_IDS, DEFAULT_CATEGORY_NAMES, QARecord

log = logging.getLogger(__name__)

QA_RESULTS_FIELDS = FieldMap(
    question="question",
    ground_truth="ground_truth",
    prediction="predicted_answer",
    category="category",
    question_id="question_id",
    conversation_id="conversation_id",
    evidence="evidence",
    adversarial_answer="adversarial_answer",
    search_latency_s="search_latency_s",
    total_latency_s="total_latency_s",
    context_tokens="context_tokens",
)
MEM0_FIELDS = FieldMap(
    question="question",
    ground_truth="answer",
    prediction="response",
    category="category",
    judge_score="llm_score",
)
_MISSING = object()
_CATEGORY_ALIASES = {"commonsense": 3, "open_domain_knowledge": 3}


@dataclass
class LoadedResults:
    """What :func:`load_results` returns.

    Attributes:
        records: valid records, in file order.
        skipped: problems of records left out with ``data.on_invalid=skip``.
        path: absolute path of the file.
        sha256: hex digest of the file's bytes (exactly the bytes parsed).
        format: the format used (after ``auto`` detection).
        prediction_key: for the ``locomo`` format, the ``<name>_prediction`` key read.
        excluded_no_gold: one problem per question left out for having no gold answer
            (a data problem, reported and counted, not scored).
        missing_predictions: one problem per scored record whose prediction is missing
            (``prediction_missing``; scored 0 with ``data.on_missing_prediction=zero``).
    """

    records: list[QARecord]
    path: Path
    sha256: str
    format: str
    skipped: list[RecordProblem] = field(default_factory=list)
    prediction_key: Optional[str] = None
    excluded_no_gold: list[RecordProblem] = field(default_factory=list)
    missing_predictions: list[RecordProblem] = field(default_factory=list)

    @property
    def n_skipped_records(self) -> int:
        return len({p.position for p in self.skipped if p.position is not None})

    @property
    def n_excluded_no_gold(self) -> int:
        """Questions left out because their gold is null, empty, blank or an empty list."""
        return len(self.excluded_no_gold)

    @property
    def n_missing_predictions(self) -> int:
        """Scored records whose prediction is null, NaN or Infinity (each scored 0)."""
        return sum(1 for r in self.records if r.prediction_missing)


# ----------------------------------------------------------------------------- reading


def read_json_or_jsonl(path: Path) -> Any:
    """Parse a file as JSON, or else as JSON Lines (see :func:`read_results_file`).

    Args:
        path: the file.

    Returns:
        The parsed JSON value (a list for JSON Lines).

    Raises:
        DataValidationError: if the file is missing, not a regular file, empty,
            undecodable, or neither JSON nor JSON Lines.
    """
    return read_results_file(path).obj


def detect_format(obj: Any) -> DataFormat:
    """Guess a results file's layout from its parsed JSON.

    Args:
        obj: parsed JSON.

    Returns:
        ``qa_results``, ``locomo`` or ``mem0``.

    Raises:
        ValueError: if no known layout matches (the caller names the file).
    """
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        first = obj[0]
        if "qa" in first and isinstance(first.get("qa"), list):
            return DataFormat.locomo
        if "predicted_answer" in first:
            return DataFormat.qa_results
    if isinstance(obj, dict) and obj:
        first_value = next(iter(obj.values()))
        if isinstance(first_value, list) and first_value and isinstance(first_value[0], dict):
            if "response" in first_value[0] and "answer" in first_value[0]:
                return DataFormat.mem0
    raise ValueError(
        "cannot detect the format (expected a qa_results list with 'predicted_answer', a LoCoMo "
        "list of {sample_id, qa}, or a Mem0 dict of lists with 'response'); set data.format "
        "and, for other layouts, data.format=fields with data.fields.question=... etc."
    )


def _get(raw: dict[str, Any], key: Optional[str]) -> Any:
    """Read a possibly dotted key; ``_MISSING`` when absent."""
    if key is None:
        return _MISSING
    value: Any = raw
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def detect_prediction_key(samples: list[Any]) -> str:
    """Find the single ``<name>_prediction`` key of a LoCoMo-format file.

    Args:
        samples: the parsed list of samples.

    Returns:
        The key, e.g. ``honcho_prediction``.

    Raises:
        ValueError: if none or several such keys exist (set ``data.prediction_key``).
    """
    keys: set[str] = set()
    for sample in samples:
        if isinstance(sample, dict):
            for qa in sample.get("qa") or []:
                if isinstance(qa, dict):
                    keys.update(k for k in qa if k.endswith("_prediction"))
    if len(keys) != 1:
        found = ", ".join(sorted(keys)) or "none"
        raise ValueError(
            f"expected exactly one '<name>_prediction' key in the QA items, found {found}; "
            "set data.prediction_key"
        )
    return keys.pop()


def _iter_raw(obj: Any, fmt: DataFormat, path: Path) -> Iterator[tuple[str, Optional[str], Any]]:
    """Yield ``(where, conversation_id, raw record)`` in reading order for a layout."""
    if fmt == DataFormat.locomo:
        if not isinstance(obj, list):
            raise ValueError("the locomo format is a JSON list of samples {sample_id, qa}")
        for s_index, sample in enumerate(obj):
            if not isinstance(sample, dict) or not isinstance(sample.get("qa"), list):
                yield f"[{s_index}]", None, _MISSING
                continue
            sample_id = str(sample.get("sample_id", s_index))
            for q_index, qa in enumerate(sample["qa"]):
                yield f"[{s_index}].qa[{q_index}] (sample_id={sample_id})", sample_id, qa
    elif isinstance(obj, list):
        for index, raw in enumerate(obj):
            yield f"[{index}]", None, raw
    elif isinstance(obj, dict):
        for key, items in obj.items():
            if not isinstance(items, list):
                yield f'["{key}"]', str(key), _MISSING
                continue
            for index, raw in enumerate(items):
                yield f'["{key}"][{index}]', str(key), raw
    else:
        raise ValueError("expected a JSON list of records or a dict of lists of records")


# ----------------------------------------------------------------------------- parsing values


def parse_category(value: Any, names: dict[int, str] | None = None) -> int:
    """Turn a category given as an int, a numeric string or a name into LoCoMo's id.

    Names are matched against ``names`` (default :data:`DEFAULT_CATEGORY_NAMES`),
    ignoring case and treating ``-`` and spaces as ``_``; ``commonsense`` means 3.
    Beware: some published files attach names to other ids (FIELD_NOTES §3).

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


def _non_negative(value: Any, scale: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {show(value)}")
    if value < 0:
        raise ValueError(f"expected a non-negative number, got {show(value)}")
    return float(value) * scale


@dataclass
class _Built:
    """What :meth:`_RecordBuilder.build` makes of one raw record.

    Attributes:
        record: the record, or ``None`` when it is invalid or has no gold.
        problems: why it is invalid.
        no_gold: set when the record is valid but its gold is null/empty/blank (excluded).
        missing_prediction: set when its prediction is null, NaN or Infinity.
        verdict: the stored judge verdict as read (bool or number), for the file's scale.
    """

    record: Optional[QARecord]
    problems: list[RecordProblem]
    no_gold: Optional[RecordProblem] = None
    missing_prediction: Optional[RecordProblem] = None
    verdict: Any = None


@dataclass
class _RecordBuilder:
    """Turns one raw record into a :class:`QARecord`, collecting every problem."""

    path: str
    mapping: FieldMap
    names: dict[int, str]
    category_lookup: Optional[dict[tuple[Optional[str], str], int]] = None

    def build(
        self, raw: Any, where: str, conversation_id: Optional[str], position: int
    ) -> _Built:
        problems: list[RecordProblem] = []

        def problem(field_name: Optional[str], message: str) -> None:
            problems.append(RecordProblem(self.path, where, field_name, message, position))

        if not isinstance(raw, dict):
            problem(None, f"expected a JSON object, got {type(raw).__name__ if raw is not _MISSING else 'something else'}")
            return _Built(None, problems)
        m = self.mapping

        question = _get(raw, m.question)
        if question is _MISSING:
            problem(m.question, "missing question")
        elif question is None or (isinstance(question, str) and not question.strip()):
            problem(m.question, "question is empty")
        elif not isinstance(question, str):
            problem(m.question, f"question must be text, got {type(question).__name__}")

        category: Optional[int] = None
        raw_category = _get(raw, m.category)
        if raw_category is _MISSING and self.category_lookup is not None:
            conv_key = _get(raw, m.conversation_id)
            conv_key = str(conv_key) if conv_key not in (_MISSING, None) else conversation_id
            raw_category = self.category_lookup.get((conv_key, str(question)), _MISSING)
        if raw_category is _MISSING:
            problem(
                m.category,
                "missing category"
                + (", and no record with the same conversation and question in "
                   "data.categories_from" if self.category_lookup is not None else ""),
            )
        else:
            try:
                category = parse_category(raw_category, self.names)
            except ValueError as error:
                problem(m.category, str(error))

        adversarial = _get(raw, m.adversarial_answer or "adversarial_answer")
        adversarial_text: Optional[str] = None
        if adversarial is not _MISSING:
            try:
                adversarial_text = answer_text(adversarial)
            except TypeError as error:
                problem(m.adversarial_answer or "adversarial_answer", str(error))

        gold = _get(raw, m.ground_truth)
        ground_truth: Optional[str] = None
        references: tuple[str, ...] = ()
        no_gold: Optional[str] = None
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
        prediction_missing: Optional[str] = None
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

        latencies: dict[str, Optional[float]] = {}
        for name in ("search_latency", "total_latency"):
            seconds_key = getattr(m, f"{name}_s")
            ms_key = getattr(m, f"{name}_ms")
            latencies[name] = None
            for key, scale in ((seconds_key, 1.0), (ms_key, 1e-3)):
                value = _get(raw, key)
                if value is _MISSING or value is None:
                    continue
                try:
                    latencies[name] = _non_negative(value, scale)
                except ValueError as error:
                    problem(key, str(error))

        context_tokens: Optional[int] = None
        tokens = _get(raw, m.context_tokens)
        if tokens not in (_MISSING, None):
            try:
                context_tokens = int(_non_negative(tokens))
            except ValueError as error:
                problem(m.context_tokens, str(error))

        stored_judge: Optional[float] = None
        verdict: Any = _get(raw, m.judge_score)
        if verdict not in (_MISSING, None):
            try:
                stored_judge = stored_judge_score(verdict)
            except ValueError as error:
                problem(m.judge_score, str(error))

        if problems:
            return _Built(None, problems)
        assert category is not None and isinstance(question, str)
        if no_gold is not None:
            return _Built(None, [], no_gold=RecordProblem(self.path, where, m.ground_truth, no_gold, position))
        return _Built(
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
                stored_judge_score=stored_judge,
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
            verdict=stored_judge if stored_judge is None else verdict,
        )


def _hint(
    problems: list[RecordProblem], raw_items: list[Any], mapping: FieldMap, total: int
) -> str:
    """Advice when a problem hits every record: usually a wrong field map or format."""
    invalid = {p.position for p in problems}
    if len(invalid) < total:
        return ""
    fields_hit = {p.field for p in problems}
    first = next((raw for _, _, raw in raw_items if isinstance(raw, dict)), None)
    keys = ", ".join(sorted(first)) if isinstance(first, dict) else "none"
    hint = f"Every record is invalid. The first record's keys are: {keys}."
    if fields_hit == {mapping.category}:
        hint += (
            " If the file has no categories, take them from another file of the same "
            "questions with data.categories_from=<file>."
        )
    else:
        hint += " Check data.format, or map them with data.format=fields data.fields.question=... etc."
    return hint


def _mapping_for(fmt: DataFormat, config: DataConfig, prediction_key: Optional[str]) -> FieldMap:
    if fmt == DataFormat.qa_results:
        return QA_RESULTS_FIELDS
    if fmt == DataFormat.mem0:
        return MEM0_FIELDS
    if fmt == DataFormat.locomo:
        return FieldMap(
            question="question",
            ground_truth="answer",
            prediction=prediction_key or "prediction",
            category="category",
            evidence="evidence",
            adversarial_answer="adversarial_answer",
        )
    return config.fields


def _category_lookup(
    config: DataConfig, names: dict[int, str]
) -> dict[tuple[Optional[str], str], int]:
    """(conversation id, question) -> category id, from ``data.categories_from``.

    The other file is read with the same format settings; a key that maps to two
    different categories is left out (and then reported as missing where it is needed).
    """
    from dataclasses import replace

    other = load_results(
        str(config.categories_from), replace(config, categories_from=None, on_invalid=OnInvalid.skip), names
    )
    lookup: dict[tuple[Optional[str], str], int] = {}
    ambiguous: set[tuple[Optional[str], str]] = set()
    for record in other.records:
        key = (record.conversation_id, record.question)
        if key in lookup and lookup[key] != record.category:
            ambiguous.add(key)
        lookup[key] = record.category
    for key in ambiguous:
        del lookup[key]
    return lookup


def load_results(
    path: str | Path,
    config: DataConfig | None = None,
    category_names: dict[int, str] | None = None,
) -> LoadedResults:
    """Read and validate a results file.

    Args:
        path: the file (absolute, or relative to the current directory).
        config: ``data`` settings (format, prediction key, field map, on_invalid,
            ``categories_from``: another results file giving the category of each
            (conversation, question) when this file has none -- e.g. Zep's responses file,
            which has latencies but no categories, with Zep's grades file). A relative
            ``categories_from`` is resolved against the current directory.
        category_names: display names keyed by id, used to parse category names.

    Returns:
        :class:`LoadedResults` with the valid records and what was skipped.

    Raises:
        DataValidationError: listing every problem (file, record, field), when the file
            cannot be read, has no records, or has invalid records and
            ``on_invalid=error``; also when every record is invalid or has no gold, when a
            prediction is missing and ``on_missing_prediction=error`` (before any judge
            call), and when stored verdicts mix true/false with scores.

    Questions whose gold is null, empty, blank or an empty list are excluded (counted in
    ``excluded_no_gold`` and logged); category-5 items with a non-blank
    ``adversarial_answer`` take it as their gold instead, as LoCoMo's own files do.
    Predictions given as null, NaN or Infinity are kept with ``prediction_missing`` set
    (scored 0) and logged, unless ``on_missing_prediction=error``.
    """
    config = config or DataConfig()
    names = category_names or DEFAULT_CATEGORY_NAMES
    parsed = read_results_file(path)  # one read: the hash is of the bytes parsed
    path, obj, digest = parsed.path, parsed.obj, parsed.sha256

    if isinstance(obj, (list, dict)) and not obj:
        raise file_error(path, "contains no records")
    fmt = DataFormat(config.format)
    try:
        if fmt == DataFormat.auto:
            fmt = detect_format(obj)
        prediction_key = None
        if fmt == DataFormat.locomo:
            prediction_key = config.prediction_key or detect_prediction_key(obj)
        raw_items = list(_iter_raw(obj, fmt, path))
    except ValueError as error:
        raise file_error(path, str(error)) from None
    if not raw_items:
        raise file_error(path, "contains no records")

    lookup = _category_lookup(config, names) if config.categories_from else None
    builder = _RecordBuilder(str(path), _mapping_for(fmt, config, prediction_key), names, lookup)
    records: list[QARecord] = []
    problems: list[RecordProblem] = []
    excluded: list[RecordProblem] = []
    missing: list[RecordProblem] = []
    verdicts: list[tuple[str, Any]] = []  # (where, verdict as read) of each kept record
    seen_ids: dict[str, str] = {}
    for position, (where, conversation_id, raw) in enumerate(raw_items):
        built = builder.build(raw, where, conversation_id, position)
        record, record_problems = built.record, built.problems
        if record is not None and record.question_id in seen_ids:
            record_problems = [
                RecordProblem(
                    str(path),
                    where,
                    builder.mapping.question_id or "question_id",
                    f"duplicate question id {record.question_id!r} (first at {seen_ids[record.question_id]})",
                    position,
                )
            ]
            record = None
        if record is not None:
            seen_ids[record.question_id] = where
            records.append(record)
            if built.missing_prediction is not None:
                missing.append(built.missing_prediction)
            if built.verdict is not None:
                verdicts.append((where, built.verdict))
        if built.no_gold is not None:
            excluded.append(built.no_gold)
        problems.extend(record_problems)

    if problems and (OnInvalid(config.on_invalid) == OnInvalid.error or not records):
        raise DataValidationError(problems, _hint(problems, raw_items, builder.mapping, len(raw_items)))
    if not records:
        raise DataValidationError(
            excluded or [RecordProblem(str(path), "", None, "no valid records")],
            "No question has a gold answer: nothing can be scored." if excluded else "",
        )
    if missing and OnMissingPrediction(config.on_missing_prediction) == OnMissingPrediction.error:
        raise DataValidationError(
            missing,
            f"{len(missing)} prediction(s) are missing (null, NaN or Infinity) and "
            "data.on_missing_prediction=error; fix the file, or set "
            "data.on_missing_prediction=zero to score them 0.",
        )
    records = _scale_stored_verdicts(records, verdicts, str(path), builder.mapping.judge_score)
    if problems:
        log.warning(
            "%s: skipped %d invalid record(s) (data.on_invalid=skip)",
            path,
            len({p.position for p in problems}),
        )
    if excluded:
        log.warning(
            "%s: excluded %d question(s) with no gold answer (null, empty or blank), e.g. %s",
            path,
            len(excluded),
            excluded[0].where,
        )
    if missing:
        log.warning(
            "%s: %d prediction(s) missing (null, NaN or Infinity), each scored 0, e.g. %s "
            "(data.on_missing_prediction=zero)",
            path,
            len(missing),
            missing[0].where,
        )
    return LoadedResults(
        records=records,
        path=path,
        sha256=digest,
        format=fmt.value,
        skipped=problems,
        prediction_key=prediction_key,
        excluded_no_gold=excluded,
        missing_predictions=missing,
    )


def _scale_stored_verdicts(
    records: list[QARecord], verdicts: list[tuple[str, Any]], path: str, field_name: Optional[str]
) -> list[QARecord]:
    """Put the stored verdicts on 0-100 with one scale for the whole file.

    Args:
        records: the kept records.
        verdicts: ``(where, verdict as read)`` of the records that carry one, in order.
        path: the file, for messages.
        field_name: the verdict field, for messages.

    Returns:
        The records, ``stored_judge_score`` multiplied by :func:`stored_judge_scale`.

    Raises:
        DataValidationError: naming the file, the field and a record when the verdicts mix
            true/false with scores.
    """
    if not verdicts:
        return records
    try:
        scale = stored_judge_scale([value for _, value in verdicts])
    except StoredScaleError as error:
        where = verdicts[error.index][0]
        raise DataValidationError(
            [RecordProblem(path, where, field_name, str(error))],
            "Stored verdicts are put on 0-100 with one scale decided from the whole file.",
        ) from None
    if scale == 1.0:
        return records
    return [
        replace(r, stored_judge_score=r.stored_judge_score * scale)
        if r.stored_judge_score is not None
        else r
        for r in records
    ]


__all__ = [
    "DataValidationError",
    "LoadedResults",
    "RecordProblem",
    "detect_format",
    "detect_prediction_key",
    "load_results",
    "parse_category",
    "read_json_or_jsonl",
    "read_results_file",
]
