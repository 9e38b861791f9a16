"""The ``longmemeval`` protocol: a yes/no verdict by kind of LongMemEval question.

LongMemEval's own judge (``src/evaluation/evaluate_qa.py``; docs/field_notes.md §11) asks a
yes/no question whose criterion depends on the kind of question, at temperature 0 with
``max_tokens`` 10, and counts a reply as correct when ``"yes"`` occurs in it, lower-cased. This
protocol keeps that design -- the kinds, the criteria, the reply and the verdict rule -- in this
project's own words (no sentence of the authors' prompts; a user who needs byte-exact parity
brings a copy of them through ``judge.protocol=template`` with ``by_kind:``). Criteria:

* single-session (user, assistant) and multi-session: the response gives the answer, an
  equivalent, or every intermediate step to it; part of it is not enough;
* temporal reasoning: the same, and a count of days, weeks or months may be off by one;
* knowledge update: the updated answer counts even when the old one is mentioned too;
* preference: the gold answer is a rubric of the user's preference; the response must use
  the user's information correctly, not meet the rubric point by point;
* abstention (``_abs`` ids, whatever their type): the response must say the question cannot
  be answered from what it knows.

The prompt is chosen by the record's own kind string (its ``kind``: ``abstention`` for ``_abs``
ids, else its ``question_type``): the protocol is a
:class:`~locomo_exp.judge.protocols.kinds.KindProtocol` over
:data:`locomo_exp.benchmarks.longmemeval.facts.JUDGE_KINDS`, read by the shared yes/no shape
(:data:`~locomo_exp.judge.protocols.shape.YES_NO`).
"""

from __future__ import annotations

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.judge.protocols.base import DATA_RULES, contains_yes, escape_untrusted
from locomo_exp.judge.protocols.kinds import KindProtocol
from locomo_exp.judge.protocols.shape import YES_NO, read_yes_no

PROMPT_VERSION = "longmemeval-v1"
"""Version of the ``longmemeval`` prompts and verdict rule."""

SYSTEM_PROMPT = (
    "You check answers of a chat assistant that remembers past conversations with its user. "
    "You are shown a question the user asked, the reference answer (or, for some questions, "
    "a rubric or an explanation) and the assistant's response, but not the conversations.\n\n"
    f"{DATA_RULES}\n\n"
    "Reply with the single word yes or no."
)

_STEPS = (
    "Say yes if the response gives the reference answer, something equivalent to it, or "
    "every intermediate step needed to reach it. Say no if it gives only part of the answer "
    "or only some of the steps, or if it contradicts the reference."
)

CRITERIA: dict[str, str] = {
    "single-session-user": _STEPS,
    "single-session-assistant": _STEPS,
    "multi-session": _STEPS,
    "temporal-reasoning": (
        _STEPS + " For a number of days, weeks or months, a response that is off by one from "
        "the reference (for example 19 days where the reference says 18) still counts as yes."
    ),
    "knowledge-update": (
        "The reference is the user's most recent information. Say yes if the response gives "
        "that updated answer, even if it also mentions an earlier, outdated one. Say no if "
        "it gives only the outdated answer or another one."
    ),
    "single-session-preference": (
        "The reference is a rubric describing what a reply suited to this user's preferences "
        "would do. Say yes if the response draws on the user's own information and "
        "preferences correctly, in the spirit of the rubric; it does not have to satisfy every "
        "point of the rubric. Say no if it ignores or misuses them."
    ),
    lme.ABSTENTION_KIND: (
        "This question cannot be answered from the user's past conversations; the reference "
        "explains why. Say yes if the response says it cannot answer, or that the information "
        "is not available or was never mentioned. Say no if it gives an answer as if it knew."
    ),
}
"""Our wording of each kind's criterion (keyed by
:data:`locomo_exp.benchmarks.longmemeval.facts.JUDGE_KINDS`)."""

REFERENCE_LABEL = {
    "single-session-preference": "rubric",
    lme.ABSTENTION_KIND: "explanation",
}

read_verdict = read_yes_no
"""A ``verdict`` value by LongMemEval's rule: ``yes`` in it (lower-cased) is YES, else NO
(:func:`~locomo_exp.judge.protocols.shape.read_yes_no`, the authors' scorer
``src/evaluation/evaluate_qa.py``)."""


def render_prompt(question: str, reference: str | None, response: str, kind: str) -> str:
    """The user prompt of one question of a given kind.

    Args:
        question: the question.
        reference: the gold answer (a rubric for preference questions, an explanation for
            abstention ones).
        response: the assistant's answer being judged.
        kind: one of :data:`locomo_exp.benchmarks.longmemeval.facts.JUDGE_KINDS`.

    Returns:
        The prompt; the untrusted texts are escaped inside ``<question>``, ``<gold_answer>``
        and ``<predicted_answer>``.
    """
    criterion = CRITERIA[kind]
    label = REFERENCE_LABEL.get(kind, "reference answer")
    return (
        f"Kind of question: {kind}\n"
        f"Criterion: {criterion}\n\n"
        f"<question>\n{escape_untrusted(question)}\n</question>\n\n"
        f"The {label} is in <gold_answer>.\n"
        f"<gold_answer>\n{escape_untrusted(reference or '')}\n</gold_answer>\n\n"
        f"<predicted_answer>\n{escape_untrusted(response)}\n</predicted_answer>\n\n"
        "Does the response meet the criterion? Answer yes or no."
    )


LONGMEMEVAL = YES_NO.protocol(
    KindProtocol,
    name="longmemeval",
    prompt_version=PROMPT_VERSION,
    system_prompt=SYSTEM_PROMPT,
    reply_format="Answer yes or no.",
    kinds=lme.JUDGE_KINDS,
    render=render_prompt,
)
"""The ``longmemeval`` protocol: one criterion per kind of :data:`lme.JUDGE_KINDS`."""

__all__ = ["CRITERIA", "LONGMEMEVAL", "contains_yes", "read_verdict", "render_prompt"]
