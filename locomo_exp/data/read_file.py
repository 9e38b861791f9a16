"""Reading and validating one results file: :func:`load_results`.

Every problem in a file is collected and reported at once, each naming the file, the
record and the field (:class:`DataValidationError`), before anything is scored.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.config import DataConfig, OnInvalid, OnMissingPrediction
from locomo_exp.data.answer_values import (
    StoredScaleError,
    gold_text,
    stored_judge_scale,
    stored_judge_score,
)
from locomo_exp.data.detect import Layout, detect_layout
from locomo_exp.data.input_file import (
    DataValidationError,
    RecordProblem,
    file_error,
    read_results_file,
)
from locomo_exp.data.judge_source import stated_judge
from locomo_exp.data.layouts import layout_spec
from locomo_exp.data.parse_record import CategoryLookup, RecordBuilder
from locomo_exp.data.question_set import QuestionSet, detect_question_set
from locomo_exp.data.raw import MISSING, RawItem, get_field
from locomo_exp.data.reference import Reference, ReferenceCheck
from locomo_exp.data.sample import stratified_sample
from locomo_exp.data.settings import SettingInfo, SeveralSettings, apply_setting
from locomo_exp.data.verdicts import stored_judge_detail
from locomo_exp.data.wrapped import file_aggregates
from locomo_exp.results import QARecord
from locomo_exp.results.words import counted

log = logging.getLogger(__name__)


@dataclass
class LoadedResults:
    """What :func:`load_results` returns.

    Attributes:
        records: valid records, in file order.
        path: absolute path of the file (the first file when several are pooled).
        sha256: hex digest of the file's bytes (exactly the bytes parsed); for pooled
            files, of their digests joined in order.
        format: the layout read (after ``auto`` detection).
        skipped: problems of records left out with ``data.on_invalid=skip``.
        prediction_key: for the ``locomo`` format, the ``<name>_prediction`` key read.
        excluded_no_gold: one problem per question left out for having no gold answer.
        missing_predictions: one problem per scored record whose prediction is missing.
        records_key: dotted key of the records inside a wrapper object, or ``None``.
        records_partitions: dotted keys of other lists in the file that hold only records
            of ``records_key`` (a breakdown by type, say), not read again.
        judge_field: the stored-verdict field read (``llm_score``, ``grade``,
            ``llm_judgments.*``, ``<name>_llm``...), or ``None``.
        file_aggregates: the wrapper's own aggregates that are plain numbers, by dotted
            key, as given (e.g. ``{"summary.accuracy": 0.5}``).
        judge_stated: ``(key, model)`` when the file names the judge of its stored
            verdicts beside the records (``("metadata.judge_model", "gpt-4.1-mini")``,
            :func:`~.judge_source.stated_judge`), else ``None``.
        question_set: which LoCoMo question set the records are.
        reference: the ``data.reference`` check, when asked for.
        subset: ``data.limit`` sample info ``{"limit", "seed", "from", "per_category"}``.
        sources: ``[(path, sha256)]`` of every file read (several when pooled).
        across_runs: when this is the first of ``data.runs``, stored J of every run and
            mean ± sample std across runs per aggregate key
            (:meth:`~.several.LoadedRuns.stored_j_across_runs`).
        stored_metrics: question id -> per-question metrics the file carries
            (``{"f1_score": 0.5, "bleu_score": 0.4}``), for questions that have any.
        runs: when this is the first of ``data.runs``, every run (this one first).
        runs_summary: each run scored, mean ± std across runs
            (:func:`locomo_exp.scoring.repeated_runs.runs_section`), set by the experiment.
        setting: for a file with answers under per-setting keys, the setting read
            (:class:`~.settings.SettingInfo`), else ``None``.
        numeric_answers: golds and predictions of the valid records that were numbers,
            ``(as in the file, as read)`` (``("12.0", "12")``), in file order.
    """

    records: list[QARecord]
    path: Path
    sha256: str
    format: str
    skipped: list[RecordProblem] = field(default_factory=list)
    prediction_key: str | None = None
    excluded_no_gold: list[RecordProblem] = field(default_factory=list)
    missing_predictions: list[RecordProblem] = field(default_factory=list)
    records_key: str | None = None
    records_partitions: tuple[str, ...] = ()
    judge_field: str | None = None
    file_aggregates: dict[str, float] = field(default_factory=dict)
    judge_stated: tuple[str, str] | None = None
    question_set: QuestionSet | None = None
    reference: ReferenceCheck | None = None
    subset: dict[str, Any] | None = None
    sources: list[tuple[Path, str]] = field(default_factory=list)
    across_runs: dict[str, Any] | None = None
    stored_metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    runs: list[LoadedResults] | None = None
    runs_summary: dict[str, Any] | None = None
    setting: SettingInfo | None = None
    numeric_answers: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The file's name, with ``#<setting>`` for one setting of a per-setting file."""
        return self.path.name + (f"#{self.setting.setting}" if self.setting else "")

    @property
    def n_skipped_records(self) -> int:
        """Records left out with ``data.on_invalid=skip``."""
        return len({(p.path, p.position) for p in self.skipped if p.position is not None})

    @property
    def n_excluded_no_gold(self) -> int:
        """Questions left out because their gold is null, empty, blank or an empty list."""
        return len(self.excluded_no_gold)

    @property
    def n_missing_predictions(self) -> int:
        """Scored records whose prediction is null, NaN or Infinity (each scored 0)."""
        return sum(1 for r in self.records if r.prediction_missing)

    @property
    def stored_judge(self) -> dict[str, Any] | None:
        """Stored J: mean, majority vote, per-run J (:func:`~.verdicts.stored_judge_detail`)."""
        return stored_judge_detail(self.records, self.judge_field)


