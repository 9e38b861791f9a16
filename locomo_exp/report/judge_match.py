"""Whether this run's judge is the judge behind a published number, field by field.

Two refinements of a plain "differs" (trial 5 #10):

- model ids are compared after snapshot resolution (:mod:`locomo_exp.results.model_ids`):
  ``gpt-4o-mini-2024-07-18`` against a publication's ``gpt-4o-mini`` is the same model,
  its snapshot unknown, not a different judge;
- a template whose every verdict is 0 or 100 gives the verdicts of a ``binary`` protocol:
  against a binary baseline it is not "template vs binary"; what matches (the reply rule,
  labels, temperature, categories) is said, and what cannot be verified (its prompt text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.results.model_ids import DIFFERENT, SAME, model_match

BINARY_SCORES = (0.0, 100.0)
"""The verdicts of a binary protocol (CORRECT/WRONG as 100/0)."""


def binary_template(judge: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The template card of a judge whose verdicts are binary (only 0 and 100), else ``None``."""
    template = (judge or {}).get("template")
    if not isinstance(template, Mapping):
        return None
    scores = template.get("verdict_scores")
    if scores is None or tuple(float(s) for s in scores) != BINARY_SCORES:
        return None
    return template


def judge_field_difference(
    name: str, ours: Any, theirs: Any, card: Mapping[str, Any]
) -> str | None:
    """The difference line of one judge card field against a baseline's, or ``None``.

    Args:
        name: the card field (``judge.model``, ``judge.protocol``, ...).
        ours: this run's value.
        theirs: the baseline's stated value (not ``None``).
        card: this run's card.

    Returns:
        ``None`` when the field does not differ (equal, or a binary template against a
        ``binary`` protocol: :func:`template_protocol_note` says what matches); else
        ``"name: ours vs theirs"``, with ``(same model, snapshot differs or unknown)``
        for two ids of one model.
    """
    if ours == theirs:
        return None
    if name == "judge.protocol" and ours == "template" and theirs == "binary":
        if binary_template(card.get("judge")) is not None:
            return None
    text = f"{name}: {'unknown' if ours is None else ours} vs {theirs}"
    if name == "judge.model":
        match = model_match(str(ours) if ours else None, str(theirs))
        if match not in (None, SAME, DIFFERENT):
            text += f" ({match})"
    return text


def template_protocol_note(card: Mapping[str, Any], baseline_card: Mapping[str, Any]) -> str | None:
    """What a binary template shares with a binary baseline, and what cannot be checked.

    Args:
        card: this run's card.
        baseline_card: the baseline's card (``judge.protocol`` ``binary``).

    Returns:
        One sentence, or ``None`` when the run used no binary template or the baseline's
        protocol is not ``binary``.
    """
    judge = card.get("judge") or {}
    theirs = (baseline_card.get("judge") or {})
    template = binary_template(judge)
    if template is None or theirs.get("protocol") != "binary":
        return None
    matches = [f"binary verdicts (reply read by {template.get('rule')})"]
    for key in ("temperature", "categories"):
        if theirs.get(key) is not None and theirs.get(key) == judge.get(key):
            matches.append(f"{key} {judge.get(key)}")
    return (
        f"template {template.get('name')}@{template.get('version')} gives the binary protocol's "
        f"verdicts: matches {', '.join(matches)}; not verifiable here: its prompt text against "
        "the publication's (compare them yourself)"
    )


def published_judge_match(
    run_judge: Mapping[str, Any] | None, published_model: str, own_protocol: str
) -> str:
    """The "same judge as this run" cell of a published figure.

    Args:
        run_judge: this run's headline verdicts (``source``: ``judge`` or ``stored``;
            ``judge_model``: the model, for this project's judge followed by
            ``, protocol <name>``; ``answered_model``: the model the API answered as,
            which decides when known).
        published_model: the model the publication judged with.
        own_protocol: the protocol the publication used, in words (``the authors' own
            prompts``).

    Returns:
        ``"yes"``-like text only for what is known: e.g. ``"model: same; prompt: stored
        labels do not record it"``, ``"model: same model, snapshot differs or unknown;
        prompt: this project's own words, not the authors' own prompts"``, ``"no: another
        model (gpt-4o-mini-2024-07-18)"``.
    """
    if not run_judge:
        return "not measured (no verdicts)"
    text = str(run_judge.get("judge_model") or "")
    model, _, protocol = text.partition(", protocol ")
    model = str(run_judge.get("answered_model") or model)  # the judge that answered
    match = model_match(model or None, published_model)
    if match is None:
        return "unknown (model not recorded)"
    if match == DIFFERENT:
        return f"no: another model ({model})"
    if run_judge.get("source") == "stored":
        return f"model: {match}; prompt: not recorded with the stored labels"
    if protocol == "template":
        return f"model: {match}; prompt: a template, not verifiable against {own_protocol}"
    return f"model: {match}; prompt: no (this project's own words, not {own_protocol})"


__all__ = [
    "BINARY_SCORES",
    "binary_template",
    "judge_field_difference",
    "published_judge_match",
    "template_protocol_note",
]
