"""Whether a job is a LongMemEval one, from its config and a look at its ``data.path``.

Used by the command line, the sweep's plan (before any job runs) and the LongMemEval job
(:mod:`locomo_exp.benchmarks.longmemeval.job`); it reads no more than it must.
"""

from __future__ import annotations

from pathlib import Path

from locomo_exp.benchmarks.file_plugin import single_data_file
from locomo_exp.benchmarks.longmemeval.answers import looks_like_lme
from locomo_exp.config import ExperimentConfig
from locomo_exp.data.input_file import DataValidationError, check_regular_file, read_results_file

FORMAT = "longmemeval"
"""The ``data.format`` value that names LongMemEval's answer rows (``benchmark=longmemeval``)."""

PEEK_BYTES = 1 << 16
"""Bytes of ``data.path`` looked at for a ``hypothesis`` field before parsing it."""


def is_longmemeval(cfg: ExperimentConfig, start_dir: Path) -> bool:
    """Whether the job is a LongMemEval one.

    ``benchmark=longmemeval`` (``data.format=longmemeval``) says so; with ``data.format=auto``
    a single ``data.path`` whose rows are ``{question_id, hypothesis, ...}`` is one (no
    LoCoMo layout has a ``hypothesis`` field).

    Args:
        cfg: the typed config.
        start_dir: the directory relative paths are resolved against.

    Returns:
        True for a LongMemEval job; False otherwise, and whenever the file cannot be read
        (the LoCoMo job then reports the problem in its own words).
    """
    from locomo_exp.data.layouts import AUTO

    fmt = str(cfg.data.format)
    if fmt == FORMAT:
        return True
    if fmt != AUTO:
        return False
    path = single_data_file(cfg, start_dir)  # never raises: a glob error is no file
    return path is not None and is_lme_file(path)


def is_lme_file(path: Path) -> bool:
    """Whether ``path`` holds LongMemEval answer rows (``{question_id, hypothesis, ...}``).

    A look at its first :data:`PEEK_BYTES` for ``hypothesis`` first (LoCoMo runs parse nothing
    twice), then the parsed rows. Never raises: an unreadable or malformed file is not one.
    """
    try:
        check_regular_file(path)
        with path.open("rb") as handle:
            if b"hypothesis" not in handle.read(PEEK_BYTES):
                return False
        return looks_like_lme(read_results_file(path).obj)
    except (DataValidationError, ValueError, OSError):
        return False

__all__ = ["FORMAT", "PEEK_BYTES", "is_lme_file", "is_longmemeval"]