def read_json_or_jsonl(path: Path) -> Any:
    """Parse a file as JSON, or else as JSON Lines (see :func:`read_results_file`).

    Raises:
        DataValidationError: if the file is missing, unreadable, or neither format.
    """
    return read_results_file(path).obj


def _hint(
    problems: list[RecordProblem], raw_items: list[RawItem], layout: Layout, total: int
) -> str:
    """Advice when a problem hits every record: usually a wrong field map or format."""
    invalid = {p.position for p in problems}
    if len(invalid) < total:
        return ""
    fields_hit = {p.field for p in problems}
    first = next((raw for _, _, raw in raw_items if isinstance(raw, dict)), None)
    keys = ", ".join(sorted(first)) if isinstance(first, dict) else "none"
    hint = f"Every record is invalid. The first record's keys are: {keys}."
    if fields_hit == {layout.fields.category}:
        hint += (
            " If the file has no categories, take them from LoCoMo's dataset with "
            "data.reference=<locomo10.json>, or from another file of the same questions with "
            "data.categories_from=<file>."
        )
    else:
        hint += (
            " Check data.format, or map them with data.format=fields data.fields.question=... etc."
        )
    return hint


def _categories_from(config: DataConfig, names: dict[int, str]) -> CategoryLookup:
    """(conversation id, question) -> category, from ``data.categories_from``.

    The other file is read with the same format settings. A key that maps to two different
    categories raises ``ValueError`` naming both when it is looked up (the record is then
    reported with that reason); a key absent from the other file gives ``None``.
    """
    other = load_results(
        str(config.categories_from),
        replace(
            config, categories_from=None, reference=None, limit=None, on_invalid=OnInvalid.skip
        ),
        names,
    )
    lookup: dict[tuple[str | None, str], set[int]] = {}
    for record in other.records:
        lookup.setdefault((record.conversation_id, record.question), set()).add(record.category)

    def category(conversation: str | None, question: str, gold: str | None) -> int | None:
        found = sorted(lookup.get((conversation, question), ()))
        if len(found) > 1:
            raise ValueError(
                f"data.categories_from ({config.categories_from}) gives this question "
                f"categories {' and '.join(map(str, found))}"
            )
        return found[0] if found else None

    return category


