"""Error analysis: the questions with the highest and lowest F1 and J, and F1-J disagreements."""

from __future__ import annotations

from locomo_exp.report.format import fmt_num, table_cell
from locomo_exp.results import QuestionBrief, RunSummary

_TITLES = {"f1": "F1", "j_mean": "J"}
CATEGORY_5 = 5
"""LoCoMo's adversarial category, whose ground truth is the trap answer."""


def _percent(value: float | None) -> str:
    return fmt_num(value * 100 if value is not None else None)


def _question_cells(row: QuestionBrief) -> str:
    return (
        f"| {table_cell(row.question_id, 20)} | {row.category} | {table_cell(row.question)} "
        f"| {table_cell(row.ground_truth, 50)} | {table_cell(row.prediction, 60)} "
    )


def render_error_analysis(summary: RunSummary) -> str:
    """Top/bottom questions by F1 and by J, and where F1 and J disagree most.

    Args:
        summary: run summary with an ``analysis``.

    Returns:
        A markdown section (F1 in percent, J 0-100), or ``""`` without extremes. The J
        column holds this project's J, or the file's stored verdicts (titled "stored J")
        when no judge ran; the note on category 5's trap answers appears only when a
        category 5 question is listed.
    """
    analysis = summary.analysis
    if analysis is None or not analysis.extremes:
        return ""
    listed = [row for ends in analysis.extremes.values() for row in (*ends.bottom, *ends.top)]
    listed += list(analysis.disagreements or ())
    j_key = "j_mean" if "j_mean" in analysis.extremes else "stored_judge_score"
    j_title = "J" if j_key == "j_mean" or summary.stored_judge is None else "stored J"
    lines = ["## Error analysis"]
    if any(str(row.category) == str(CATEGORY_5) for row in listed):
        lines += [
            "",
            "For category 5 (adversarial) the ground truth column holds the *trap* answer: "
            "LoCoMo's scorer gives 1 only when the prediction says \"no information available\" "
            'or "not mentioned", so repeating the trap answer scores 0.',
        ]
    for metric, ends in analysis.extremes.items():
        title = _TITLES.get(metric, metric)
        for end, rows in (("bottom", ends.bottom), ("top", ends.top)):
            lines += [
                "",
                f"### {'Lowest' if end == 'bottom' else 'Highest'} 5 by {title}",
                "",
                f"| id | cat | question | ground truth | prediction | F1 | {j_title} |",
                "|---|---:|---|---|---|---:|---:|",
            ]
            for row in rows:
                lines.append(
                    _question_cells(row)
                    + f"| {_percent(row.score('f1'))} | {fmt_num(row.score(j_key))} |"
                )
    if analysis.disagreements:
        lines += [
            "",
            "### Largest F1-J disagreements (J - 100·F1)",
            "",
            "| id | cat | question | ground truth | prediction | F1 | J | gap |",
            "|---|---:|---|---|---|---:|---:|---:|",
        ]
        for row in analysis.disagreements:
            gap = row.gap if row.gap is not None else 0.0
            lines.append(
                _question_cells(row)
                + f"| {_percent(row.score('f1'))} | {fmt_num(row.score('j_mean'))} | {gap:+.1f} |"
            )
    return "\n".join(lines)
