"""BEAM's facts: the ten memory abilities, their order, and what each probing question holds.

Source: BEAM @ b2a3ee8 (Tavakoli et al., arXiv 2510.27246), ``chats/<tier>/<k>/
probing_questions/probing_questions.json``: one object with the ten ability keys, two questions
each. A question's position in its chat is its index when the file is read ability by ability
in the file's own key order (the order of :data:`ABILITIES` is not assumed).
"""

from __future__ import annotations

NAME = "beam"
"""The registry key and ``benchmark`` field of every output."""

TITLE = "BEAM"
"""The benchmark's name as reports print it."""

ABILITIES: tuple[str, ...] = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)
"""The ten memory abilities, in the order reports list them (alphabetical, as BEAM's files)."""

EVENT_ORDERING = "event_ordering"
"""The one ability the authors score by Kendall tau-b instead of a rubric mean."""

GOLD_FIELDS: dict[str, str | None] = {
    "abstention": "ideal_response",
    "contradiction_resolution": "ideal_answer",
    "event_ordering": "answer",
    "information_extraction": "answer",
    "instruction_following": None,
    "knowledge_update": "answer",
    "multi_session_reasoning": "answer",
    "preference_following": None,
    "summarization": "ideal_summary",
    "temporal_reasoning": "answer",
}
"""Each ability's gold-answer field in the authors' probing file (``None``: compliance fields
only). Neither profile reads it; the reader keeps it for the scores file."""


def ability_title(ability: str) -> str:
    """``multi_session_reasoning`` -> ``multi-session reasoning`` (report labels)."""
    return ability.replace("_", " ").replace("multi session", "multi-session")


__all__ = ["ABILITIES", "EVENT_ORDERING", "GOLD_FIELDS", "NAME", "TITLE", "ability_title"]
