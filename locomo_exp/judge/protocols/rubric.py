"""The ``rubric`` protocol (default): a 0-100 score with a one- or two-sentence explanation.

An impartial evaluator scores the prediction on factual accuracy, completeness, relevance
and contextual appropriateness, and answers ``{"score": <0-100>, "explanation": "..."}``
(the seed's design). Scores are compared across runs at the interval level.
"""

from __future__ import annotations

import math
import re
from typing import Any

from locomo_exp.judge.protocols.base import DATA_RULES, ProtocolSpec, Reading, Verdict
from locomo_exp.judge.protocols.shape import VerdictShape

PROMPT_VERSION = "rubric-v1"
"""Version of the ``rubric`` prompt and output format."""

SYSTEM_PROMPT = (
    "You are an impartial evaluator of answers given by a conversational-memory system. "
    "Each question is about a long conversation between two people; you are shown the "
    "question, the gold (reference) answer and the system's predicted answer, but not the "
    "conversation. Treat the gold answer as correct.\n\n"
    "Score the predicted answer from 0 to 100 against the gold answer, weighing:\n"
    "- factual accuracy: does it state the same facts as the gold answer, without "
    "contradicting it?\n"
    "- completeness: does it cover every part of the gold answer?\n"
    "- relevance: does it answer the question that was asked?\n"
    "- contextual appropriateness: is it a sensible reply in the context of the question?\n"
    "Wording, length and date format do not matter; meaning does. 100 means fully correct "
    "and complete, 0 means wrong, missing or unrelated; use values in between for partly "
    "correct answers.\n\n"
    f"{DATA_RULES}\n\n"
    'Reply with one JSON object and nothing else: {"score": <integer 0-100>, '
    '"explanation": "<one or two sentences>"}.'
)

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "description": "0 (wrong) to 100 (fully correct)"},
        "explanation": {"type": "string"},
    },
    "required": ["score", "explanation"],
    "additionalProperties": False,
}

_NUMBER = r"[-+]?\d+(?:\.\d+)?"
BARE_SCORE_RE = re.compile(
    rf"^\s*(?:score\s*[:=]\s*)?({_NUMBER})\s*(?:(/)\s*({_NUMBER}))?\s*(%)?\s*\.?\s*$", re.I
)
"""A reply (or JSON string value) that is only a score: ``85``, ``85/100``, ``Score: 8.5/10``."""

# A field of an unfinished JSON object; the value must be followed by a terminator so that
# a number cut in the middle ("8" of "85") is never taken.
_SALVAGE_RE = re.compile(rf'"score"\s*:\s*"?({_NUMBER}(?:\s*/\s*{_NUMBER})?)"?\s*[,}}\n]', re.I)
_PLAIN_SCORE_RE = re.compile(
    rf"\bscore\b[*_\s]*[:=][*_\s]*\"?({_NUMBER}(?:\s*/\s*{_NUMBER})?)", re.I
)


def read_score(value: Any) -> Reading:
    """A JSON score value (number, or text like ``"85"``, ``"85/100"``, ``"8.5/10"``) on 0-100.

    Args:
        value: the ``score`` field's value.

    Returns:
        ``(Verdict(score), "")``; ``(None, reason)`` for a non-number, an unsupported
        scale (only ``/100`` and ``/10``, scaled by 10) or a value outside 0-100 (nothing
        is clamped).
    """
    if isinstance(value, bool) or value is None:
        return None, f"score is {value!r}, not a number"
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        match = BARE_SCORE_RE.match(value)
        if not match:
            return None, f"score {value!r} is not a number"
        number = float(match.group(1))
        if match.group(2):
            denominator = float(match.group(3))
            if denominator == 10:
                number *= 10
            elif denominator != 100:
                return None, f"score {value!r} has an unsupported scale"
    else:
        return None, f"score has type {type(value).__name__}"
    if not math.isfinite(number) or number < 0 or number > 100:
        return None, f"score {value!r} is out of range 0-100"
    return Verdict(number), ""


def plain_scores(text: str) -> tuple[list[Verdict], str]:
    """``score: N`` / ``score = N`` verdicts in plain text (``N/100``, ``N/10`` allowed)."""
    verdicts: list[Verdict] = []
    for match in _PLAIN_SCORE_RE.finditer(text):
        verdict, reason = read_score(match.group(1).replace(" ", ""))
        if verdict is None:
            return [], f"plain-text verdict after the JSON: {reason}"
        verdicts.append(verdict)
    return verdicts, ""


def bare_score(text: str) -> Reading | None:
    """A reply that is only a score (``"85"``, ``"85/100"``, ``"Score: 85"``), else ``None``."""
    if not BARE_SCORE_RE.match(text):
        return None
    return read_score(text.strip().rstrip("."))


SCORE_SHAPE = VerdictShape(
    verdict_field="score",
    output_schema=OUTPUT_SCHEMA,
    krippendorff_level="interval",
    read=read_score,
    salvage_pattern=_SALVAGE_RE,
    plain_verdicts=plain_scores,
    bare=bare_score,
)
"""A 0-100 ``score`` reply (``N/100`` and ``N/10`` read too), compared at the interval level."""

RUBRIC = SCORE_SHAPE.protocol(
    ProtocolSpec,
    name="rubric",
    prompt_version=PROMPT_VERSION,
    system_prompt=SYSTEM_PROMPT,
    reply_format='Reply with the JSON object {"score": ..., "explanation": ...} only.',
)
"""The ``rubric`` protocol."""
