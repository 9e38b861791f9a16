"""Reading stored LoCoMo-Plus runs: the authors' ``judged.json`` and kumiho's ``all_results.json``.

Both layouts hold one verdict per item, made by a judge before this tool saw the file
("stored J"); reading them calls no judge.

- ``authors``: a JSON list of ``{question_input, evidence, category, ground_truth,
  prediction, model, judge_label, judge_reason, judge_score}`` (the authors' pipeline). The
  judge is not named in the rows (their default is gpt-4o-mini); ``judge_reason`` holds the
  failed call's error text when the call failed. A ``judge_summary.json`` beside the file is
  the authors' own aggregate.
- ``kumiho``: a JSON list of ``{question_id, question_type: "cognitive/<relation>",
  ground_truth (the cue), prediction, judge_score (a bool), metadata: {base_conv_idx,
  judge_reason, ...}}`` (kumiho-benchmarks; Cognitive items only, its own binary judge, whose
  model the file does not record).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.locomo_plus.facts import (
    CATEGORIES,
    COGNITIVE,
    CONVERSATIONS,
    RELATIONS,
    is_api_error,
)
from locomo_exp.data.input_file import (
    DataValidationError,
    ParsedFile,
    RecordProblem,
    check_regular_file,
    read_results_file,
)

if TYPE_CHECKING:
    from locomo_exp.trust.plan import TrustPlan

AUTHORS = "authors"
KUMIHO = "kumiho"
LAYOUT_TITLES: dict[str, str] = {
    AUTHORS: "the authors' judged.json",
    KUMIHO: "kumiho-benchmarks all_results.json",
}
"""The stored-run layouts this package reads, and how reports name them."""

PEEK_BYTES = 1 << 16
"""Bytes looked at to detect a layout before any parse."""

AUTHORS_SUMMARY = "judge_summary.json"
"""The authors' own aggregate, read when it lies beside ``judged.json``."""


@dataclass(frozen=True)
class StoredRow:
    """One item of a stored run.

    Attributes:
        item_id: the file's id (kumiho's ``question_id``) or ``#<row index>``.
        category: ``multi-hop`` ... ``adversarial`` or ``Cognitive``.
        relation: the Cognitive relation type, ``None`` when not recorded or factual.
        conversation: LoCoMo conversation index, ``None`` when not recorded.
        question: the question or trigger query.
        evidence: the cue (Cognitive) or the evidence text as stored.
        ground_truth: the reference answer (``""`` when none).
        prediction: the system's reply.
        label: the stored label (``correct``/``wrong`` for a boolean verdict), as stored.
        reason: the stored judge reason (an error text for a failed call).
        api_error: the stored verdict is a failed call's error text.
    """

    item_id: str
    category: str
    relation: str | None
    conversation: int | None
    question: str
    evidence: str
    ground_truth: str
    prediction: str
    label: str
    reason: str
    api_error: bool


@dataclass
class StoredRun:
    """A stored run, read and checked.

    Attributes:
        path: the file.
        sha256: hash of its bytes.
        layout: :data:`AUTHORS` or :data:`KUMIHO`.
        rows: the items, in file order.
        judge: what the file records of its judge, in words.
        answer_models: the answering models the rows name (empty when not recorded).
        authors_summary: the authors' ``judge_summary.json`` beside the file, if any.
        trust_plan: a judged run's trust checks, planned before any call
            (:func:`locomo_exp.benchmarks.plugin_trust.plan_plugin_trust`), else ``None``.
    """

    path: Path
    sha256: str
    layout: str
    rows: list[StoredRow]
    judge: str
    answer_models: list[str] = field(default_factory=list)
    authors_summary: dict[str, Any] | None = None
    trust_plan: TrustPlan | None = None


