"""Per-category tables of the lexical metrics and of a judge's verdicts stored in the input."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.report.format import fmt_num, fmt_pct
from locomo_exp.results import RunSummary
from locomo_exp.scoring.specs import METRIC_TITLES, OFFICIAL_SUFFIX


def lexical_columns(summary: RunSummary) -> list[tuple[str, str]]:
    """``(metric, title)`` of every lexical metric in the summary, in column order.

    Metrics of :data:`~locomo_exp.scoring.specs.METRIC_TITLES` come first, in registry
    order; a metric no spec knows (e.g. from a newer ``summary.json``) follows under its
    own name, so no computed metric is left out of the report.

    Args:
        summary: the run summary.

    Returns:
        The columns; empty when no lexical metric was computed.
    """
    known = [(m, title) for m, title in METRIC_TITLES.items() if m in summary.metrics]
    unknown = [(m, m) for m in summary.metrics if m not in METRIC_TITLES]
    return known + unknown


def render_lexical_table(summary: RunSummary) -> str:
    """Per-category table of every lexical metric, as percentages (0-100).

    Args:
        summary: output of :func:`locomo_exp.scoring.summary.build_summary`.

    Returns:
        A markdown table; empty string when no lexical metric was computed.
    """
    columns = lexical_columns(summary)
    if not columns:
        return ""
    header = "| category | n | " + " | ".join(title for _, title in columns) + " |"
    rule = "|---|---:|" + "---:|" * len(columns)
    rows = [header, rule]
    for key in summary.shown_groups:
        cells = [fmt_pct(summary.metrics[m][key].mean) for m, _ in columns]
        label = summary.category_label(key)
        if not key.isdigit():
            label = f"**{label}**"
        rows.append(f"| {label} | {summary.counts[key]} | " + " | ".join(cells) + " |")
    if summary.overall_note:
        rows += ["", summary.overall_note]
    return "\n".join(rows)


def render_lexical_section(summary: RunSummary) -> str:
    """The "Token F1 and BLEU-1 (percent)" section, or ``""`` when F1 was not run."""
    table = render_lexical_table(summary)
    if not table:
        return ""
    note = (
        " The authors' mean rounds each question's F1 to 3 decimals first, as LoCoMo's "
        "`evaluate_qa.py` stores it and `analyze_aggr_acc` averages it: compare it with "
        "numbers LoCoMo's own scripts produced."
        if any(m.endswith(OFFICIAL_SUFFIX) for m in summary.metrics)
        else ""
    )
    return "\n".join(
        [
            "## Token F1 and BLEU-1 (percent)",
            "",
            "Overall is the mean over questions. Categories are LoCoMo ids; names are labels "
            "(published tables attach them differently)." + note,
            "",
            table,
        ]
    )


def _source_text(source: Mapping[str, Any] | None) -> str:
    if not source:
        return ""
    return f", read from `{source.get('field')}` (judge: {source.get('text')})"


def render_stored_judge(summary: RunSummary) -> str:
    """Mean of the verdicts another judge left in the input file (0-100), per category.

    Args:
        summary: the run summary (``stored_judge``).

    Returns:
        A markdown section, or ``""`` when the input carries no verdicts.
    """
    stored = summary.stored_judge
    if not stored:
        return ""
    lines = [
        "## Judge verdicts stored in the input (not this run's judge)",
        "",
        "The input file carries another judge's verdicts"
        + _source_text(summary.input.to_json().get("stored_judge_source"))
        + "; their mean, in percent, is what the file's authors published as J.",
        "",
        "| category | n | stored J |",
        "|---|---:|---:|",
    ]
    for key, stats in stored.items():
        if stats.count and key in summary.shown_groups:
            lines.append(
                f"| {summary.category_label(key)} | {stats.count} | {fmt_num(stats.mean)} |"
            )
    return "\n".join(lines)
