"""Bootstrap confidence intervals and the judge's agreement between runs."""

from __future__ import annotations

from locomo_exp.benchmark.locomo import CATEGORY_GROUPS
from locomo_exp.report.format import MISSING, fmt_num
from locomo_exp.results import BootstrapCI, JudgeSummary, Reliability, RunSummary
from locomo_exp.results.analysis import CONVERSATION
from locomo_exp.results.template_note import parse_failure_words
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS

_CI_COLUMNS = {"f1": ("F1", 100.0), "j_mean": ("J", 1.0)}
"""Bootstrapped metric -> (column title, multiplier to the report's 0-100)."""


def _cell(interval: BootstrapCI | None, scale: float) -> str:
    if interval is None:
        return MISSING
    return f"{interval.low * scale:.2f} – {interval.high * scale:.2f}"


def unjudged_categories(summary: RunSummary, key: str) -> list[int]:
    """Categories of group ``key`` that have questions but were not judged.

    J of such a group is n/a in the J table and the console (its questions were not all
    judged), so its interval is n/a too; the bootstrap pooled only the judged ones.

    Args:
        summary: the run summary.
        key: a group key (``"1"``..``"5"``, ``overall_1_4``, ``overall``).

    Returns:
        The category ids, sorted; ``[]`` when the judge did not run or judged them all.
    """
    judge = summary.judge
    if judge is None or not judge.categories:
        return []
    present = {int(k) for k, n in summary.counts.items() if k.isdigit() and n}
    judged = {int(c) for c in judge.categories}
    return sorted((set(CATEGORY_GROUPS.get(key, ())) & present) - judged)


def render_uncertainty(summary: RunSummary) -> str:
    """Bootstrap 95% confidence intervals of F1 (percent) and J (0-100) per category.

    With conversation ids: the conversation-cluster interval first (the headline; the
    number of conversations per row beside it), then the question-level one, each column
    labelled. Without: the question-level interval, and why it is the only one.

    Args:
        summary: run summary with an ``analysis``.

    Returns:
        A markdown section, or ``""`` when nothing was bootstrapped. J's interval of a group
        with unjudged questions (overall (1-5) when category 5 was not judged) is n/a, as
        its J is, with one line saying why.
    """
    analysis = summary.analysis
    if analysis is None or not analysis.bootstrap:
        return ""
    metrics = [(m, *_CI_COLUMNS.get(m, ("J", 1.0))) for m in analysis.bootstrap]
    level = f"{int(analysis.confidence * 100)}%"
    settings = f"{analysis.bootstrap_samples} resamples, seed {analysis.seed}"
    clustered = analysis.headline == CONVERSATION and bool(analysis.cluster_bootstrap)
    if clustered:
        text = (
            f"{level} percentile-bootstrap intervals ({settings}). **Conversations** (the "
            "headline, read this one): whole conversations resampled, as LoCoMo's questions "
            f"are nested in {analysis.clusters.get('overall', 0)} conversations; `conv.` is "
            f"the number of conversations in the row (n/a below {MIN_RUN_CLUSTERS}). "
            "**Questions**: questions resampled as if independent, usually narrower."
        )
        header = ["category", "conv."]
        for _, title, _ in metrics:
            header += [f"{title} {level} CI (conversations)", f"{title} {level} CI (questions)"]
    else:
        reason = f": {analysis.headline_note}" if analysis.headline_note else ""
        text = f"{level} percentile-bootstrap intervals over questions only ({settings}){reason}."
        header = ["category", *(f"{title} {level} CI (questions)" for _, title, _ in metrics)]
    lines = [
        "## Uncertainty",
        "",
        text,
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    notes: list[str] = []
    for key in summary.shown_groups:
        cells = [str(analysis.clusters.get(key, 0))] if clustered else []
        unjudged = unjudged_categories(summary, key)
        for metric, _, scale in metrics:
            if metric == "j_mean" and unjudged:
                cells += [MISSING] * (2 if clustered else 1)
                continue
            if clustered:
                cells.append(_cell(analysis.cluster_bootstrap.get(metric, {}).get(key), scale))
            cells.append(_cell(analysis.bootstrap[metric].get(key), scale))
        lines.append(f"| {summary.category_label(key)} | " + " | ".join(cells) + " |")
        if unjudged and key.startswith("overall") and "j_mean" in analysis.bootstrap:
            notes.append(
                f"J of {summary.category_label(key)} is n/a, and so is its interval: category "
                + ", ".join(str(c) for c in unjudged)
                + " was not judged (judge.categories)."
            )
    return "\n".join(lines + ([""] + notes if notes else []))


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
            f"- Parse failures: {parse_failure_words(judge.to_json()) if judge else 0}; "
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
