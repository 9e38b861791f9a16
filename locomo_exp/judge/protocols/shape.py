"""Verdict shapes: how one kind of judge reply is read, shared by the protocols that ask for it.

A :class:`VerdictShape` is the half of a :class:`~locomo_exp.judge.protocols.base.ProtocolSpec`
that does not depend on the prompt: the reply's verdict field and JSON schema, the readers of a
verdict value, of an unfinished JSON object, of plain text and of a bare reply, the label scores
and the Krippendorff level. A protocol is a shape plus its prompts
(:meth:`VerdictShape.protocol`), so a reply format written once serves every protocol that asks
for it: :data:`YES_NO` is the yes/no verdict that several plug-ins' judges ask for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar

from locomo_exp.judge.protocols.base import (
    YES_NO_SCORES,
    ProtocolSpec,
    Reading,
    Verdict,
    contains_yes,
)

S = TypeVar("S", bound=ProtocolSpec)


def no_plain_verdicts(text: str) -> tuple[list[Verdict], str]:
    """No plain-text verdict is read after the JSON (for shapes whose replies have none)."""
    return [], ""


def no_bare_verdict(text: str) -> Reading | None:
    """No reply is taken as a bare verdict (for shapes that read only JSON or whole replies)."""
    return None


@dataclass(frozen=True)
class VerdictShape:
    """The reply format of a protocol, and how a reply in it is read (see the module docstring).

    Attributes:
        verdict_field: the reply's JSON field holding the verdict.
        output_schema: JSON schema of the reply, for structured outputs.
        krippendorff_level: ``interval`` (a score scale) or ``nominal`` (labels).
        read: a verdict-field value -> :data:`~locomo_exp.judge.protocols.base.Reading`.
        salvage_pattern: finds the verdict value of an unfinished JSON object (group 1).
        plain_verdicts: verdicts in plain text after the last JSON verdict.
        bare: a reply that is only a verdict -> a reading, ``None`` when it is not one.
        label_scores: label -> score (0-100); empty for a score scale.
        read_reply: reads a whole reply instead of the JSON rules, or ``None``.
    """

    verdict_field: str
    output_schema: dict[str, Any]
    krippendorff_level: Literal["interval", "nominal"]
    read: Callable[[Any], Reading]
    salvage_pattern: re.Pattern[str]
    plain_verdicts: Callable[[str], tuple[list[Verdict], str]] = no_plain_verdicts
    bare: Callable[[str], Reading | None] = no_bare_verdict
    label_scores: Mapping[str, float] = field(default_factory=dict)
    read_reply: Callable[[str], Reading] | None = None

    def protocol(self, cls: type[S], **prompts: Any) -> S:
        """A protocol of this shape.

        Args:
            cls: the protocol class (:class:`ProtocolSpec`, or a subclass such as
                :class:`~locomo_exp.judge.protocols.kinds.KindProtocol`).
            **prompts: the protocol's own fields: ``name``, ``prompt_version``,
                ``system_prompt``, ``reply_format`` and any field of ``cls`` beyond the shape's.

        Returns:
            ``cls(**prompts, <this shape's fields>)``.
        """
        return cls(**prompts, **{f.name: getattr(self, f.name) for f in fields(self)})


def read_yes_no(value: Any) -> Reading:
    """A ``verdict`` value by the substring rule: ``yes`` in it (lower-cased) is YES, else NO.

    The rule is :func:`~locomo_exp.judge.protocols.base.contains_yes` (docs/field_notes.md §11
    names the scorer that uses it).

    Returns:
        ``(Verdict(100.0, "YES") or Verdict(0.0, "NO"), "")``; ``(None, reason)`` for a value
        that is not text, or empty text.
    """
    if not isinstance(value, str):
        return None, f"verdict is {value!r}, not text"
    return contains_yes(value)


YES_NO = VerdictShape(
    verdict_field="verdict",
    output_schema={
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
        "required": ["verdict"],
        "additionalProperties": False,
    },
    krippendorff_level="nominal",
    read=read_yes_no,
    salvage_pattern=re.compile(r'"verdict"\s*:\s*"(yes|no)"', re.I),
    bare=contains_yes,
    label_scores=YES_NO_SCORES,
)
"""A yes/no verdict (YES 100, NO 0), a reply read by the substring rule: ``yes`` in it is YES."""

__all__ = ["YES_NO", "VerdictShape", "no_bare_verdict", "no_plain_verdicts", "read_yes_no"]
