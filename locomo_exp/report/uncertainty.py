"""Bootstrap confidence intervals and the judge's agreement between runs."""

from __future__ import annotations

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS
from locomo_exp.report.format import MISSING, fmt_num
from locomo_exp.results import JudgeSummary, Reliability, RunSummary

_CI_COLUMNS = {"f1": ("F1", 100.0), "j_mean": ("J", 1.0)}
"""Bootstrapped metric -> (column title, multiplier to the report's 0-100)."""


def render_uncertainty(summary: RunSummary) -> str:
    """Bootstrap 95% confidence intervals of F1 (percent) and J (0-100) per category.

    Args:
        summary: run summary with an ``analysis``.

    Returns:
        A markdown section, or ``""`` when nothing was bootstrapped.
    """
    analysis = summary.analysis
    if analysis is None or not analysis.bootstrap:
        return ""
    metrics = [(m, *_CI_COLUMNS.get(m, ("J", 1.0))) for m in analysis.bootstrap]
    lines = [
        "## Uncertainty",
        "",
        f"{int(analysis.confidence * 100)}% percentile-bootstrap intervals over questions "
        f"({analysis.bootstrap_samples} resamples, seed {analysis.seed}).",
        "",
        "| category | " + " | ".join(f"{title} 95% CI" for _, title, _ in metrics) + " |",
        "|---|" + "---:|" * len(metrics),
    ]
    for key in CATEGORY_GROUPS:
        cells = []
        for metric, _, scale in metrics:
            interval = analysis.bootstrap[metric].get(key)
            cells.append(
                MISSING
                if interval is None
                else f"{interval.low * scale:.2f} – {interval.high * scale:.2f}"
            )
        lines.append(f"| {summary.category_label(key)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_reliability(reliability: Reliability | None, judge: JudgeSummary | None) -> str:
    """Judge agreement between runs and outcome counts.

    Args:
        reliability: ``summary.analysis.reliability`` (``None`` when the judge did not run).
        judge: ``summary.judge``, for the outcome counts and the questions whose prompt
            was too long.

    Returns:
        A markdown section, or ``""`` without reliability figures.
    """
    if reliability is None:
        return ""
    counts = judge.counts if judge is not None else {}
    too_long = list(judge.prompt_too_long_questions) if judge is not None else []
    share = reliability.unanimous_share
    return "\n".join(
        [
            "## Judge reliability",
            "",
            f"- Krippendorff's alpha between runs ({reliability.level} level): "
            f"{fmt_num(reliability.krippendorff_alpha, 3)}",
            f"- Questions whose valid runs all agree: "
            f"{MISSING if share is None else f'{share * 100:.1f}%'} of {reliability.questions}",
            f"- Parse failures: {counts.get('parse_failure', 0)}; "
            f"API errors: {counts.get('api_error', 0)}",
        ]
        + (
            [
                "- Replies without a verdict (empty, cut, refused; not cached): "
                f"{counts['no_verdict']}"
            ]
            if counts.get("no_verdict")
            else []
        )
        + ([f"- Prompt too long for the API (J n/a): {', '.join(too_long)}"] if too_long else [])
    )
