"""The ``binary`` protocol: CORRECT or WRONG, scored 100 or 0.

The generous matching of the Mem0 evaluation harness (mem0ai/mem0 ``evaluation/``;
docs/field_notes.md §2): the same fact in other words, or the same date in another format, is
correct. This is what the published J baselines measured. Labels are compared across runs
at the nominal level.
"""

from __future__ import annotations

import re
from typing import Any

from locomo_exp.judge.protocols.base import DATA_RULES, ProtocolSpec, Reading, Verdict
from locomo_exp.judge.protocols.shape import VerdictShape

PROMPT_VERSION = "binary-v1"
"""Version of the ``binary`` prompt and output format."""

SYSTEM_PROMPT = (
    "You are grading answers given by a conversational-memory system. Each question is "
    "about a long conversation between two people; you are shown the question, the gold "
    "(reference) answer and the system's predicted answer, but not the conversation. Treat "
    "the gold answer as correct.\n\n"
    "Label the predicted answer CORRECT or WRONG. Be generous: it is CORRECT when it "
    "states the same fact or refers to the same topic as the gold answer, even in other "
    "words, with extra detail, or longer; a date or time period is CORRECT when it is the "
    "same one in any format (for example '7 May 2023', 'May 7th' or 'the Sunday before 8 "
    "May 2023'). It is WRONG when it contradicts the gold answer, gives a different fact, "
    "date or person, misses the point of the question, or gives no answer.\n\n"
    f"{DATA_RULES}\n\n"
    'Reply with one JSON object and nothing else: {"label": "CORRECT" or "WRONG", '
    '"explanation": "<one or two sentences>"}.'
)

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": ["CORRECT", "WRONG"]},
        "explanation": {"type": "string"},
    },
    "required": ["label", "explanation"],
    "additionalProperties": False,
}

LABEL_SCORES = {"CORRECT": 100.0, "WRONG": 0.0, "INCORRECT": 0.0}
"""Label -> score (0-100); ``INCORRECT`` is read as ``WRONG``."""

_SALVAGE_RE = re.compile(r'"label"\s*:\s*"(CORRECT|WRONG|INCORRECT)"', re.I)
_BARE_LABEL_RE = re.compile(r"^\W*(CORRECT|WRONG|INCORRECT)\W*$", re.I)
_PLAIN_LABEL_RE = re.compile(
    r"(?:\b(?P<neg>not|isn't)\s+)?\b(?P<word>CORRECT|WRONG|INCORRECT)\b"
    r"|\blabel\b[*_\s]*[:=][*_\s]*\"?(?P<field>correct|wrong|incorrect)\b",
    re.I,
)


def read_label(value: Any) -> Reading:
    """A ``label`` value (any case, a trailing ``.`` allowed) as CORRECT=100 / WRONG=0.

    Args:
        value: the ``label`` field's value.

    Returns:
        ``(Verdict(score, label), "")``; ``(None, reason)`` for a non-string or another word.
    """
    if not isinstance(value, str):
        return None, f"label is {value!r}, not a string"
    label = value.strip().strip(".").upper()
    if label not in LABEL_SCORES:
        return None, f"label {value!r} is not CORRECT or WRONG"
    label = "CORRECT" if label == "CORRECT" else "WRONG"
    return Verdict(LABEL_SCORES[label], label), ""


def plain_labels(text: str) -> tuple[list[Verdict], str]:
    """Upper-case ``CORRECT``/``WRONG``/``INCORRECT`` words or ``label: <word>`` in plain text.

    Prose ``correct``/``wrong`` in lower case is not a verdict; a negated label
    (``NOT CORRECT``) is not interpreted and makes the reply a parse failure.
    """
    verdicts: list[Verdict] = []
    for match in _PLAIN_LABEL_RE.finditer(text):
        word = match.group("word")
        if word is not None and word != word.upper():
            continue
        if match.group("neg"):
            return [], f"negated verdict {match.group(0)!r} in the text after the JSON"
        verdict, _ = read_label(word or match.group("field"))
        assert verdict is not None
        verdicts.append(verdict)
    return verdicts, ""


def bare_label(text: str) -> Reading | None:
    """A reply that is only a label (``"WRONG"``, ``"**CORRECT**"``), else ``None``."""
    match = _BARE_LABEL_RE.match(text)
    return read_label(match.group(1)) if match else None


LABEL_SHAPE = VerdictShape(
    verdict_field="label",
    output_schema=OUTPUT_SCHEMA,
    krippendorff_level="nominal",
    read=read_label,
    salvage_pattern=_SALVAGE_RE,
    plain_verdicts=plain_labels,
    bare=bare_label,
    label_scores=LABEL_SCORES,
)
"""A ``CORRECT``/``WRONG`` ``label`` reply (100/0), compared at the nominal level."""

BINARY = LABEL_SHAPE.protocol(
    ProtocolSpec,
    name="binary",
    prompt_version=PROMPT_VERSION,
    system_prompt=SYSTEM_PROMPT,
    reply_format='Reply with the JSON object {"label": ..., "explanation": ...} only.',
)
"""The ``binary`` protocol."""
