"""What the data side adds to ``summary.json``: the input's description and stored J detail."""

from __future__ import annotations

from typing import Any

from locomo_exp.data.judge_source import stored_judge_source
from locomo_exp.data.layouts import LAYOUTS
from locomo_exp.data.read_file import LoadedResults


def _own_judge(layout: str) -> tuple[str, str] | None:
    """The judge a published source names for the layout's verdict field (none for pools)."""
    return next((spec.own_judge for spec in LAYOUTS if spec.name == layout), None)


def input_info(loaded: LoadedResults) -> dict[str, Any]:
    """``summary["input"]``: where the answers came from and how they were read.

    Args:
        loaded: the loaded file(s).

    Returns:
        path, name, sha256, format, prediction key, counts of skipped / missing /
        excluded records (with their messages), and: ``records_key`` (wrapper),
        ``records_partitions`` (other lists of the same records, not read again),
        ``setting`` (the setting read from a per-setting file, with every setting),
        ``judge_field`` (stored verdicts), ``stored_judge_source`` (what is known of their
        judge, :func:`~.judge_source.stored_judge_source`), ``file_aggregates`` (the wrapper's own
        numbers, as given), ``question_set`` (``{"name", "n_questions", "extra",
        "description"}``), ``reference`` (``data.reference`` check), ``subset``
        (``data.limit`` sample), ``sources`` (every file read, with its sha256) and, when
        golds or predictions were numbers, ``numeric_answers`` (``{"n", "examples"}``:
        ``["12.0 -> 12", "2019"]``, docs/formats.md).
    """
    question_set = loaded.question_set
    return {
        "path": str(loaded.path),
        "name": loaded.path.name,
        "sha256": loaded.sha256,
        "format": loaded.format,
        "prediction_key": loaded.prediction_key,
        "n_records": len(loaded.records),
        "n_skipped_records": loaded.n_skipped_records,
        "skipped": [str(p) for p in loaded.skipped],
        "n_missing_predictions": loaded.n_missing_predictions,
        "missing_predictions": [str(p) for p in loaded.missing_predictions],
        "n_excluded_no_gold": loaded.n_excluded_no_gold,
        "excluded_no_gold": [str(p) for p in loaded.excluded_no_gold],
        "records_key": loaded.records_key,
        "records_partitions": list(loaded.records_partitions),
        "setting": loaded.setting.to_dict() if loaded.setting is not None else None,
        "judge_field": loaded.judge_field,
        "stored_judge_source": stored_judge_source(
            loaded.judge_field, loaded.judge_stated, _own_judge(loaded.format)
        ),
        "file_aggregates": dict(loaded.file_aggregates),
        "question_set": None
        if question_set is None
        else {
            "name": question_set.name,
            "n_questions": question_set.n_questions,
            "extra": list(question_set.extra),
            "description": question_set.describe(),
        },
        "reference": loaded.reference.to_dict() if loaded.reference is not None else None,
        "subset": loaded.subset,
        "sources": [{"path": str(path), "sha256": digest} for path, digest in loaded.sources],
        **_numbers(loaded.numeric_answers),
    }


NUMBER_EXAMPLES = 3
"""Distinct number conversions shown as examples (``12.0 -> 12``)."""


def _numbers(numbers: list[tuple[str, str, str]]) -> dict[str, Any]:
    """``{"numeric_answers": {"n", "n_gold", "n_prediction", "examples"}}``, else ``{}``.

    ``numbers``: ``(as in the file, as read, "gold" or "prediction")``. Examples are
    distinct, those whose text differs from the file's first (``12.0 -> 12`` before
    ``2019``, an integer read as its digits).
    """
    if not numbers:
        return {}
    pairs = [(raw, text) for raw, text, _ in numbers]
    distinct = sorted(dict.fromkeys(pairs), key=lambda pair: pair[0] == pair[1])
    return {
        "numeric_answers": {
            "n": len(numbers),
            "n_gold": sum(role == "gold" for *_, role in numbers),
            "n_prediction": sum(role == "prediction" for *_, role in numbers),
            "examples": [
                text if raw == text else f"{raw} -> {text}"
                for raw, text in distinct[:NUMBER_EXAMPLES]
            ],
        }
    }


def stored_judge_section(loaded: LoadedResults) -> dict[str, Any] | None:
    """``summary["stored_judge_detail"]``: stored J as the file's authors compute it.

    Returns:
        ``None`` without stored verdicts; else :func:`~.verdicts.stored_judge_detail`
        (field, mean, majority vote, per-run J and mean ± std across runs, per category,
        0-100) plus ``"across_runs"`` when the input is ``data.runs``.
    """
    detail = loaded.stored_judge
    across = loaded.across_runs
    if across is not None and all(row["mean"] is None for row in across.values()):
        across = None  # runs without stored verdicts
    if detail is None and across is None:
        return None
    section = dict(detail or {"field": loaded.judge_field})
    if across is not None:
        section["across_runs"] = across
    return section