def peek_layout(path: Path) -> str | None:
    """The stored-run layout of a file from its first bytes, or ``None``; never raises.

    Args:
        path: the candidate file.

    Returns:
        :data:`AUTHORS` when the head holds ``"question_input"`` and ``"judge_label"`` or
        ``"prediction"`` (an answers file: the authors' rows before judging),
        :data:`KUMIHO` when it holds ``"question_type"`` with a ``"cognitive/`` value,
        else ``None`` (also for an unreadable file).
    """
    try:
        check_regular_file(path)
        with path.open("rb") as handle:
            head = handle.read(PEEK_BYTES)
    except (ValueError, OSError):
        return None
    if b'"question_input"' in head and (b'"judge_label"' in head or b'"prediction"' in head):
        return AUTHORS
    if b'"question_type"' in head and b'"cognitive/' in head:
        return KUMIHO
    return None


def _bad(parsed: ParsedFile, index: int, name: str | None, message: str) -> RecordProblem:
    return RecordProblem(str(parsed.path), parsed.where(index), name, message, index)


def _text(raw: dict[str, Any], key: str) -> str:
    value = raw.get(key)
    return "" if value is None else str(value)


def _conversation(parsed: ParsedFile, i: int, value: Any, problems: list[RecordProblem]
                  ) -> tuple[bool, int | None]:
    if value is None:
        return True, None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < CONVERSATIONS:
        problems.append(_bad(parsed, i, "conversation", f"{value!r} is not a LoCoMo "
                             f"conversation index 0-{CONVERSATIONS - 1}"))
        return False, None
    return True, value


def _authors_row(parsed: ParsedFile, i: int, raw: Any, problems: list[RecordProblem],
                 judging: bool) -> StoredRow | None:
    if not isinstance(raw, dict):
        problems.append(_bad(parsed, i, None, "not an object"))
        return None
    category = raw.get("category")
    if category not in CATEGORIES:
        problems.append(_bad(parsed, i, "category",
                             f"{category!r} is not one of {', '.join(CATEGORIES)}"))
        return None
    label = raw.get("judge_label")
    if not judging and not isinstance(label, str):
        problems.append(_bad(parsed, i, "judge_label", "missing or not a string (an answers "
                             "file without verdicts is judged: add scorer=judge "
                             "benchmark=locomo_plus)"))
        return None
    if judging and not isinstance(raw.get("prediction"), str):
        problems.append(_bad(parsed, i, "prediction", "missing or not a string"))
        return None
    if judging and category == COGNITIVE and not _text(raw, "evidence").strip():
        problems.append(_bad(parsed, i, "evidence", "empty: a Cognitive item is judged "
                             "against its cue"))
        return None
    relation = raw.get("relation_type")
    if relation is not None and (category != COGNITIVE or relation not in RELATIONS):
        problems.append(_bad(parsed, i, "relation_type", f"{relation!r} is not one of "
                             f"{', '.join(RELATIONS)} on a Cognitive item"))
        return None
    ok, conv = _conversation(parsed, i, raw.get("conversation"), problems)
    if not ok:
        return None
    reason = _text(raw, "judge_reason")
    return StoredRow(
        item_id=_text(raw, "item_id") or f"#{i}", category=str(category),
        relation=None if relation is None else str(relation), conversation=conv,
        question=_text(raw, "question_input"), evidence=_text(raw, "evidence"),
        ground_truth=_text(raw, "ground_truth"), prediction=_text(raw, "prediction"),
        label=label if isinstance(label, str) else "", reason=reason,
        api_error=is_api_error(reason),
    )


