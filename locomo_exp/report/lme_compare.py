"""Markdown and console text of a LongMemEval comparison (pure, from its JSON layout)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.report.format import MISSING

LABELS = {"overall": "overall", "task_avg": "task-averaged", "abstention": "abstention (_abs)"}


def _p(value: float | None) -> str:
    if value is None:
        return MISSING
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def pair_table(pair: Mapping[str, Any]) -> str:
    """The markdown table of one pair: accuracies, A - B with its interval, McNemar, Holm."""
    lines = [
        f"| figure | n | {pair['a']} (%) | {pair['b']} (%) | A − B (points) | 95% interval "
        "| McNemar exact p | Holm p (6 types) | only A / only B correct |",
        "|---|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for row in pair["rows"]:
        low, high = row["ci"]
        discordant = row["discordant"]
        lines.append(
            f"| {LABELS.get(row['figure'], row['figure'])} | {row['n']} | {row['a'] * 100:.2f} "
            f"| {row['b'] * 100:.2f} | {row['diff']:+.2f} | {low:+.2f} to {high:+.2f} "
            f"| {_p(row['mcnemar_p'])} | {_p(row['holm_p'])} "
            f"| {'–' if not discordant else f'{discordant[0]} / {discordant[1]}'} |"
        )
    return "\n".join(lines)


def render_lme_compare(pairs: Sequence[Mapping[str, Any]]) -> str:
    """``compare.md`` of LongMemEval runs."""
    out = [
        "# LongMemEval comparison",
        "",
        "Questions are paired by `question_id`. Intervals: paired question-level percentile "
        "bootstrap (task average: stratified by type); tests: exact McNemar on the discordant "
        "pairs; the six per-type p-values are Holm-adjusted as one family.",
        "",
    ]
    for pair in pairs:
        out += [
            f"## {pair['a']} vs {pair['b']}",
            "",
            f"{pair['paired']} paired questions; judged in {pair['a']} only: {pair['only_a']}, "
            f"in {pair['b']} only: {pair['only_b']}.",
            "",
        ]
        out += [f"- warning: {w}" for w in pair["warnings"]]
        if pair["warnings"]:
            out.append("")
        out += [pair_table(pair), ""]
    return "\n".join(out)


def console_lines(pairs: Sequence[Mapping[str, Any]]) -> str:
    """The terminal summary: per pair, overall / task-averaged / abstention differences."""
    lines = []
    for pair in pairs:
        lines.append(f"{pair['a']} vs {pair['b']} ({pair['paired']} paired questions)")
        for warning in pair["warnings"]:
            lines.append(f"  warning: {warning}")
        for row in pair["rows"][:3]:
            low, high = row["ci"]
            lines.append(
                f"  {LABELS.get(row['figure'], row['figure']):<20}{row['a'] * 100:>8.2f}"
                f"{row['b'] * 100:>8.2f}  A-B {row['diff']:+6.2f} [{low:+.2f}, {high:+.2f}]"
                f"  McNemar p {_p(row['mcnemar_p'])}"
            )
    return "\n".join(lines)


__all__ = ["console_lines", "pair_table", "render_lme_compare"]
