"""Which BEAM layout a file is, and reading it: the only place that knows every layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.beam.mem0_layout import looks_like_mem0_beam, read_mem0_beam
from locomo_exp.benchmarks.beam.rows import BeamInput
from locomo_exp.data.input_file import check_regular_file, read_results_file

PEEK_BYTES = 1 << 16
"""Bytes of ``data.path`` looked at before parsing it (detection stays cheap)."""

PEEK_MARKERS = (b'"beam"', b'"rubric"')
"""A BEAM file names its ``eval_type`` or its rubrics near the start."""


def looks_like_beam(obj: Any) -> bool:
    """Whether a parsed file is one of BEAM's layouts."""
    return looks_like_mem0_beam(obj)


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


def read_beam(path: Path, *, setting: str | None = None) -> BeamInput:
    """Read a BEAM answers file in any supported layout.

    Args:
        path: the answers file.
        setting: ``data.setting`` (mem0's cutoff key), or ``None``.

    Returns:
        The checked :class:`BeamInput`.

    Raises:
        DataValidationError: the file is unreadable, not a BEAM layout, or a record is bad
            (one line naming the file, the record and the field).
    """
    from locomo_exp.data.input_file import DataValidationError, RecordProblem

    parsed = read_results_file(path)
    if looks_like_mem0_beam(parsed.obj):
        return read_mem0_beam(parsed, setting)
    raise DataValidationError([RecordProblem(
        str(parsed.path), "", None,
        "not a BEAM answers file (mem0's {metadata: {eval_type: beam}, evaluations})")])


__all__ = ["PEEK_BYTES", "looks_like_beam", "peek_is_beam", "read_beam"]
