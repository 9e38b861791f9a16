"""Which BEAM layout a file is, and reading it: the only place that knows every layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.beam.authors_layout import (
    looks_like_authors_answers,
    looks_like_probing_questions,
    read_authors_answers,
)
from locomo_exp.benchmarks.beam.mem0_layout import looks_like_mem0_beam, read_mem0_beam
from locomo_exp.benchmarks.beam.rows import BeamInput
from locomo_exp.data.input_file import check_regular_file, read_results_file

PEEK_BYTES = 1 << 16
"""Bytes of ``data.path`` looked at before parsing it (detection stays cheap)."""

PEEK_MARKERS = (b'"beam"', b'"rubric"', b'"llm_response"')
"""A BEAM file names its ``eval_type``, its rubrics or its answers near the start."""

NO_REFERENCE = (
    "{path}: answers in the BEAM authors' layout need their chat's questions: add "
    "data.reference=<probing_questions.json, or a folder of them>"
)


def looks_like_beam(obj: Any) -> bool:
    """Whether a parsed file is one of BEAM's layouts (a probing file too, to say how to use it)."""
    return (looks_like_mem0_beam(obj) or looks_like_authors_answers(obj)
            or looks_like_probing_questions(obj))


def peek_is_beam(path: Path) -> bool:
    """Whether ``path`` is a BEAM file: a cheap look at its first bytes, then a parse.

    Never raises: an unreadable file is not BEAM's (the LoCoMo job reports it).
    """
    try:
        check_regular_file(path)
        with path.open("rb") as handle:
            head = handle.read(PEEK_BYTES)
        if not any(marker in head for marker in PEEK_MARKERS):
            return False
        return looks_like_beam(read_results_file(path).obj)
    except (ValueError, OSError):
        return False


def read_beam(path: Path, *, setting: str | None = None, reference: Path | None = None
              ) -> BeamInput:
    """Read a BEAM answers file in any supported layout.

    Args:
        path: the answers file.
        setting: ``data.setting`` (mem0's cutoff key), or ``None``.
        reference: ``data.reference`` (the authors' probing file or a folder of them), or
            ``None``; needed by the authors' layout only.

    Returns:
        The checked :class:`BeamInput`.

    Raises:
        DataValidationError: the file is unreadable, not a BEAM layout, or a record is bad
            (one line naming the file, the record and the field).
        ValueError: authors' answers without ``data.reference``, a ``data.reference`` for
            mem0's layout (which it would not read), or a probing file given as the answers.
    """
    from locomo_exp.data.input_file import DataValidationError, RecordProblem

    parsed = read_results_file(path)
    if looks_like_mem0_beam(parsed.obj):
        if reference is not None:  # never silently ignored
            raise ValueError(
                f"data.reference={reference}: not read for {parsed.path}, whose rows carry "
                "their questions and rubrics (mem0's layout); drop the setting")
        return read_mem0_beam(parsed, setting)
    if looks_like_authors_answers(parsed.obj):
        if reference is None:
            raise ValueError(NO_REFERENCE.format(path=parsed.path))
        return read_authors_answers(parsed, reference)
    if looks_like_probing_questions(parsed.obj):
        raise ValueError(
            f"{parsed.path} is a BEAM probing-questions file (no answers): give it as "
            "data.reference=<it> and the answers file as data.path")
    raise DataValidationError([RecordProblem(
        str(parsed.path), "", None,
        "not a BEAM answers file (mem0's {metadata: {eval_type: beam}, evaluations}, or the "
        "authors' {ability: [{question, llm_response}]})")])


__all__ = ["PEEK_BYTES", "looks_like_beam", "peek_is_beam", "read_beam"]
