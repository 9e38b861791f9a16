"""Recover per-question stored verdicts of runs whose ``scores.jsonl`` lacks them.

Runs written before ``scores.jsonl`` carried ``stored_judge_score`` only have stored J
aggregated in ``summary.json``. The verdicts are read again from the run's input file with
the run's own ``data`` settings, after checking that the file's sha256 is the one the run
recorded; rows are joined on ``question_id``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from locomo_exp.compare.run_data import RunData
from locomo_exp.results.words import counted

logger = logging.getLogger(__name__)


def _data_config(data: dict[str, Any]) -> Any:
    from omegaconf import OmegaConf

    from locomo_exp.config import DataConfig

    schema = OmegaConf.structured(DataConfig)
    known = {k: v for k, v in data.items() if k in DataConfig.__dataclass_fields__}
    return OmegaConf.to_object(OmegaConf.merge(schema, known))


def recover_stored_judge(run: RunData) -> tuple[list[float | None] | None, str]:
    """Per-row stored J (0-100) of a run, read again from its input file.

    Args:
        run: the loaded run (``summary["input"]`` gives the file and its sha256,
            ``config["data"]`` the reading settings).

    Returns:
        ``(values aligned with run.rows, note)``; values ``None`` (with the reason in the
        note) when the input file is gone, changed (sha256 differs) or cannot be read.
    """
    info = run.summary.get("input") or {}
    path = info.get("path")
    if not path:
        return None, "stored J: summary.json names no input file"
    source = Path(path)
    if not source.is_file():
        return None, f"stored J: input file {source} not found; stored J not compared"
    try:
        from locomo_exp.data import load_results

        loaded = load_results(source, _data_config(dict(run.config.get("data") or {})), None)
    except Exception as exc:  # any loader failure: compare the other metrics
        logger.warning("stored J of %s not recovered: %s", run.path, exc)
        return None, f"stored J: {source} could not be read again ({exc}); stored J not compared"
    expected = info.get("sha256")
    if expected and getattr(loaded, "sha256", None) != expected:
        return (
            None,
            f"stored J: {source} changed since the run (sha256 differs); stored J not compared",
        )
    by_id = {r.question_id: r.stored_judge_score for r in loaded.records}
    values = [by_id.get(str(row.get("question_id"))) for row in run.rows]
    found = sum(v is not None for v in values)
    logger.info("stored J of %s recovered from %s for %d questions", run.path, source, found)
    found_text = counted(found, "question")
    return values, f"stored J: read again from {source.name} (sha256 checked) for {found_text}"