def _kumiho_row(parsed: ParsedFile, i: int, raw: Any, problems: list[RecordProblem],
                judging: bool) -> StoredRow | None:
    if not isinstance(raw, dict):
        problems.append(_bad(parsed, i, None, "not an object"))
        return None
    qtype = str(raw.get("question_type", ""))
    relation = qtype.partition("/")[2]
    if not qtype.startswith("cognitive/") or relation not in RELATIONS:
        problems.append(_bad(parsed, i, "question_type", f"{qtype!r} is not cognitive/"
                             f"<{'|'.join(RELATIONS)}>"))
        return None
    verdict = raw.get("judge_score")
    if judging and not isinstance(raw.get("prediction"), str):
        problems.append(_bad(parsed, i, "prediction", "missing or not a string"))
        return None
    if not judging and not isinstance(verdict, bool):
        problems.append(_bad(parsed, i, "judge_score", f"{verdict!r} is not true or false"))
        return None
    found = raw.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    conv = meta.get("base_conv_idx")
    reason = "" if meta.get("judge_reason") is None else str(meta.get("judge_reason"))
    return StoredRow(
        item_id=_text(raw, "question_id") or f"#{i}", category=COGNITIVE, relation=relation,
        conversation=conv if isinstance(conv, int) and not isinstance(conv, bool) else None,
        question=_text(raw, "question"), evidence=_text(raw, "ground_truth"),
        ground_truth="", prediction=_text(raw, "prediction"),
        label="correct" if verdict else "wrong", reason=reason, api_error=is_api_error(reason),
    )


def _authors_summary(path: Path) -> dict[str, Any] | None:
    beside = path.with_name(AUTHORS_SUMMARY)
    if not beside.is_file():
        return None
    try:
        obj = read_results_file(beside, "authors' summary").obj
    except DataValidationError:
        return None
    if not isinstance(obj, dict):
        return None
    avg = obj.get("overall_avg")
    if not isinstance(avg, (int, float)) or not math.isfinite(avg):
        return None
    return {"path": str(beside), "overall_avg": float(avg),
            "total_samples": obj.get("total_samples"),
            "by_category": {str(k): v.get("avg") for k, v in
                            (obj.get("by_category") or {}).items() if isinstance(v, dict)}}


def read_stored_run(path: Path, *, judging: bool = False) -> StoredRun:
    """Read and check a stored LoCoMo-Plus run of either layout.

    Args:
        path: ``judged.json`` (authors) or ``all_results.json`` (kumiho), or an answers
            file of the authors' rows before judging.
        judging: the rows are to be judged now: stored verdicts are not needed (and are
            ignored), a ``prediction`` is; a Cognitive row needs its cue (``evidence``).

    Returns:
        :class:`StoredRun`.

    Raises:
        DataValidationError: not a stored LoCoMo-Plus run, or bad records (one line each:
            file, record, field).
    """
    layout = peek_layout(path)
    parsed = read_results_file(path)
    rows_raw = parsed.obj
    if layout is None or not isinstance(rows_raw, list) or not rows_raw:
        raise DataValidationError([RecordProblem(
            str(path), "", None, "not a stored LoCoMo-Plus run (a JSON list of the authors' "
            "judged.json rows or kumiho's all_results.json rows)")])
    reader = _authors_row if layout == AUTHORS else _kumiho_row
    problems: list[RecordProblem] = []
    rows = [row for i, raw in enumerate(rows_raw)
            if (row := reader(parsed, i, raw, problems, judging)) is not None]
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        if not problems and row.item_id in seen:
            problems.append(_bad(parsed, i, "item_id", f"{row.item_id!r} repeats record "
                                 f"{seen[row.item_id]}; each item needs its own id"))
        seen.setdefault(row.item_id, i)
    if problems:
        raise DataValidationError(problems, hint="Fix the file; no item was scored.")
    if layout == AUTHORS:
        models = sorted({str(r.get("model")) for r in rows_raw if r.get("model")})
        judge = "judge not named in the rows; the authors' default is gpt-4o-mini"
        summary = _authors_summary(path)
    else:
        models = []
        judge = "kumiho's own binary Cognitive judge; model not recorded in the file"
        summary = None
    return StoredRun(path=parsed.path, sha256=parsed.sha256, layout=layout, rows=rows,
                     judge=judge, answer_models=models, authors_summary=summary)

