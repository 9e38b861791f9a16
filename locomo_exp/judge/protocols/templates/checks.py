"""Checks of a template's text that need more than one key: placeholders and ``by_kind`` names.

A template is checked whole before any call (issue 27 §2): every placeholder must be one
plain field (no format spec such as ``{gold_answer:.0}``, which would hide the gold answer,
no conversion, no attribute or index), ``{}`` and ``{1}`` cannot be mixed (``str.format``
refuses it only when a prompt is filled), and every ``by_kind`` key must name a kind of
question (:func:`known_kinds`). The hint for an unmapped placeholder guesses the field from
the placeholder's name and never proposes the prediction for a name that is not about it.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

from locomo_exp.benchmark import locomo
from locomo_exp.judge.protocols.base import CATEGORY_LABELS
from locomo_exp.judge.protocols.plugged import plugged_kinds


@dataclass(frozen=True)
class Placeholder:
    """One replacement field of a user text.

    Attributes:
        name: the field name as written ("" for ``{}``).
        spec: the format spec after ``:`` ("" for none).
        conversion: the conversion after ``!`` (``None`` for none).
    """

    name: str
    spec: str = ""
    conversion: str | None = None

    @property
    def written(self) -> str:
        """The placeholder as the file writes it, e.g. ``{gold_answer:.0}``."""
        conv = f"!{self.conversion}" if self.conversion else ""
        spec = f":{self.spec}" if self.spec else ""
        return "{" + self.name + conv + spec + "}"


def placeholders(text: str) -> list[Placeholder]:
    """The replacement fields of ``text`` in ``str.format`` syntax, in order.

    Raises:
        ValueError: for an unbalanced brace.
    """
    return [
        Placeholder(name, spec or "", conversion)
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    ]


def placeholder_problem(fields: list[Placeholder]) -> str:
    """Why these placeholders cannot be filled safely, or "" when they can.

    A format spec or conversion would change or hide the text placed (``{gold_answer:.0}``
    places nothing); an attribute or index places part of it; ``{}`` mixed with ``{1}`` is
    refused by ``str.format`` when the prompt is filled.
    """
    for field in fields:
        if field.spec or field.conversion:
            return (
                f"placeholder {field.written} has a format spec or conversion, which would "
                f"change or hide the text it places; write {{{field.name}}}"
            )
        if re.search(r"[.\[]", field.name):
            base = re.split(r"[.\[]", field.name, maxsplit=1)[0]
            return f"placeholder {field.written} places part of a field; write {{{base}}}"
    automatic = [f for f in fields if f.name == ""]
    numbered = [f for f in fields if f.name.isdigit()]
    if automatic and numbered:
        return (
            f"placeholders mix {{}} and {numbered[0].written}; number every slot "
            "({0} {1} {2}) or none ({} {} {})"
        )
    return ""


_GUESSES: tuple[tuple[str, str], ...] = (
    (r"gold|truth|ref|expect|target|correct|label|ideal|solution", "gold_answer"),
    (r"pred|gen|response|hyp|output|candidate|model|system|submission", "predicted_answer"),
    (r"^q$|quest|query|prompt", "question"),
    (r"cat|type|kind", "category_name"),
)


def suggest_field(name: str) -> str | None:
    """The field a placeholder's name points to, or ``None`` when the name does not say.

    ``gold``/``reference``/``expected`` -> ``gold_answer``; ``generated``/``response``/
    ``prediction`` -> ``predicted_answer``; ``q``/``query`` -> ``question``. A bare ``answer``
    could be either answer, so nothing is guessed.
    """
    lowered = name.lower()
    for pattern, ours in _GUESSES:
        if re.search(pattern, lowered):
            return ours
    return None


def normalize_kind(kind: str) -> str:
    """A kind as compared: lower case, runs of `_`, `-` or spaces as one `-` (`multi_hop`)."""
    return re.sub(r"[\s_-]+", "-", str(kind).strip().lower())


def known_kinds() -> list[str]:
    """Every ``by_kind`` key a record can answer to, as written in the console and report.

    LoCoMo category ids (``1``-``5``), their prompt labels (``multi-hop``) and display names
    (``multi_hop``), then the kinds the plugged-in protocols of benchmark plug-ins judge
    (:func:`~locomo_exp.judge.protocols.plugged.plugged_kinds`: a plug-in's question types).
    """
    names = [str(i) for i in locomo.CATEGORY_IDS]
    names += list(CATEGORY_LABELS.values()) + list(locomo.DEFAULT_CATEGORY_NAMES.values())
    names += plugged_kinds()
    return list(dict.fromkeys(names))
