"""mem0's memory-benchmarks BEAM layout (mem0ai/memory-benchmarks, ``benchmarks/beam/run.py``).

One object ``{metadata: {eval_type: "beam", ...}, metrics_by_cutoff, evaluations: [...]}``.

Each row of ``evaluations`` holds the question, its rubric and, under
``cutoff_results.<cutoff>``, the generated answer and each rubric item's stored verdict
(``nugget_scores: [{nugget, score, reason}]``). Any tier (``chat_size``) and any cutoff key
read the same way; the harness's own aggregate (``metrics_by_cutoff``) is never used: every
figure is computed from the rows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.beam.abilities import ABILITIES
from locomo_exp.benchmarks.beam.rows import BeamInput, BeamQuestion
from locomo_exp.data.input_file import DataValidationError, ParsedFile, RecordProblem

LAYOUT = "mem0-memory-benchmarks"
"""The layout's name in every output."""

FIX_HINT = "Fix the file: a BEAM run scores every question."
"""The advice after a bad record (``data.on_invalid=skip`` does not apply to BEAM)."""

_POSITION = re.compile(r"_q(\d+)_")


def looks_like_mem0_beam(obj: Any) -> bool:
    """Whether a parsed file is mem0's BEAM layout (``metadata.eval_type == "beam"``, rows)."""
    if not isinstance(obj, Mapping):
        return False
    meta = obj.get("metadata")
    return (
        isinstance(meta, Mapping)
        and str(meta.get("eval_type", "")).lower() == "beam"
        and isinstance(obj.get("evaluations"), list)
    )


def _settings(rows: list[Any], meta: Mapping[str, Any]) -> list[str]:
    """The cutoff keys, in the metadata's order, then any others the rows hold."""
    listed = [str(k) for k in meta.get("top_k_cutoffs") or [] if isinstance(k, str)]
    seen = list(dict.fromkeys(listed))
    for row in rows:
        results = row.get("cutoff_results") if isinstance(row, Mapping) else None
        if isinstance(results, Mapping):
            seen.extend(k for k in results if k not in seen)
    return seen


