"""LoCoMo's own output (snap-research/LoCoMo ``task_eval``): a list of ``{sample_id, qa}``.

Each QA item holds the gold fields (``question, answer, category, evidence``,
``adversarial_answer`` for category 5) plus the system's ``<name>_prediction``, and, when
LoCoMo's scripts ran a judge, ``<name>_llm`` (1/0) -- read as the stored verdict with no
option. ``<name>_f1`` is LoCoMo's own per-question F1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from locomo_exp.config import FieldMap
from locomo_exp.data.layout_spec import Candidate, Layout, LayoutSpec
from locomo_exp.data.raw import MISSING, RawItem

PREDICTION_SUFFIX = "_prediction"
JUDGE_SUFFIX = "_llm"


def matches(obj: Any) -> bool:
    """Whether a parsed file is a list of samples ``{sample_id, qa: [...]}``."""
    return (
        isinstance(obj, list)
        and bool(obj)
        and isinstance(obj[0], dict)
        and isinstance(obj[0].get("qa"), list)
    )


def _qa_keys(samples: list[Any]) -> set[str]:
    keys: set[str] = set()
    for sample in samples:
        if isinstance(sample, dict):
            for qa in sample.get("qa") or []:
                if isinstance(qa, dict):
                    keys.update(qa)
    return keys


def detect_prediction_key(samples: list[Any]) -> str:
    """Find the single ``<name>_prediction`` key of a LoCoMo-format file.

    Args:
        samples: the parsed list of samples.

    Returns:
        The key, e.g. ``honcho_prediction``.

    Raises:
        ValueError: if none or several such keys exist (set ``data.prediction_key``).
    """
    keys = {k for k in _qa_keys(samples) if k.endswith(PREDICTION_SUFFIX)}
    if not keys:
        raise ValueError(
            "the QA items carry no '<name>_prediction' field: this looks like LoCoMo's dataset "
            "itself (questions and golds, no system answers); score a results file that holds "
            "your system's answers"
        )
    if len(keys) != 1:
        found = ", ".join(sorted(keys))
        raise ValueError(
            f"expected exactly one '<name>_prediction' key in the QA items, found {found}; "
            "set data.prediction_key"
        )
    return keys.pop()


def detect_judge_key(samples: list[Any], prediction_key: str) -> str | None:
    """The ``<name>_llm`` verdict key that goes with ``<name>_prediction``, if present.

    Args:
        samples: the parsed list of samples.
        prediction_key: e.g. ``mysys_prediction``.

    Returns:
        e.g. ``mysys_llm``, or ``None`` when the QA items carry no such key.
    """
    name = prediction_key.removesuffix(PREDICTION_SUFFIX)
    key = f"{name}{JUDGE_SUFFIX}"
    return key if key in _qa_keys(samples) else None


def field_map(prediction_key: str, judge_key: str | None) -> FieldMap:
    """Field names of LoCoMo's QA items with the detected prediction and verdict keys."""
    return FieldMap(
        question="question",
        ground_truth="answer",
        prediction=prediction_key,
        category="category",
        evidence="evidence",
        adversarial_answer="adversarial_answer",
        judge_score=judge_key,
    )


def iter_raw(obj: Any) -> Iterator[RawItem]:
    """Yield ``(where, sample_id, qa item)`` for every QA item of every sample.

    Raises:
        ValueError: when ``obj`` is not a list.
    """
    if not isinstance(obj, list):
        raise ValueError("the locomo format is a JSON list of samples {sample_id, qa}")
    for s_index, sample in enumerate(obj):
        if not isinstance(sample, dict) or not isinstance(sample.get("qa"), list):
            yield f"[{s_index}]", None, MISSING
            continue
        sample_id = str(sample.get("sample_id", s_index))
        for q_index, qa in enumerate(sample["qa"]):
            yield f"[{s_index}].qa[{q_index}] (sample_id={sample_id})", sample_id, qa


def _build(candidate: Candidate) -> Layout:
    prediction_key = candidate.config.prediction_key or detect_prediction_key(candidate.obj)
    judge_key = detect_judge_key(candidate.obj, prediction_key)
    return Layout(
        "locomo",
        candidate.obj,
        None,
        field_map(prediction_key, judge_key),
        prediction_key,
        judge_key,
    )


LAYOUT = LayoutSpec(
    name="locomo",
    scope="file",
    looks_for="a LoCoMo list of {sample_id, qa}",
    matches=lambda candidate: matches(candidate.obj),
    build=_build,
    iter_raw=lambda layout: iter_raw(layout.records),
)
"""The ``locomo`` layout (LoCoMo's own output)."""
