"""A run's lexical metrics against the original and the corrected answer key (``data.errata``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from locomo_exp.card import file_sha256
from locomo_exp.errata import ceilings, load_errata, match_errata, score_both_keys
from locomo_exp.scoring.specs import LEXICAL_SPECS

logger = logging.getLogger(__name__)

SECTION_TITLE = "## Answer key: original vs corrected"


def score_errata(
    records: Sequence[Any], errata_path: Path, *, with_bleu1: bool = True
) -> dict[str, Any]:
    """Score every lexical metric against both keys, per category, with the ceilings.

    Args:
        records: the scored questions (``QARecord`` or rows with ``conversation_id``,
            ``question``, ``ground_truth``, ``prediction``, ``category``).
        errata_path: the audit file (:func:`locomo_exp.errata.load_errata`).
        with_bleu1: also score BLEU-1.

    Returns:
        The ``answer_key`` section of ``summary.json``: ``path``, ``sha256``,
        ``n_entries``, ``n_matched``, ``n_score_changing``, ``ceilings`` (group ->
        ``{n, affected, ceiling}``) and ``metrics``: metric (``f1_locomo``, ``f1_squad``,
        ``f1_mem0``, ``bleu1``) -> group -> ``{n, original, corrected, ceiling,
        above_ceiling}``, scores in points (0-100). A question whose prediction is missing
        scores 0 under both keys.

    Raises:
        locomo_exp.errata.ErrataError: the file is missing or malformed (one line).
    """
    entries = load_errata(errata_path)
    matched = match_errata(entries, records)
    missing = {i for i, r in enumerate(records) if getattr(r, "prediction_missing", False)}
    metrics: dict[str, Any] = {}
    for spec in LEXICAL_SPECS:
        if spec.kind != "f1" and not with_bleu1:
            continue

        def scorer(
            pred: str, gold: str, category: int, fn: Callable[..., float] = spec.function
        ) -> float:
            return float(fn(pred, gold, category))

        rows = [_Blank(r) if i in missing else r for i, r in enumerate(records)]
        metrics[spec.metric] = score_both_keys(rows, matched, scorer)
    logger.info("answer key: %d of %d errata entries matched", matched.n_matched, len(entries))
    return {
        "path": str(errata_path),
        "sha256": file_sha256(errata_path),
        "n_entries": len(entries),
        "n_matched": matched.n_matched,
        "n_score_changing": matched.n_score_changing,
        "ceilings": ceilings(records, matched),
        "metrics": metrics,
    }


class _Blank:
    """A record whose prediction is missing: scored with an empty prediction (0)."""

    def __init__(self, record: Any):
        self._record = record

    def __getattr__(self, name: str) -> Any:
        if name == "prediction":
            return ""
        return getattr(self._record, name)


_GROUP_LABELS = {"overall_1_4": "overall 1-4", "overall": "overall"}


def render_errata_section(
    section: Mapping[str, Any], category_label: Callable[[str], str] | None = None
) -> str:
    """The report's "Answer key: original vs corrected" section.

    Args:
        section: from :func:`score_errata`.
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


__all__ = ["SECTION_TITLE", "render_errata_section", "score_errata"]
