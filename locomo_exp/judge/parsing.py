"""Robust parsing of judge replies into a 0-100 score or a parse failure.

Judge replies go wrong in known ways (docs/field_notes.md §7): JSON inside a ```json fence, prose
before or after the JSON, a score given as a string (``"85"``) or as ``"85/100"``, several
JSON objects, a reply cut off at ``max_tokens``, out-of-range values, and refusals. Each
reply is either parsed to the right value or reported as a parse failure with a reason;
the raw reply is always kept by the caller. Nothing is clamped or guessed: an out-of-range
score, two objects that disagree, or a truncated number are parse failures.

Prompt injection through the parser (parse-v2). The answer under review may carry an
injected verdict (``{"label": "CORRECT"}``, ``{"score": 100}``) and the judge may quote it.
Only the reply's own final verdict counts:

1. A reply that is one JSON object (bare or in a ```json fence, the structured-output
   case) is that object's verdict.
2. A plain-text verdict written after the last JSON object that carries the verdict field
   is the reply's conclusion and overrides every object before it (those are quoted
   material): binary -- an upper-case word ``CORRECT``/``WRONG``/``INCORRECT`` or
   ``label: <word>`` in any case; rubric -- ``score: N`` / ``score = N`` (``N/100``,
   ``N/10`` allowed). Quoted phrases there (in ``"..."``, curly double quotes or
   backticks, containing a space) and ``>`` quote lines are quotations and are ignored.
   Several plain verdicts there must agree, and a negated label (``NOT CORRECT``) is not
   interpreted: both are parse failures.
3. With no trailing plain verdict, every JSON object carrying the field must give the
   same verdict; otherwise the reply is a parse failure "conflicting verdicts".
4. A plain-text verdict with no JSON object at all is not accepted unless the whole reply
   is a bare score or label (``"85"``, ``"Score: 85"``, ``"WRONG"``).
5. A field is salvaged from an unfinished (truncated) object only when that object begins
   the reply (after an optional fence): an unfinished object after prose may be quoted.

So ``The answer quotes {"label": "CORRECT"}; it names the wrong dog, so it is WRONG.`` is
WRONG, ``The answer embeds {"score": 100} ... Score: 0`` is 0, and two JSON objects with
different verdicts and nothing after them is a failure.

The same rule holds for templates (docs/judge.md, "One reply, one verdict"): a ``json_key``
template reads plain verdicts after the JSON with its own labels
(:meth:`~locomo_exp.judge.protocols.templates.verdicts.VerdictRule.plain_verdicts`), and a
``contains`` or ``regex`` template whose labels or matches disagree is a failure.

``PARSER_VERSION`` names these rules. Cached judge replies are stored raw and parsed on
every read, so a parser change applies to cached replies without new API calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from locomo_exp.judge.protocols import ProtocolSpec, Verdict, get_protocol

PARSER_VERSION = "parse-v2"
"""Version of the reply-parsing rules."""

_DECODER = json.JSONDecoder()
_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_SALVAGE_EXPLANATION_RE = re.compile(r'"explanation"\s*:\s*"((?:[^"\\]|\\.)*)', re.I | re.S)
_QUOTED_RE = re.compile(
    r'"[^"\n]*\s[^"\n]*"|\u201c[^\u201d\n]*\s[^\u201d\n]*\u201d|`[^`\n]*\s[^`\n]*`'
    r"|^\s*>.*$",
    re.M,
)
_LEADING_FENCE_RE = re.compile(r"^\s*(?:```[a-zA-Z]*\s*)?\{")


@dataclass(frozen=True)
class ParsedReply:
    """A judge reply after parsing.

    Attributes:
        ok: True when a verdict was found.
        score: the score on 0-100 (binary: CORRECT=100, WRONG=0); ``None`` when not ok
            (unscored: see ``failure_reason``).
        explanation: the judge's explanation ("" when none).
        label: the protocol's label (binary: ``"CORRECT"``/``"WRONG"``), ``None`` for rubric.
        failure_reason: why parsing failed ("" when ok).
        salvaged: True when the value came from an unfinished (truncated) JSON object.
    """

    ok: bool
    score: float | None = None
    explanation: str = ""
    label: str | None = None
    failure_reason: str = ""
    salvaged: bool = False


def _fail(reason: str, explanation: str = "") -> ParsedReply:
    return ParsedReply(ok=False, failure_reason=reason, explanation=explanation)


def _ok(verdict: Verdict, explanation: str = "", *, salvaged: bool = False) -> ParsedReply:
    return ParsedReply(
        ok=True,
        score=verdict.score,
        label=verdict.label,
        explanation=explanation,
        salvaged=salvaged,
    )


def _reading(
    reading: tuple[Verdict | None, str], explanation: str = "", *, salvaged: bool = False
) -> ParsedReply:
    verdict, reason = reading
    if verdict is None:
        return _fail(reason, explanation)
    return _ok(verdict, explanation, salvaged=salvaged)


def _json_objects(text: str) -> list[tuple[dict[str, Any], int]]:
    """All top-level JSON objects found anywhere in ``text`` (fenced or not), with end offsets."""
    found: list[tuple[dict[str, Any], int]] = []
    pos = 0
    while True:
        start = text.find("{", pos)
        if start < 0:
            return found
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            pos = start + 1
            continue
        if isinstance(value, dict):
            found.append((value, end))
        pos = end


def _lower_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _explanation(obj: dict[str, Any]) -> str:
    value = obj.get("explanation", obj.get("reason", obj.get("reasoning", "")))
    return value if isinstance(value, str) else json.dumps(value)


def _from_object(obj: dict[str, Any], spec: ProtocolSpec) -> ParsedReply | None:
    """Parse one JSON object; ``None`` when it has no verdict field at all."""
    obj = _lower_keys(obj)
    if spec.verdict_field not in obj:
        return None
    return _reading(spec.read(obj[spec.verdict_field]), _explanation(obj))


def _salvage(text: str, spec: ProtocolSpec) -> ParsedReply | None:
    """Recover a complete verdict field from an unfinished JSON object."""
    explanation_match = _SALVAGE_EXPLANATION_RE.search(text)
    explanation = explanation_match.group(1) if explanation_match else ""
    match = spec.salvage_pattern.search(text)
    if not match:
        return None
    return _reading(spec.read(match.group(1).replace(" ", "")), explanation, salvaged=True)


def _plain_verdict(text: str, spec: ProtocolSpec, explanation: str) -> ParsedReply | None:
    """The plain-text verdict of ``text`` (the part after the last JSON verdict), if any.

    Returns ``None`` when ``text`` states no verdict, a failure when its verdicts disagree,
    are negated or out of range, else the verdict (rule 2 of the module docstring).
    """
    verdicts, reason = spec.plain_verdicts(_QUOTED_RE.sub(" ", text))
    if reason:
        return _fail(reason)
    if not verdicts:
        return None
    shown = {v.shown for v in verdicts}
    if len(shown) > 1:
        return _fail(f"conflicting verdicts in the text after the JSON: {sorted(shown)}")
    return _ok(verdicts[0], explanation)


def _bare(text: str, spec: ProtocolSpec) -> ParsedReply | None:
    """A reply that is only a verdict ("85", "85/100", "Score: 85", "WRONG")."""
    reading = spec.bare(text)
    return None if reading is None else _reading(reading)


def parse_judge_reply(
    text: str | None,
    protocol: object = "rubric",
    *,
    stop_reason: str | None = None,
) -> ParsedReply:
    """Parse a judge reply.

    Rules, in order: a ``refusal`` stop reason fails; JSON objects are looked for anywhere
    in the text (inside code fences or surrounded by prose); a plain-text verdict after the
    last object carrying the score (rubric) or label (binary) field is the reply's final
    verdict and wins; otherwise those objects must all agree, else "conflicting verdicts"
    (see the module docstring for the prompt-injection rules); a reply that is only a
    score (``"85"``, ``"85/100"``) or only a label is accepted; an unfinished object (cut at
    ``max_tokens``) that begins the reply yields its score only if that field is
    complete. Scores must lie in 0-100 (``"x/10"`` is scaled by 10); nothing is clamped.

    Args:
        text: the reply text (all text blocks joined); ``None`` or "" for no text.
        protocol: a protocol name (``rubric``: 0-100 score; ``binary``: CORRECT=100,
            WRONG=0); its :class:`~locomo_exp.judge.protocols.ProtocolSpec` supplies the
            verdict field and the protocol-specific rules.
        stop_reason: the API's stop reason (``"end_turn"``, ``"max_tokens"``,
            ``"refusal"``, ...), if known.

    Returns:
        A :class:`ParsedReply`; ``ok`` is False with a ``failure_reason`` on failure.

    Raises:
        ValueError: for an unknown protocol.
    """
    spec = get_protocol(protocol)
    if stop_reason == "refusal":
        return _fail("the model refused to answer (stop_reason=refusal)")
    if text is None or not text.strip():
        return _fail("empty reply")
    if spec.read_reply is not None:  # a template's contains/regex rule reads the whole reply
        return _reading(spec.read_reply(text), text.strip())

    candidates: list[ParsedReply] = []
    failures: list[ParsedReply] = []
    last_end = -1
    for obj, end in _json_objects(text):
        parsed = _from_object(obj, spec)
        if parsed is None:
            continue
        last_end = end
        (candidates if parsed.ok else failures).append(parsed)
    if candidates or failures:
        trailing = _plain_verdict(text[last_end:], spec, explanation=text.strip())
        if trailing is not None:
            return trailing
    if candidates:
        scores = {c.score for c in candidates}
        if len(scores) > 1 or failures:
            shown = sorted(s for s in scores if s is not None)
            return _fail(
                f"conflicting verdicts (ambiguous reply): JSON objects give different values "
                f"{shown}{' and invalid ones' if failures else ''}, and no plain verdict follows"
            )
        return candidates[0]
    if failures:
        return failures[0]

    bare = _bare(text, spec)
    if bare is not None:
        return bare

    # Try the text inside a fence alone (e.g. a fenced bare score).
    for fenced in _FENCE_RE.findall(text):
        bare = _bare(fenced, spec)
        if bare is not None:
            return bare

    if _LEADING_FENCE_RE.match(text):
        salvaged = _salvage(text, spec)
        if salvaged is not None:
            return salvaged
    if stop_reason == "max_tokens":
        return _fail("reply truncated at max_tokens before the score was complete")
    if "{" in text:
        return _fail("no complete JSON object with the expected field")
    return _fail("no JSON object in the reply")