def _scale_verdicts(
    records: list[QARecord],
    verdicts: list[tuple[int, str, list[Any]]],
    path: str,
    field_name: str | None,
) -> list[QARecord]:
    """Put stored verdicts on 0-100 with one scale for the whole file (all verdicts together).

    Args:
        records: the kept records.
        verdicts: ``(index into records, where, verdicts as read)`` of records with verdicts.
        path: the file, for messages.
        field_name: the verdict field, for messages.

    Returns:
        The records with ``stored_judgments`` and ``stored_judge_score`` (their mean) set.

    Raises:
        DataValidationError: naming the file, the field and a record when the verdicts mix
            true/false with scores.
    """
    if not verdicts:
        return records
    flat = [(where, value) for _, where, values in verdicts for value in values]
    try:
        scale = stored_judge_scale([value for _, value in flat])
    except StoredScaleError as error:
        raise DataValidationError(
            [RecordProblem(path, flat[error.index][0], field_name, str(error))],
            "Stored verdicts are put on 0-100 with one scale decided from the whole file.",
        ) from None
    records = list(records)
    for index, _, values in verdicts:
        judgments = tuple(stored_judge_score(v) * scale for v in values)
        records[index] = replace(
            records[index],
            stored_judgments=judgments,
            stored_judge_score=sum(judgments) / len(judgments),
        )
    return records


def _raw_items(layout: Layout, path: Path) -> list[RawItem]:
    return list(layout_spec(layout.format).iter_raw(layout))


def load_results(
    path: str | Path,
    config: DataConfig | None = None,
    category_names: dict[int, str] | None = None,
) -> LoadedResults:
    """Read and validate a results file (one setting of a per-setting file).

    As :func:`load_setting`, with a file holding answers under several settings and no
    ``data.setting`` refused in one line naming the settings.

    Raises:
        DataValidationError: as :func:`load_setting`, and for several settings.
    """
    try:
        return load_setting(path, config, category_names)
    except SeveralSettings as error:
        raise file_error(path, str(error)) from None


