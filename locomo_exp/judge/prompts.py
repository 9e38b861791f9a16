"""Judge prompts: the user prompt of one call, and the versions of each protocol's prompts.

The prompts themselves live with their protocol (:mod:`locomo_exp.judge.protocols`): each
protocol's system prompt, closing instruction and ``prompt_version``; the user prompt is
shared (:func:`~locomo_exp.judge.protocols.base.render_user_prompt`).

Every change to the wording of a prompt must bump its protocol's ``prompt_version``: the
version is part of the judge cache key and is written into every output, so two J numbers
can be told apart later.
"""

from __future__ import annotations

from locomo_exp.judge.protocols import (
    CATEGORY_GUIDANCE,
    CATEGORY_LABELS,
    ProtocolSpec,
    escape_untrusted,
    get_protocol,
)
from locomo_exp.judge.protocols.binary import PROMPT_VERSION as BINARY_PROMPT_VERSION
from locomo_exp.judge.protocols.rubric import PROMPT_VERSION as RUBRIC_PROMPT_VERSION


def build_judge_prompt(
    question: str,
    ground_truth: str | None,
    predicted_answer: str,
    category: int,
    *,
    protocol: object = "rubric",
) -> str:
    """Build the user prompt of one judge call.

    Args:
        question: the LoCoMo question.
        ground_truth: the gold answer (ints are turned into text; ``None``, which
            category-5 items may have, is shown as not given).
        predicted_answer: the memory system's answer.
        category: LoCoMo category id (1-5); selects the label and the standard the judge
            applies (e.g. temporal: the date must match; adversarial: the right answer
            says the conversation does not contain it).
        protocol: a protocol name (``rubric``, ``binary``); selects the closing line.

    Returns:
        The prompt text, with each untrusted input escaped inside its own tag.

    Raises:
        ValueError: for an unknown protocol (the message lists the available ones).
    """
    return get_protocol(protocol).build_prompt(question, ground_truth, predicted_answer, category)


__all__ = [
    "BINARY_PROMPT_VERSION",
    "CATEGORY_GUIDANCE",
    "CATEGORY_LABELS",
    "RUBRIC_PROMPT_VERSION",
    "ProtocolSpec",
    "build_judge_prompt",
    "escape_untrusted",
    "get_protocol",
]
