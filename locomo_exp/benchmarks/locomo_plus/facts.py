"""LoCoMo-Plus's facts: its category names, the Cognitive relation types, the label map.

LoCoMo-Plus (Li et al., arXiv 2602.10715) is LoCoMo's 1,986 questions plus the 401
"Cognitive" items. Its scorer names categories by string; the five LoCoMo ones are LoCoMo's
ids 1-5 (:mod:`locomo_exp.benchmark.locomo`), with id 3 called ``common-sense``. Facts are
from the authors' ``llm_as_judge.py`` as described in ``../shared/data/locomo_plus/README.md``.
"""

from __future__ import annotations

from locomo_exp.benchmark.locomo import LOCOMO10_CATEGORY_SIZES

NAME = "locomo_plus"
"""The plug-in's registry key and ``summary.json``'s ``benchmark``."""

TITLE = "LoCoMo-Plus"
"""The benchmark's name as reports print it."""

COGNITIVE = "Cognitive"
"""The category string of the Cognitive items (the authors' spelling)."""

CATEGORY_OF_ID: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "common-sense",
    4: "single-hop",
    5: "adversarial",
}
"""The authors' category string of each LoCoMo category id."""

FACTUAL: tuple[str, ...] = tuple(CATEGORY_OF_ID.values())
"""The five LoCoMo ("factual") categories, in LoCoMo's id order."""

CATEGORIES: tuple[str, ...] = (*FACTUAL, COGNITIVE)
"""Every category of the unified set, factual first."""

FACTUAL_SIZES: dict[str, int] = {CATEGORY_OF_ID[c]: n for c, n in LOCOMO10_CATEGORY_SIZES.items()}
"""Questions per factual category in ``locomo10.json`` (282, 321, 96, 841, 446)."""

RELATIONS: tuple[str, ...] = ("causal", "state", "goal", "value")
"""The Cognitive items' relation types (``relation_type``)."""

COGNITIVE_SIZES: dict[str, int] = {"causal": 101, "state": 100, "goal": 100, "value": 100}
"""Cognitive items per relation type in ``locomo_plus.json`` (401 in all)."""

UNIFIED_SIZE = sum(FACTUAL_SIZES.values()) + sum(COGNITIVE_SIZES.values())
"""Items of the unified evaluation set: 1,986 + 401 = 2,387."""

CONVERSATIONS = 10
"""LoCoMo-10's conversations; Cognitive item ``i`` goes into conversation ``i % 10``."""

LABEL_SCORES: dict[str, float] = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}
"""The authors' label map; any other label (empty included) scores 0 in their summary."""

API_ERROR_PREFIX = "[API Error"
"""How the authors' call wrapper (``utils.call_model``) starts the text it returns for a
failed call instead of raising."""


def is_api_error(text: object) -> bool:
    """Whether a stored judge reply or reason is the authors' wrapper's failed-call text.

    Args:
        text: the stored ``judge_reason`` (or reply); non-strings are not errors.

    Returns:
        True when it starts (after spaces) with :data:`API_ERROR_PREFIX`.
    """
    return isinstance(text, str) and text.lstrip().startswith(API_ERROR_PREFIX)


def label_score(label: str) -> float:
    """The authors' score of a label: stripped, lower-cased, then :data:`LABEL_SCORES`.

    Args:
        label: a verdict label (``"Correct "``, ``"partial"``, ``""``...).

    Returns:
        1.0, 0.5 or 0.0; 0.0 for an empty or unknown label (the authors count it as 0).
    """
    return LABEL_SCORES.get(label.strip().lower(), 0.0)
