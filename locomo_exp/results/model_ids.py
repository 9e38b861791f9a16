"""Judge model ids compared after snapshot resolution (``gpt-4o-mini-2024-07-18``).

APIs answer an alias (``gpt-4o-mini``) with a dated snapshot (``gpt-4o-mini-2024-07-18``);
a publication often names only the alias. Two ids that differ only by such a date suffix
name the same model family: "same model, snapshot differs or unknown", not "a different
judge".
"""

from __future__ import annotations

import re

SNAPSHOT_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")
"""A dated snapshot's suffix: ``-2024-07-18`` (OpenAI) or ``-20250929`` (Anthropic)."""

SAME = "same model"
SAME_FAMILY = "same model, snapshot differs or unknown"
DIFFERENT = "different model"


def model_family(model: str) -> str:
    """The id without its snapshot date: ``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``."""
    return SNAPSHOT_SUFFIX.sub("", model.strip())


def model_match(ours: str | None, theirs: str | None) -> str | None:
    """How two judge model ids relate.

    Args:
        ours: this run's model (asked for or answered with), or ``None``.
        theirs: the other side's (a publication's, another run's), or ``None``.

    Returns:
        :data:`SAME` (equal ids), :data:`SAME_FAMILY` (equal once the snapshot date is
        removed: a dated snapshot against its alias, or two snapshots), :data:`DIFFERENT`;
        ``None`` when either is unknown.
    """
    if not ours or not theirs:
        return None
    if ours == theirs:
        return SAME
    if model_family(ours) == model_family(theirs):
        return SAME_FAMILY
    return DIFFERENT


__all__ = ["DIFFERENT", "SAME", "SAME_FAMILY", "SNAPSHOT_SUFFIX", "model_family", "model_match"]
