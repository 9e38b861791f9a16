"""Markdown and console text of a LongMemEval comparison (pure, from its JSON layout)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.report.format import MISSING

LABELS = {"overall": "overall", "task_avg": "task-averaged", "abstention": "abstention (_abs)"}
ALPHA = 0.05
"""The level a row's deciding p-value is read at (two-sided)."""
DECIDES = (
    f"Verdict: the test decides — McNemar p (Holm p for the six types) < {ALPHA:g} names the "
    "higher run; the interval shows how large the difference may be and decides nothing. The "
    "task average has no McNemar test (it weights types, not questions): its interval "
    "decides (excludes 0)."
)
"""The one rule every row's verdict follows, printed above the tables."""


def verdict(row: Mapping[str, Any], a: str = "A", b: str = "B") -> str:
    """Which run a row finds higher, and by which test, in words.

    McNemar decides every row that has it (Holm p for the per-type rows); the task average,
    which has none, is decided by its interval excluding 0. A row whose interval excludes 0
    while its McNemar p is not below :data:`ALPHA` says so, so the two never read as a
    contradiction.

    Args:
        row: one row of a pair (``diff``, ``ci``, ``mcnemar_p``, ``holm_p``).
        a: the name of run A.
        b: the name of run B.

    Returns:
        e.g. ``"A higher (McNemar p 0.0031)"``, ``"no difference shown (McNemar p 0.0700 ≥
        0.05 decides; the interval [+0.40, +9.10] excludes 0)"``.
    """
    low, high = row["ci"]
    higher = a if row["diff"] > 0 else b
    excludes = low > 0 or high < 0
    p = row.get("holm_p") if row.get("holm_p") is not None else row.get("mcnemar_p")
    if p is None:  # the task average: no test, the interval decides
        if excludes:
            return f"{higher} higher (interval excludes 0; no McNemar test)"
        return "no difference shown (interval contains 0; no McNemar test)"
    name = "Holm p" if row.get("holm_p") is not None else "McNemar p"
    if p < ALPHA and row["diff"] != 0:
        return f"{higher} higher ({name} {_p(p)})"
    if excludes:
        return (
            f"no difference shown ({name} {_p(p)} ≥ {ALPHA:g} decides; the interval "
            f"[{low:+.2f}, {high:+.2f}] excludes 0)"
        )
    return f"no difference shown ({name} {_p(p)})"


def _p(value: float | None) -> str:
    if value is None:
        return MISSING
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def pair_table(pair: Mapping[str, Any]) -> str:
    """The markdown table of one pair: accuracies, A - B, interval, McNemar, Holm, verdict.

    The verdict follows :data:`DECIDES` (:func:`verdict`).
    """
    lines = [
        f"| figure | n | {pair['a']} (%) | {pair['b']} (%) | A − B (points) | 95% interval "
        "| McNemar exact p | Holm p (6 types) | only A / only B correct | verdict |",
        "|---|---:|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for row in pair["rows"]:
        low, high = row["ci"]
        discordant = row["discordant"]
        lines.append(
            f"| {LABELS.get(row['figure'], row['figure'])} | {row['n']} | {row['a'] * 100:.2f} "
            f"| {row['b'] * 100:.2f} | {row['diff']:+.2f} | {low:+.2f} to {high:+.2f} "
            f"| {_p(row['mcnemar_p'])} | {_p(row['holm_p'])} "
            f"| {'–' if not discordant else f'{discordant[0]} / {discordant[1]}'} "
            f"| {verdict(row)} |"
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
        DECIDES,
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
                f"  McNemar p {_p(row['mcnemar_p'])}  {verdict(row)}"
            )
    return "\n".join(lines)


__all__ = ["ALPHA", "DECIDES", "console_lines", "pair_table", "render_lme_compare", "verdict"]
