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

import hashlib
import json
import logging
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Optional

from locomo_exp.config import DataConfig, DataFormat, FieldMap, OnInvalid
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


@dataclass(frozen=True)
class RecordProblem:
    """One problem found in a results file.

    Attributes:
        path: the file.
        where: the record's location, e.g. ``[12]`` or ``["3"][7]`` or ``line 5``;
            empty for a problem with the whole file.
        field: the field name in the file, or ``None`` for the whole record/file.
        message: what is wrong.
        position: 0-based reading-order index of the record, or ``None``.
    """

    path: str
    where: str
    field: Optional[str]
    message: str
    position: Optional[int] = None

    def __str__(self) -> str:
        parts = [self.path]
        if self.where:
            parts.append(f"record {self.where}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + f": {self.message}"


class DataValidationError(ValueError):
    """A results file cannot be scored as it is; ``problems`` lists every problem found."""

    def __init__(self, problems: list[RecordProblem], hint: str = ""):
        self.problems = problems
        lines = _grouped_lines(problems)
        shown = "\n".join(f"  - {line}" for line in lines[:50])
        more = f"\n  ... and {len(lines) - 50} more" if len(lines) > 50 else ""
        if hint:
            more += f"\n{hint}"
        elif any(p.position is not None for p in problems):
            more += "\nFix the file, or set data.on_invalid=skip to score the valid records."
        super().__init__(f"{len(problems)} problem(s) in the results file:\n{shown}{more}")


def _grouped_lines(problems: list[RecordProblem], at_least: int = 5) -> list[str]:
    """One line per problem, except that a (field, message) shared by many records is one line."""
    groups: dict[tuple[Optional[str], str], list[RecordProblem]] = {}
    for problem in problems:
        groups.setdefault((problem.field, problem.message), []).append(problem)
    lines: list[str] = []
    for problem in problems:
        group = groups[(problem.field, problem.message)]
        if len(group) < at_least:
            lines.append(str(problem))
        elif group[0] is problem:
            examples = ", ".join(p.where for p in group[:3])
            field_text = f": field '{problem.field}'" if problem.field else ""
            lines.append(
                f"{problem.path}: {len(group)} records ({examples}, ...){field_text}: {problem.message}"
            )
    return lines


@dataclass
class LoadedResults:
    """What :func:`load_results` returns.

    Attributes:
        records: valid records, in file order.
        skipped: problems of records left out with ``data.on_invalid=skip``.
        path: absolute path of the file.
        sha256: hex digest of the file's bytes.
        format: the format used (after ``auto`` detection).
        prediction_key: for the ``locomo`` format, the ``<name>_prediction`` key read.
        n_skipped_records: number of distinct records skipped.
    """

    records: list[QARecord]
    path: Path
    sha256: str
    format: str
    skipped: list[RecordProblem] = field(default_factory=list)
    prediction_key: Optional[str] = None

    @property
    def n_skipped_records(self) -> int:
        return len({p.position for p in self.skipped if p.position is not None})


# ----------------------------------------------------------------------------- reading


def read_json_or_jsonl(path: Path) -> Any:
    """Parse a file as JSON, or else as JSON Lines.

    Args:
        path: the file.

    Returns:
        The parsed JSON value (a list for JSON Lines).

    Raises:
        DataValidationError: if the file is missing, empty, or neither JSON nor JSON Lines.
    """
    if not path.is_file():
        raise DataValidationError([RecordProblem(str(path), "", None, "file not found")])
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise DataValidationError([RecordProblem(str(path), "", None, "file is empty")])
    try:
        return json.loads(text)
    except json.JSONDecodeError as json_error:
        rows: list[Any] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise DataValidationError(
                    [
                        RecordProblem(
                            str(path),
                            "",
                            None,
                            f"not valid JSON ({json_error.msg} at line {json_error.lineno}, "
                            f"column {json_error.colno}) nor JSON Lines (line {number})",
                        )
                    ]
                ) from None
        return rows


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


def _answer_text(value: Any) -> Optional[str]:
    """Gold/prediction value -> text as LoCoMo's scorer sees it (``str()`` of ints)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(str(v) for v in value)
    raise TypeError(f"expected text or a number, got {type(value).__name__}")


def _non_negative(value: Any, scale: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {value!r}")
    if value < 0:
        raise ValueError(f"expected a non-negative number, got {value!r}")
    return float(value) * scale


def stored_judge_score(value: Any) -> float:
    """Check a judge verdict stored in a results file; return it as a number.

    Args:
        value: the stored verdict: a bool (Zep's ``grade``) or a number in [0, 100]
            (the Mem0 harness's 0/1 ``llm_score``, or a 0-100 score).

    Returns:
        ``True``/``False`` as 1.0/0.0, numbers unchanged. The scale is decided once for
        the whole file by :func:`stored_judge_scale`.

    Raises:
        ValueError: for anything else.
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 100:
        return float(value)
    raise ValueError(f"a stored judge score must be a bool or a number in 0-100, got {value!r}")


def stored_judge_scale(values: list[float]) -> float:
    """Factor that puts a file's stored verdicts on 0-100: 100 when every one is 0 or 1
    (binary verdicts), else 1 (already 0-100)."""
    return 100.0 if all(v in (0.0, 1.0) for v in values) else 1.0


@dataclass
class _RecordBuilder:
    """Turns one raw record into a :class:`QARecord`, collecting every problem."""

    path: str
    mapping: FieldMap
    names: dict[int, str]
    category_lookup: Optional[dict[tuple[Optional[str], str], int]] = None

    def build(
        self, raw: Any, where: str, conversation_id: Optional[str], position: int
    ) -> tuple[Optional[QARecord], list[RecordProblem]]:
        problems: list[RecordProblem] = []

        def problem(field_name: Optional[str], message: str) -> None:
            problems.append(RecordProblem(self.path, where, field_name, message, position))

        if not isinstance(raw, dict):
            problem(None, f"expected a JSON object, got {type(raw).__name__ if raw is not _MISSING else 'something else'}")
            return None, problems
        m = self.mapping

        question = _get(raw, m.question)
        if question is _MISSING or not isinstance(question, str) or not question.strip():
            problem(m.question, "missing or empty question" if question is _MISSING or question in ("", None) else f"question must be text, got {type(question).__name__}")

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
                adversarial_text = _answer_text(adversarial)
            except TypeError as error:
                problem(m.adversarial_answer or "adversarial_answer", str(error))

        gold = _get(raw, m.ground_truth)
        ground_truth: Optional[str] = None
        if gold is _MISSING:
            if category == 5 and adversarial_text is not None:
                ground_truth = adversarial_text  # LoCoMo cat-5 items may carry only this
            else:
                problem(m.ground_truth, "missing ground truth")
        else:
            try:
                ground_truth = _answer_text(gold)
            except TypeError as error:
                problem(m.ground_truth, str(error))

        prediction = _get(raw, m.prediction)
        prediction_text = ""
        if prediction is _MISSING:
            problem(m.prediction, "missing prediction")
        else:
            try:
                prediction_text = _answer_text(prediction) or ""
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
        verdict = _get(raw, m.judge_score)
        if verdict not in (_MISSING, None):
            try:
                stored_judge = stored_judge_score(verdict)
            except ValueError as error:
                problem(m.judge_score, str(error))

        if problems:
            return None, problems
        assert category is not None and isinstance(question, str)
        return (
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
            ),
            [],
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
            ``on_invalid=error``; also when every record is invalid.
    """
    config = config or DataConfig()
    names = category_names or DEFAULT_CATEGORY_NAMES
    path = Path(path).resolve()
    obj = read_json_or_jsonl(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()

    def file_error(message: str) -> DataValidationError:
        return DataValidationError([RecordProblem(str(path), "", None, message)])

    if isinstance(obj, (list, dict)) and not obj:
        raise file_error("contains no records")
    fmt = DataFormat(config.format)
    try:
        if fmt == DataFormat.auto:
            fmt = detect_format(obj)
        prediction_key = None
        if fmt == DataFormat.locomo:
            prediction_key = config.prediction_key or detect_prediction_key(obj)
        raw_items = list(_iter_raw(obj, fmt, path))
    except ValueError as error:
        raise file_error(str(error)) from None
    if not raw_items:
        raise file_error("contains no records")

    lookup = _category_lookup(config, names) if config.categories_from else None
    builder = _RecordBuilder(str(path), _mapping_for(fmt, config, prediction_key), names, lookup)
    records: list[QARecord] = []
    problems: list[RecordProblem] = []
    seen_ids: dict[str, str] = {}
    for position, (where, conversation_id, raw) in enumerate(raw_items):
        record, record_problems = builder.build(raw, where, conversation_id, position)
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
        problems.extend(record_problems)

    if problems and (OnInvalid(config.on_invalid) == OnInvalid.error or not records):
        raise DataValidationError(problems, _hint(problems, raw_items, builder.mapping, len(raw_items)))
    if not records:
        raise DataValidationError(problems or [RecordProblem(str(path), "", None, "no valid records")])
    stored = [r.stored_judge_score for r in records if r.stored_judge_score is not None]
    if stored and (scale := stored_judge_scale(stored)) != 1.0:
        records = [
            replace(r, stored_judge_score=r.stored_judge_score * scale)
            if r.stored_judge_score is not None
            else r
            for r in records
        ]
    if problems:
        log.warning(
            "%s: skipped %d invalid record(s) (data.on_invalid=skip)",
            path,
            len({p.position for p in problems}),
        )
    return LoadedResults(
        records=records,
        path=path,
        sha256=digest,
        format=fmt.value,
        skipped=problems,
        prediction_key=prediction_key,
    )


__all__ = [
    "DataValidationError",
    "LoadedResults",
    "RecordProblem",
    "detect_format",
    "detect_prediction_key",
    "load_results",
    "parse_category",
    "read_json_or_jsonl",
]