def load_setting(
    path: str | Path,
    config: DataConfig | None = None,
    category_names: dict[int, str] | None = None,
) -> LoadedResults:
    """Read and validate a results file.

    Args:
        path: the file (absolute, or relative to the current directory).
        config: ``data`` settings: ``format`` (``auto`` detects every known layout,
            records inside a wrapper object and the stored-verdict field),
            ``records_key``, ``prediction_key``, field map, ``on_invalid``,
            ``categories_from`` (another results file giving the category of each
            (conversation, question) when this file has none), ``reference`` (LoCoMo's
            dataset: every question is checked against it, and records without a
            category take its), ``limit``/``seed`` (stratified sample).
        category_names: display names keyed by id, used to parse category names.

    Returns:
        :class:`LoadedResults` with the valid records and what was skipped.

    Raises:
        DataValidationError: listing every problem (file, record, field), when the file
            cannot be read or detected, has no records, or has invalid records and
            ``on_invalid=error``; also when every record is invalid or has no gold, when a
            prediction is missing and ``on_missing_prediction=error`` (before any judge
            call), when stored verdicts mix true/false with scores, and when
            ``data.fields.judge_score`` is given for a layout that does not use it.
        SeveralSettings: the records hold answers under several settings and
            ``data.setting`` is not set (:mod:`.settings`).

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
    try:
        obj, setting = apply_setting(obj, config.records_key, config.setting)
    except SeveralSettings:
        raise
    except ValueError as error:
        raise file_error(path, str(error)) from None
    try:
        layout = detect_layout(obj, config)
        raw_items = _raw_items(layout, path)
    except ValueError as error:
        raise file_error(path, str(error)) from None
    if not raw_items:
        raise file_error(path, "contains no records")
    if parsed.lines is not None:  # JSON Lines: a record is named by its line, as editors show
        raw_items = [(parsed.relabel(where), conv, raw) for where, conv, raw in raw_items]

    reference = Reference(config.reference) if config.reference else None
    lookup: CategoryLookup | None = None
    source = "data.categories_from"
    if config.categories_from:
        lookup = _categories_from(config, names)
    elif reference is not None:
        m = layout.fields
        items = []
        for _, conversation, raw in raw_items:
            question = get_field(raw, m.question) if isinstance(raw, dict) else MISSING
            if isinstance(question, str):
                conv = get_field(raw, m.conversation_id)
                conv_id = str(conv) if conv not in (MISSING, None) else conversation
                items.append((conv_id, question, gold_text(get_field(raw, m.ground_truth))))
        reference.prepare(items)
        lookup, source = reference.category, f"data.reference ({reference.path})"
    builder = RecordBuilder(str(path), layout.fields, names, lookup, source)
    records: list[QARecord] = []
    problems: list[RecordProblem] = []
    excluded: list[RecordProblem] = []
    missing: list[RecordProblem] = []
    numbers: list[tuple[str, str, str]] = []
    verdicts: list[tuple[int, str, list[Any]]] = []
    stored_metrics: dict[str, dict[str, float]] = {}
    seen_ids: dict[str, str] = {}
    taken: set[str] = set()
    for position, (where, conversation_id, raw) in enumerate(raw_items):
        built = builder.build(raw, where, conversation_id, position)
        record, record_problems = built.record, built.problems
        if record is not None and record.question_id in seen_ids:
            record_problems = [
                RecordProblem(
                    str(path),
                    where,
                    layout.fields.question_id or "question_id",
                    f"duplicate question id {record.question_id!r} "
                    f"(first at {seen_ids[record.question_id]})",
                    position,
                )
            ]
            record = None
        if record is not None:
            seen_ids[record.question_id] = where
            if built.verdicts:
                verdicts.append((len(records), where, built.verdicts))
            records.append(record)
            if built.category_taken:
                taken.add(record.question_id)
            if built.stored_metrics:
                stored_metrics[record.question_id] = built.stored_metrics
            if built.missing_prediction is not None:
                missing.append(built.missing_prediction)
            numbers += built.numbers
        if built.no_gold is not None:
            excluded.append(built.no_gold)
        problems.extend(record_problems)

    if problems and (OnInvalid(config.on_invalid) == OnInvalid.error or not records):
        raise DataValidationError(problems, _hint(problems, raw_items, layout, len(raw_items)))
    if not records:
        raise DataValidationError(
            excluded or [RecordProblem(str(path), "", None, "no valid records")],
            "No question has a gold answer: nothing can be scored." if excluded else "",
        )
    if missing and OnMissingPrediction(config.on_missing_prediction) == OnMissingPrediction.error:
        raise DataValidationError(
            missing,
            (f"{len(missing)} predictions are" if len(missing) > 1 else "1 prediction is")
            + " missing (null, NaN or Infinity) and "
            "data.on_missing_prediction=error; fix the file, or set "
            "data.on_missing_prediction=zero to score them 0.",
        )
    records = _scale_verdicts(records, verdicts, str(path), layout.fields.judge_score)
    _log_dropped(path, problems, excluded, missing)
    reference_check = reference.check(records, taken) if reference is not None else None
    question_set = detect_question_set(records)  # of the file, before any data.limit sample
    subset = None
    if config.limit is not None:
        try:
            records, subset = stratified_sample(records, int(config.limit), int(config.seed))
        except ValueError as error:
            raise file_error(path, str(error)) from None
    return LoadedResults(
        records=records,
        path=path,
        sha256=digest,
        format=layout.format,
        skipped=problems,
        prediction_key=layout.prediction_key,
        excluded_no_gold=excluded,
        missing_predictions=missing,
        numeric_answers=numbers,
        records_key=layout.records_key,
        records_partitions=layout.partitions,
        judge_field=layout.judge_field,
        file_aggregates=file_aggregates(obj, layout.records_key),
        judge_stated=stated_judge(obj, layout.records_key),
        question_set=question_set,
        reference=reference_check,
        subset=subset,
        sources=[(path, digest)],
        stored_metrics=stored_metrics,
        setting=setting,
    )


def _log_dropped(
    path: Path,
    problems: list[RecordProblem],
    excluded: list[RecordProblem],
    missing: list[RecordProblem],
) -> None:
    if problems:
        log.warning(
            "%s: skipped %s (data.on_invalid=skip)",
            path,
            counted(len({p.position for p in problems}), "invalid record"),
        )
    if excluded:
        log.warning(
            "%s: excluded %s with no gold answer (null, empty or blank), e.g. %s",
            path,
            counted(len(excluded), "question"),
            excluded[0].where,
        )
    if missing:
        log.warning(
            "%s: %s missing (null, NaN or Infinity), each scored 0, e.g. %s "
            "(data.on_missing_prediction=zero)",
            path,
            counted(len(missing), "prediction"),
            missing[0].where,
        )
