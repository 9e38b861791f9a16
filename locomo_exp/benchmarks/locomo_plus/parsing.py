"""The two readings of a judge's reply: ours, and the authors' (``judge.parser=authors``).

Both are pure functions of the reply text.

- :func:`parse_ours` reads the judge's *conclusion*: the last ``label`` of a JSON object in
  the reply, else the last verdict word (whole words only: ``incorrect`` is *wrong*, never
  *correct*). A failed call (the authors' wrapper's ``[API Error: ...]`` text) is not a
  verdict; neither is a reply with no label.
- :func:`parse_authors` follows the authors' three steps (``llm_as_judge.py``, as
  ``../shared/data/locomo_plus/README.md`` describes them): a ``{"label": ..., "reason":
  ...}`` block; else the whole reply as JSON; else the first of the substrings
  ``correct``, ``wrong``, ``partial`` found, in that order, in the lower-cased reply. So
  ``Incorrect.`` and any error text holding "Incorrect" come out *correct*. It exists to
  reproduce their figures, and says which step gave each label.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import LABEL_SCORES, is_api_error, label_score
from locomo_exp.benchmarks.locomo_plus.protocol import Step, find_conclusion

OURS = "ours"
AUTHORS = "authors"
PARSERS: tuple[str, ...] = (OURS, AUTHORS)
"""The ``judge.parser`` values."""

@dataclass(frozen=True)
class Reading:
    """What a parser made of one reply.

    Attributes:
        label: ``correct``, ``partial`` or ``wrong``; ``None`` when the reply holds no
            verdict (ours) -- the authors' parser gives ``""`` instead, scored 0.
        score: the label's score (1, 0.5, 0), ``None`` when unscored.
        api_error: the reply is a failed call's error text.
        step: how the label was found: a JSON ``block``, the reply as ``json``, a verdict
            ``words`` search, or ``none``.
        reason: why it is unscored (ours), else ``""``.
    """

    label: str | None
    score: float | None
    api_error: bool
    step: Step
    reason: str = ""

    @property
    def from_no_label(self) -> bool:
        """The label came from a reply with no label field (a word search), not an error."""
        return self.step in ("words", "none") and not self.api_error


def parse_ours(reply: str) -> Reading:
    """Our reading of a judge reply: its conclusion, whole words only.

    Rules, in order: an ``[API Error ...`` text is a failed call (unscored, ``api_error``);
    the last JSON object holding a ``label`` gives the verdict (its value read whole, as
    below); else the last verdict word of the reply (``correct``, ``partial``,
    ``partially correct``, ``wrong``, ``incorrect``, ``not correct``; the last one is the
    conclusion, ``incorrect`` and ``not correct`` are *wrong*); else no verdict. The same
    rule reads the judge's replies in a judged run
    (:func:`locomo_exp.benchmarks.locomo_plus.protocol.find_conclusion`).

    Args:
        reply: the judge's reply text.

    Returns:
        :class:`Reading`; ``label``/``score`` ``None`` with a ``reason`` when unscored.
    """
    if is_api_error(reply):
        return Reading(None, None, True, "none", "failed call (API error), not a verdict")
    label, step, reason = find_conclusion(reply)
    if label is None:
        return Reading(None, None, False, step, reason)
    return Reading(label, LABEL_SCORES[label], False, step)


_BLOCK = re.compile(r"\{[^{}]*?\"label\"[^{}]*?\"reason\"[^{}]*?\}", re.DOTALL)


def _label_of(obj: Any) -> str:
    return str(obj.get("label", "")) if isinstance(obj, dict) else ""


def parse_authors(reply: str) -> Reading:
    """The authors' reading of a judge reply, reproduced (their quirk included).

    Steps: (1) a ``{"label": ..., "reason": ...}`` block, parsed as JSON; (2) else the whole
    reply as JSON; (3) if that fails, the first of ``correct``, ``wrong``, ``partial``
    (substrings, in that order) in the lower-cased reply, else the empty label. The label
    is then stripped and lower-cased and scored by the label map, an unknown or empty one
    as 0 (:func:`~locomo_exp.benchmarks.locomo_plus.facts.label_score`).

    Args:
        reply: the judge's reply text (a failed call's error text included, as their
            wrapper passes it on).

    Returns:
        :class:`Reading` with a label (possibly ``""``), a score, whether the reply was an
        API error and the step that gave the label.
    """
    error = is_api_error(reply)
    block = _BLOCK.search(reply)
    if block is not None:
        try:
            label = _label_of(json.loads(block.group(0)))
            return Reading(label.strip().lower(), label_score(label), error, "block")
        except ValueError:
            pass
    try:
        label = _label_of(json.loads(reply))
        return Reading(label.strip().lower(), label_score(label), error, "json")
    except ValueError:
        lowered = reply.lower()
        word = next((w for w in ("correct", "wrong", "partial") if w in lowered), "")
        return Reading(word, label_score(word), error, "words" if word else "none")
