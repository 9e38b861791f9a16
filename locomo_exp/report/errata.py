"""The report's section on the answer key: scores against the original and the corrected key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

SECTION_TITLE = "## Answer key: original vs corrected"


_GROUP_LABELS = {"overall_1_4": "overall 1-4", "overall": "overall"}


def render_errata_section(
    section: Mapping[str, Any], category_label: Callable[[str], str] | None = None
) -> str:
    """The report's "Answer key: original vs corrected" section.

    Args:
        section: from :func:`locomo_exp.scoring.errata.score_errata`.
        category_label: group key (``"1"``, ``"overall_1_4"``...) -> display label
            (default: the key, ``overall 1-4`` ...).

    Returns:
        Markdown: match counts, then per metric a table of group, n, questions affected,
        ceiling, original-key and corrected-key scores (points); a score above its
        ceiling is flagged ``⚠ above ceiling``.
    """
    lines = [
        SECTION_TITLE,
        "",
        f"- Errata: `{section['path']}` (sha256 `{section['sha256']}`)",
        f"- Entries matched to questions (conversation + question text): {section['n_matched']} of "
        f"{section['n_entries']}; {section['n_score_changing']} change scores",
        "- Ceiling: the score a perfect system gets under the original key (questions whose gold "
        "the audit corrects count as lost). J is not rescored against the corrected key.",
    ]
    for metric, groups in section["metrics"].items():
        lines += [
            "",
            f"### {metric}",
            "",
            "| category | n | affected | ceiling | original key | corrected key | |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for group, values in groups.items():
            label = category_label(group) if category_label else _GROUP_LABELS.get(group, group)
            affected = section["ceilings"][group]["affected"]
            flag = "⚠ above ceiling" if values["above_ceiling"] else ""
            lines.append(
                f"| {label} | {values['n']} | {affected} | {values['ceiling']:.2f} "
                f"| {values['original']:.2f} "
                f"| {values['corrected']:.2f} | {flag} |"
            )
    return "\n".join(lines)


__all__ = ["SECTION_TITLE", "render_errata_section"]