def choose_setting(settings: list[str], asked: str | None, path: str) -> str:
    """The cutoff to score.

    ``data.setting`` when given (``top_200`` or ``cutoff_results.top_200``), else the file's
    only one, else its first listed.

    Raises:
        DataValidationError: the asked cutoff is not in the file, or the file has none.
    """
    if asked:
        key = asked.removeprefix("cutoff_results.")
        if key not in settings:
            raise DataValidationError([RecordProblem(
                path, "", "cutoff_results",
                f"data.setting={asked}: no such cutoff; the file has "
                f"{', '.join(settings) or 'none'}",
            )])
        return key
    if not settings:
        raise DataValidationError([RecordProblem(
            path, "[0]", "cutoff_results", "no cutoff results: nothing to score")])
    return settings[0]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _row(row: Any, index: int, setting: str, path: str) -> BeamQuestion:
    """One row, checked; the first problem raises with file, record and field."""

    def bad(field: str, message: str) -> DataValidationError:
        return DataValidationError([RecordProblem(path, f"[{index}]", field, message, index)],
                                   hint=FIX_HINT)

    if not isinstance(row, Mapping):
        raise bad("", f"expected an object, got {type(row).__name__}")
    ability = row.get("question_type")
    if ability not in ABILITIES:
        raise bad("question_type", f"{ability!r} is not one of BEAM's ten abilities")
    question_id = row.get("question_id")
    if not isinstance(question_id, str) or not question_id:
        raise bad("question_id", "missing or not text")
    rubric = row.get("rubric")
    if not isinstance(rubric, list) or not rubric or not all(isinstance(r, str) for r in rubric):
        raise bad("rubric", "expected a non-empty list of text items")
    chat_idx = row.get("conversation_idx")
    if isinstance(chat_idx, bool) or not isinstance(chat_idx, int):
        raise bad("conversation_idx", "missing or not an integer")
    result = (row.get("cutoff_results") or {}).get(setting)
    if not isinstance(result, Mapping):
        raise bad(f"cutoff_results.{setting}", "missing: every row needs the scored cutoff")
    answer = result.get("generated_answer")
    answer = "" if answer is None else answer
    if not isinstance(answer, str):
        raise bad(f"cutoff_results.{setting}.generated_answer", "not text")
    nuggets = result.get("nugget_scores")
    scores: tuple[float, ...] | None = None
    failed = not nuggets  # mem0: a question whose judging failed has no item verdicts
    if not failed:
        if not isinstance(nuggets, list) or len(nuggets) != len(rubric):
            count = len(nuggets) if isinstance(nuggets, list) else "no list"
            raise bad(f"cutoff_results.{setting}.nugget_scores",
                      f"{count} verdicts for {len(rubric)} rubric items")
        values = []
        for k, item in enumerate(nuggets):
            score = _number(item.get("score")) if isinstance(item, Mapping) else None
            if score is None or not 0.0 <= score <= 1.0:
                raise bad(f"cutoff_results.{setting}.nugget_scores[{k}].score",
                          "expected a number from 0 to 1")
            values.append(score)
        scores = tuple(values)
    match = _POSITION.search(question_id)
    chat_size = str(row.get("chat_size") or question_id.split("_", 1)[0])
    return BeamQuestion(
        question_id=question_id,
        chat=f"{chat_size}_{chat_idx}",
        ability=str(ability),
        position=int(match.group(1)) if match else index,
        question=str(row.get("question") or ""),
        rubric=tuple(rubric),
        answer=answer,
        difficulty=row.get("difficulty") if isinstance(row.get("difficulty"), str) else None,
        item_scores=scores,
        judge_failed=failed,
        stored_score=_number(result.get("score")),
    )


def read_mem0_beam(parsed: ParsedFile, setting: str | None = None) -> BeamInput:
    """Read a mem0 memory-benchmarks BEAM file.

    Args:
        parsed: the parsed file (:func:`locomo_exp.data.input_file.read_results_file`).
        setting: ``data.setting`` (a cutoff key), or ``None`` for the file's first.

    Returns:
        :class:`BeamInput` with one :class:`BeamQuestion` per row, the stored item verdicts
        and the judge named by ``metadata.judge_model``.

    Raises:
        DataValidationError: one line naming the file, the record and the field of the first
            bad row; or a duplicated ``question_id``.
    """
    path = str(parsed.path)
    obj = parsed.obj
    meta = obj.get("metadata") or {}
    rows = obj["evaluations"]
    if not rows:
        raise DataValidationError([RecordProblem(path, "", "evaluations", "no rows")])
    settings = _settings(rows, meta)
    chosen = choose_setting(settings, setting, path)
    questions = [_row(row, i, chosen, path) for i, row in enumerate(rows)]
    seen: dict[str, int] = {}
    for i, q in enumerate(questions):
        if q.question_id in seen:
            raise DataValidationError([RecordProblem(
                path, f"[{i}]", "question_id",
                f"{q.question_id!r} repeats record [{seen[q.question_id]}]", i)], hint=FIX_HINT)
        seen[q.question_id] = i
    system = {k: str(meta[k]) for k in ("project_name", "answerer_model", "provider",
                                        "timestamp") if meta.get(k) is not None}
    judge = meta.get("judge_model")
    return BeamInput(
        path=parsed.path,
        sha256=parsed.sha256,
        layout=LAYOUT,
        setting=chosen,
        questions=tuple(questions),
        stored_judge=str(judge) if judge else None,
        system=system,
        other_settings=tuple(s for s in settings if s != chosen),
    )


__all__ = ["LAYOUT", "choose_setting", "looks_like_mem0_beam", "read_mem0_beam"]
