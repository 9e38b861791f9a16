"""One sentence naming a run's judge template, for the card, the report and the console."""

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
    else:
        count = (judge.get("counts") or {}).get("unparsed_scored")
        parts.append(
            f"unreadable replies counted as {on_unparsed.removeprefix('score ')} for parity "
            f"with the harness ({'not counted' if count is None else count} such run(s))"
        )
    if template.get("escape_untrusted") is False:
        parts.append("question and answers sent byte for byte (escape_untrusted: false)")
    else:
        parts.append("question and answers escaped (&, <, >)")
    for key, value in (template.get("fixed") or {}).items():
        if key in judge and judge[key] != value:
            parts.append(f"the template fixes {key} {value}, this run used {judge[key]}")
    return "; ".join(parts)
