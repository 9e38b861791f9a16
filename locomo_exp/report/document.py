"""The whole ``report.md``: the sections in order (a pure function of the run's results)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.config import BaselineMetric, BaselineSet
from locomo_exp.report.baselines import (
    render_f1_comparison,
    render_j_comparison,
    render_latency_comparison,
)
from locomo_exp.report.card import (
    baseline_card_differences,
    baseline_card_unstated,
    render_card_markdown,
)
from locomo_exp.report.errata import render_errata_section
from locomo_exp.report.error_analysis import render_error_analysis
from locomo_exp.report.fidelity import fidelity_sections
from locomo_exp.report.header import render_header, render_skipped, render_status
from locomo_exp.report.input import render_stored_judge_detail
from locomo_exp.report.judge import render_judge_section
from locomo_exp.report.judge_match import template_protocol_note
from locomo_exp.report.lexical import render_lexical_section, render_stored_judge
from locomo_exp.report.uncertainty import render_reliability, render_uncertainty
from locomo_exp.results import RunSummary


def _baseline_card_lines(card: Mapping[str, Any] | None, baseline: BaselineSet) -> list[str]:
    """The note under a baseline's heading: how this run was measured differently.

    One line for the card fields the baseline states and this run differs on, one for the
    comparability fields it does not state (so they could not be checked); ``[]`` when
    neither, or when the run or the baseline has no card.
    """
    if not card or not baseline.card:
        return []
    # the F1 tables already score with the baseline's variant (f1_<variant>)
    differences = [
        d for d in baseline_card_differences(card, baseline.card) if not d.startswith("f1.")
    ]
    unstated = baseline_card_unstated(card, baseline.card)
    lines = []
    if differences:
        lines.append(f"Measured differently from {baseline.title}: " + "; ".join(differences))
    template = template_protocol_note(card, baseline.card)
    if template:  # what a binary template shares with a binary protocol, what is unverified
        lines.append(f"As {baseline.title} judged: {template}")
    if unstated:
        lines.append(f"Not stated by {baseline.title}, so not checked: " + "; ".join(unstated))
    if not lines:
        return []
    text = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
    return [text, ""]


def _with_note(table: str, note: list[str]) -> list[str]:
    """A baseline table (``### vs ...`` heading first) with its note under its heading."""
    if not note or not table.startswith("### "):
        return [table + "\n"]
    heading, _, rest = table.partition("\n\n")
    return [heading, "", *note, rest + "\n"]


def render_report(
    summary: RunSummary,
    baselines: Mapping[str, BaselineSet] | None = None,
    plots: Sequence[str] = (),
    card: Mapping[str, Any] | None = None,
    answer_key: Mapping[str, Any] | None = None,
) -> str:
    """Render ``report.md`` from a run summary.

    Sections, each present only when it has content: header (status, input, versions),
    token F1 and BLEU-1, F1 vs baselines, stored judge verdicts, J, J vs baselines,
    latency, uncertainty, judge reliability, error analysis, plots, skipped records.

    Args:
        summary: output of :func:`locomo_exp.scoring.summary.build_summary`, with an ``analysis``
            from :func:`locomo_exp.scoring.summary.analyse` when available.
        baselines: selected baseline sets (``conf/baselines/``).
        plots: PNG file names (relative to the report) to embed.
        card: the run's disclosure card (:func:`locomo_exp.report.card.build_card`): its "How this
            was measured" block follows the title, and the card fields a baseline set
            states and this run differs on are listed above that set's table.
        answer_key: the ``data.errata`` scores
            (:func:`locomo_exp.scoring.errata.score_errata`): section "Answer key:
            original vs corrected" after the lexical section.

    Returns:
        Markdown text ending with a newline. Scores are shown as percentages (0-100).
    """
    baselines = baselines or {}
    lines = [render_header(summary, card_shown=bool(card))]
    if card:  # after the title and the run-status block (a failed part reads first)
        title, _, rest = lines[0].partition("\n\n")
        status = render_status(summary)
        head = [title]
        if status and rest.startswith(status):
            head += ["", status]
            rest = rest[len(status) :].lstrip("\n")
        lines = [*head, "", render_card_markdown(card), rest]
    lexical = render_lexical_section(summary)
    if lexical:
        lines += ["", lexical]
    if answer_key:
        lines += ["", render_errata_section(answer_key, summary.category_label)]
    f1_sets = [b for b in baselines.values() if b.metric == BaselineMetric.f1]
    if lexical and f1_sets:
        lines += ["", "## F1 vs published baselines"]
        lines.append("")
        for b in f1_sets:
            lines += _with_note(render_f1_comparison(summary, b), _baseline_card_lines(card, b))
    stored = render_stored_judge(summary)
    if stored:
        lines += ["", stored]
    detail = render_stored_judge_detail(summary.stored_judge_detail, summary.category_label)
    if detail:
        lines += ["", detail]
    for section in fidelity_sections(summary):  # data.runs per run; stored vs recomputed
        lines += ["", section]
    if summary.judge is not None:
        lines += ["", render_judge_section(summary)]
        j_sets = [b for b in baselines.values() if b.metric == BaselineMetric.j]
        if j_sets and summary.judge.j:
            lines += ["", "## J vs published baselines"]
            lines.append("")
            for b in j_sets:
                lines += _with_note(
                    render_j_comparison(summary, b), _baseline_card_lines(card, b)
                )
    latency_sets = [b for b in baselines.values() if b.metric == BaselineMetric.latency]
    lines += ["", render_latency_comparison(summary, latency_sets)]
    reliability = summary.analysis.reliability if summary.analysis is not None else None
    for section in (
        render_uncertainty(summary),
        render_reliability(reliability, summary.judge),
        render_error_analysis(summary),
    ):
        if section:
            lines += ["", section]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{name}]({name})" for name in plots]
    skipped = render_skipped(summary)
    if skipped:
        lines += ["", skipped]
    return "\n".join(lines) + "\n"
