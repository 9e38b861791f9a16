"""The BEAM authors' own layout: a chat's probing-questions file and an answers file in its order.

BEAM @ b2a3ee8: each chat's ``probing_questions/probing_questions.json`` is one object with
the ten ability keys, each a list of question objects (``question``, ``difficulty``,
``rubric`` -- a list of strings -- and an ability-specific gold field). The authors'
pipeline writes a chat's answers ability by ability in the same order, each with
``question`` and ``llm_response``, and its scorer finds a question's rubric by position
(``data[ability][index]``), so the order is checked here question by question.

The answers are ``data.path``; the probing file is ``data.reference`` (or a folder holding
probing files: the one whose questions equal the answers' is used).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.beam.abilities import ABILITIES
from locomo_exp.benchmarks.beam.rows import BeamInput, BeamQuestion
from locomo_exp.data.input_file import (
    DataValidationError,
    ParsedFile,
    RecordProblem,
    read_results_file,
)

LAYOUT = "beam-authors"
"""The layout's name in every output."""

PROBING_NAME = "probing_questions.json"
"""The authors' name of a chat's questions file (a folder reference is searched for it)."""

FIX_HINT = "Fix the file: a BEAM run scores every question."

_CHAT_PATH = re.compile(r"(?:^|/)(\d+[KM])/(\d+)/probing_questions/[^/]+$")


def _ability_lists(obj: Any) -> bool:
    return (
        isinstance(obj, Mapping) and bool(obj)
        and all(k in ABILITIES and isinstance(v, list) for k, v in obj.items())
    )


def looks_like_authors_answers(obj: Any) -> bool:
    """Whether a parsed file is an answers file of the authors' layout (``llm_response``)."""
    return _ability_lists(obj) and any(
        isinstance(q, Mapping) and "llm_response" in q for v in obj.values() for q in v
    )


def looks_like_probing_questions(obj: Any) -> bool:
    """Whether a parsed file is a probing-questions file (ability lists with rubrics)."""
    return _ability_lists(obj) and not looks_like_authors_answers(obj) and any(
        isinstance(q, Mapping) and "rubric" in q for v in obj.values() for q in v
    )


def _problem(path: Path, where: str, field: str | None, message: str) -> DataValidationError:
    return DataValidationError([RecordProblem(str(path), where, field, message)], hint=FIX_HINT)


def _read_probing(path: Path) -> dict[str, list[Mapping[str, Any]]]:
    parsed = read_results_file(path, what="reference file")
    if not looks_like_probing_questions(parsed.obj):
        raise _problem(path, "", None, "not a BEAM probing-questions file (ability keys, each a "
                                       "list of questions with a rubric)")
    for ability, questions in parsed.obj.items():
        for i, q in enumerate(questions):
            where = f'["{ability}"][{i}]'
            if not isinstance(q, Mapping) or not isinstance(q.get("question"), str):
                raise _problem(path, where, "question", "missing or not text")
            rubric = q.get("rubric")
            if (not isinstance(rubric, list) or not rubric
                    or not all(isinstance(r, str) for r in rubric)):
                raise _problem(path, where, "rubric", "expected a non-empty list of text items")
    return dict(parsed.obj)


def _candidates(reference: Path) -> list[Path]:
    if reference.is_dir():
        found = sorted(reference.rglob(PROBING_NAME)) or sorted(reference.rglob("*.json"))
        if not found:
            raise _problem(reference, "", None, f"no {PROBING_NAME} in this folder")
        return found
    return [reference]


def _questions(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(a, str(q.get("question"))) for a, qs in obj.items() for q in qs
            if isinstance(q, Mapping)]


def _chat_label(reference: Path) -> tuple[str, str]:
    """``(tier, mem0 chat index)`` from ``chats/<tier>/<k>/probing_questions/...``: k - 1."""
    match = _CHAT_PATH.search(reference.as_posix())
    if match:
        return match.group(1), str(int(match.group(2)) - 1)
    return "chat", reference.parent.name or reference.stem


def _check_answers(answers: ParsedFile) -> None:
    for ability, rows in answers.obj.items():
        for i, row in enumerate(rows):
            where = f'["{ability}"][{i}]'
            if not isinstance(row, Mapping):
                raise _problem(answers.path, where, None, "expected an object")
            if not isinstance(row.get("question"), str):
                raise _problem(answers.path, where, "question", "missing or not text")
            if not isinstance(row.get("llm_response"), str):
                raise _problem(answers.path, where, "llm_response", "missing or not text")


def _match(answers: ParsedFile, probing: Mapping[str, Any], ref: Path) -> None:
    """The answers keep the probing file's abilities and order (rubrics go by position)."""
    for ability, rows in answers.obj.items():
        expected = probing.get(ability)
        if expected is None:
            raise _problem(answers.path, f'["{ability}"]', None,
                           f"ability not in the reference {ref}")
        if len(rows) != len(expected):
            raise _problem(answers.path, f'["{ability}"]', None,
                           f"{len(rows)} answers for {len(expected)} questions in {ref}")
        for i, (row, q) in enumerate(zip(rows, expected, strict=True)):
            if row["question"].strip() != str(q["question"]).strip():
                raise _problem(answers.path, f'["{ability}"][{i}]', "question",
                               f"differs from question {i} of {ability} in {ref} (the authors' "
                               "scorer finds rubrics by position: keep the probing file's order)")
    missing = [a for a in probing if a not in answers.obj]
    if missing:
        raise _problem(answers.path, "", None, f"no answers for {', '.join(missing)} of {ref}")


def read_authors_answers(answers: ParsedFile, reference: Path) -> BeamInput:
    """Read an answers file of the authors' layout against its chat's probing file.

    Args:
        answers: the parsed answers file (``{ability: [{question, llm_response}, ...]}``).
        reference: ``data.reference``: the chat's probing file, or a folder of them (the one
            whose questions equal the answers' is used).

    Returns:
        :class:`BeamInput` without stored verdicts (a judge must score the items).

    Raises:
        DataValidationError: one line naming the file, the record (``["ability"][i]``) and
            the field: a bad answer or question, or answers out of the probing file's order.
    """
    _check_answers(answers)
    candidates = _candidates(reference)
    chosen = candidates[0]
    if len(candidates) > 1:
        wanted = _questions(answers.obj)
        same = [c for c in candidates if _questions(_read_probing(c)) == wanted]
        if not same:
            raise _problem(answers.path, "", None,
                           f"no probing file under {reference} has these questions")
        chosen = same[0]
    probing = _read_probing(chosen)
    _match(answers, probing, chosen)
    tier, chat = _chat_label(chosen)
    questions = []
    position = 0
    for ability, rows in probing.items():
        for i, q in enumerate(rows):
            if ability in answers.obj:
                questions.append(BeamQuestion(
                    question_id=f"{tier}_{chat}_q{position}_{ability}",
                    chat=f"{tier}_{chat}",
                    ability=ability,
                    position=position,
                    question=str(q["question"]),
                    rubric=tuple(q["rubric"]),
                    answer=str(answers.obj[ability][i]["llm_response"]),
                    difficulty=q.get("difficulty") if isinstance(q.get("difficulty"), str)
                    else None,
                ))
            position += 1
    return BeamInput(path=answers.path, sha256=answers.sha256, layout=LAYOUT, setting=None,
                     questions=tuple(questions), reference=(chosen.resolve(),))


__all__ = [
    "LAYOUT",
    "PROBING_NAME",
    "looks_like_authors_answers",
    "looks_like_probing_questions",
    "read_authors_answers",
]
