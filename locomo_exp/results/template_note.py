"""A run's judge template in words (card, report, console), and its unreadable replies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def template_note(judge: Mapping[str, Any]) -> str | None:
    """How a template run judged, in words; ``None`` when no template was used.

    Names the template (name, version, sha256 prefix), its reply rule, what an unreadable
    reply counted as (with the count when scored), whether untrusted text was escaped, and
    each setting the template fixes whose value in this run differs from it.

    Args:
        judge: the judge summary (``summary.json`` -> ``judge``).

    Returns:
        The sentence, or ``None``.
    """
    template = judge.get("template")
    if not isinstance(template, Mapping):
        return None
    parts = [
        f"template {template.get('name')} version {template.get('version')} "
        f"(sha256 {str(template.get('sha256'))[:12]}, {template.get('path')})",
        f"reply read by {template.get('rule')} (response_format {template.get('response_format')})",
    ]
    on_unparsed = str(template.get("on_unparsed") or "unscored")
    if on_unparsed == "unscored":
        parts.append("unreadable replies unscored")
    else:  # the card has the setting only; a run's summary has its counts too
        counts = judge.get("counts") or {}
        scored = counts.get("unparsed_scored")
        parts.append(
            f"unreadable replies counted as {on_unparsed.removeprefix('score ')} for parity "
            "with the harness"
            + ("" if scored is None else f" ({scored} of {counts.get('runs_total', 0)} run(s))")
        )
    if template.get("escape_untrusted") is False:
        parts.append("question and answers sent byte for byte (escape_untrusted: false)")
    else:
        parts.append("question and answers escaped (&, <, >)")
    for key, value in (template.get("fixed") or {}).items():
        if key in judge and judge[key] != value:
            parts.append(f"the template fixes {key} {value}, this run used {judge[key]}")
    return "; ".join(parts)


def unparsed_scored_words(judge: Mapping[str, Any]) -> str:
    """``"1540 scored 0 by on_unparsed"``: the parse failures a template scored, or ``""``.

    Args:
        judge: the judge summary (``summary.json`` -> ``judge``), with ``counts`` and, for
            a template with ``on_unparsed: {score: N}``, ``counts.unparsed_scored``.
    """
    scored = (judge.get("counts") or {}).get("unparsed_scored")
    if not scored:
        return ""
    template = judge.get("template")
    rule = str(template.get("on_unparsed")) if isinstance(template, Mapping) else ""
    value = rule.removeprefix("score ") if rule.startswith("score ") else "?"
    return f"{scored} scored {value} by on_unparsed"


def parse_failure_words(judge: Mapping[str, Any]) -> str:
    """``"1540 of 1540 judge runs (1540 scored 0 by on_unparsed)"``.

    Every reply that could not be read is a parse failure, whether it stayed unscored or a
    template's ``on_unparsed`` scored it (``counts.parse_failure`` counts both).

    Args:
        judge: the judge summary (``summary.json`` -> ``judge``).
    """
    counts = judge.get("counts") or {}
    total = counts.get("runs_total")
    of = f" of {total} judge runs" if total else ""
    scored = unparsed_scored_words(judge)
    return f"{counts.get('parse_failure', 0)}{of}" + (f" ({scored})" if scored else "")
