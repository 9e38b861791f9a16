"""Report sections of judge trust: audit, labels, stored verdicts, corrected J, panel.

Pure functions from the typed trust results (:class:`~locomo_exp.results.TrustSummary` and
its parts, as ``summary.json`` holds them) to Markdown (the ``report.md`` sections "Judge
audit", "Agreement with human labels", "Corrected J", "Judge panel");
:func:`render_trust_sections` puts a trust job's sections in order. Rates are shown in
percent (0-100); kappa and alpha stay on their own -1..1 scale. The MLflow numbers are
:mod:`locomo_exp.tracking.trust`.
"""

from __future__ import annotations

from collections.abc import Mapping

from locomo_exp.report.format import MISSING
from locomo_exp.results import (
    Agreement,
    AgreementResult,
    AuditResult,
    CorrectedJResult,
    PanelSummary,
    Rate,
    TrustSummary,
)
from locomo_exp.results.words import counted


def _pct(x: float | None) -> str:
    return MISSING if x is None else f"{100 * x:.1f}%"


def _prop(p: Rate) -> str:
    """``"42.0% [30.1, 55.0] (21/50)"``, or ``"n/a (0)"`` when nothing was observed."""
    if p.rate is None or p.ci_low is None or p.ci_high is None:
        return f"{MISSING} (0)"
    return (
        f"{100 * p.rate:.1f}% [{100 * p.ci_low:.1f}, {100 * p.ci_high:.1f}] ({p.successes}/{p.n})"
    )


def _rate_count(p: Rate) -> str:
    return f"{_pct(p.rate)} ({p.successes}/{p.n})"


def _num(x: float | None, digits: int = 3) -> str:
    return MISSING if x is None else f"{x:.{digits}f}"


def _cell(text: object, limit: int = 80) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cat_label(category: int, names: Mapping[int, str] | None) -> str:
    return f"{category} ({names[category]})" if names and category in names else str(category)


def render_audit_section(
    summary: AuditResult, category_names: Mapping[int, str] | None = None
) -> str:
    """The "Judge audit" section (goes right under J).

    Args:
        summary: the judged audit.
        category_names: display names by category id (optional).

    Returns:
        Markdown text, starting with ``## Judge audit``.
    """
    lines = [
        "## Judge audit",
        "",
        "Control answers with a known verdict, built from this file's own questions and judged "
        "like the real answers (never part of J). Accept rates with 95% Wilson intervals; an "
        f"answer is accepted when its verdict is ≥ {summary.threshold:g}.",
        "",
        "| control | should be | n | unscored | accepted | judge error |"
        + (" cost (USD) |" if summary.cost_usd is not None else ""),
        "|---|---|---:|---:|---:|---:|" + ("---:|" if summary.cost_usd is not None else ""),
    ]
    if summary.controls == 0:  # a gate asked for, no control judged: nothing measured
        lines[2:] = ["No control was judged, so nothing about the judge was measured here."]
    for kind in summary.kinds.values():
        should = "accepted" if kind.expected_accept else "rejected"
        error = ("false reject " if kind.expected_accept else "false accept ") + _pct(
            kind.error.rate
        )
        row = (
            f"| {kind.kind} | {should} | {kind.accept.n} | {kind.n_unscored} "
            f"| {_prop(kind.accept)} "
            f"| {error} |"
        )
        if summary.cost_usd is not None:
            row += f" {kind.cost_usd or 0.0:.4f} |"
        lines.append(row)
    lines += [
        "",
        f"- False-accept rate over all should-be-rejected controls: {_prop(summary.false_accept)}",
        f"- False-reject rate over all should-be-accepted controls: {_prop(summary.false_reject)}",
    ] if summary.controls else [""]
    if summary.cost_usd is not None:
        lines.append(
            f"- Audit cost: {summary.cost_usd:.4f} USD (the calls made, at the model's list "
            "price: see the cost line under J; cached calls are free)"
        )
    limits = [
        f"{name} {_pct(value)}"
        for name, value in (
            ("max_false_accept", summary.max_false_accept),
            ("max_false_reject", summary.max_false_reject),
        )
        if value is not None
    ]
    if limits:
        verdict = {"failed": "FAILED", "not measured": "NOT MEASURED (fails)"}.get(
            summary.gate.state, summary.gate.state
        )
        lines.append(f"- Gate ({', '.join(limits)}, per kind): **{verdict}**")
        lines += [f"  - {failure}" for failure in summary.gate.failures]
    else:
        lines.append(
            "- Gate: not set (no judge.audit.max_false_accept or judge.audit.max_false_reject)"
        )
    checks = {
        "false_accept": "Check of false accepts (is J inflated?):",
        "false_reject": "Check of false rejects (is J deflated?):",
    }
    lines += [
        f"- {question} {summary.checks[name]}"
        for name, question in checks.items()
        if name in summary.checks
    ]
    lines += [
        f"- **Warning: {warning}.**"
        for warning in (summary.j_inflated, summary.j_deflated)
        if warning
    ]
    for kind in summary.kinds.values():
        for note, count in kind.notes:
            lines.append(f"- {kind.kind}: {count} control(s): {note}")
    categories = sorted({c for k in summary.kinds.values() for c in k.per_category})
    if categories:
        lines += [
            "",
            "### Accept rate per category",
            "",
            "| control | " + " | ".join(_cat_label(c, category_names) for c in categories) + " |",
            "|---|" + "---:|" * len(categories),
        ]
        for kind in summary.kinds.values():
            cells = [
                _rate_count(kind.per_category[c]) if c in kind.per_category else MISSING
                for c in categories
            ]
            lines.append(f"| {kind.kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _agreement_row(label: str, agreement: Agreement) -> str:
    return (
        f"| {label} | {agreement.n} | {_prop(agreement.agreement)} | {_num(agreement.kappa)} "
        f"| {_prop(agreement.sensitivity)} | {_prop(agreement.specificity)} |"
    )


def render_labels_section(
    report: AgreementResult, category_names: Mapping[int, str] | None = None
) -> str:
    """The "Agreement with human labels" (or "... with stored verdicts") section.

    Args:
        report: the judge against human labels or stored verdicts.
        category_names: display names by category id (optional).

    Returns:
        Markdown text, starting with ``## Agreement with human labels`` (or
        ``## Agreement with stored verdicts``).
    """
    title = "human labels" if report.reference_name == "human labels" else "stored verdicts"
    ref = "humans" if title == "human labels" else "stored judge"
    lines = [f"## Agreement with {title}", ""]
    if report.overall is None:
        return "\n".join(lines + ["No question could be compared."])
    lines += [
        f"Sensitivity: share of answers the {ref} call correct that our judge accepts; "
        f"specificity: share of answers the {ref} call wrong that it rejects "
        "(95% Wilson intervals).",
        "",
        "| category | n | agreement | Cohen's κ | sensitivity | specificity |",
        "|---|---:|---:|---:|---:|---:|",
        _agreement_row("overall", report.overall),
    ]
    lines += [
        _agreement_row(_cat_label(c, category_names), a) for c, a in report.per_category.items()
    ]
    (tp, fn), (fp, tn) = report.overall.table
    lines += [
        "",
        f"| {ref} \\ our judge | accepted | rejected |",
        "|---|---:|---:|",
        f"| correct | {tp} | {fn} |",
        f"| wrong | {fp} | {tn} |",
        "",
    ]
    if title == "human labels":
        lines.append(f"- AMBIGUOUS labels left out: {report.n_ambiguous}")
        if report.n_unmatched:
            lines.append(f"- Labels matching no question: {report.n_unmatched}")
    if report.n_unscored:
        lines.append(f"- Compared questions without a verdict from our judge: {report.n_unscored}")
    if report.disagreements:
        shown = len(report.disagreements)
        lines += [
            "",
            f"### Disagreements ({shown} of {report.n_disagreements} shown)",
            "",
            f"| question id | category | question | gold | prediction | {ref} | our verdict |",
            "|---|---:|---|---|---|---|---:|",
        ]
        for d in report.disagreements:
            lines.append(
                f"| {_cell(d.question_id, 40)} | {d.category} | {_cell(d.question)} "
                f"| {_cell(d.gold)} | {_cell(d.prediction)} "
                f"| {'correct' if d.reference else 'wrong'} | {d.verdict:g} |"
            )
    return "\n".join(lines)


def render_corrected_section(corrected: CorrectedJResult, *, figure: str = "Corrected J",
                             headline: str = "J", unit: str = "question") -> str:
    """The "Corrected J" section (reported beside the raw figure, never instead of it).

    Args:
        corrected: the Rogan-Gladen estimate with its bootstrap interval (shares 0-1).
        figure: the corrected figure's name, as the benchmark's console names it
            (LoCoMo: ``Corrected J``; a plug-in: ``Corrected accept rate``).
        headline: the raw figure that stays the headline (LoCoMo: ``J``).
        unit: what one judged unit is (``question``, ``rubric item``, ``item``).

    Returns:
        Markdown text, starting with ``## <figure>``.
    """
    est = corrected
    source = (
        "human labels"
        if corrected.source == "labels"
        else "the audit controls (weaker: controls are not real answers)"
    )
    lines = [
        f"## {figure}",
        "",
        "Misclassification-corrected accept rate (Rogan & Gladen 1978: "
        "(accept rate + specificity − 1) / (sensitivity + specificity − 1)), with sensitivity "
        f"and specificity from {source}. The raw {headline} stays the headline.",
        "",
        f"- Raw accept rate (share of answers with a verdict ≥ 50, not {headline}): "
        f"{_pct(est.raw)} ({counted(corrected.n_questions, unit)})",
        f"- Sensitivity {_pct(est.sensitivity)}, specificity {_pct(est.specificity)} "
        f"({corrected.n_labelled} items)",
    ]
    if est.value is None:
        lines.append(f"- {figure}: not available ({est.reason})")
    else:
        ci = (
            MISSING
            if corrected.ci_low is None or corrected.ci_high is None
            else f"[{100 * corrected.ci_low:.1f}, {100 * corrected.ci_high:.1f}]"
        )
        lines.append(
            f"- {figure}: **{_pct(est.value)}**, {100 * corrected.confidence:g}% interval {ci}"
        )
        if est.clipped:
            lines.append(
                f"- Note: the estimate {100 * (est.unclipped or 0.0):.1f}% fell outside [0, 100] "
                "and was clipped"
            )
    lines.append(f"- Interval: {corrected.method}")
    if corrected.n_boot_invalid:
        lines.append(
            f"- {corrected.n_boot_invalid} replicate(s) had sensitivity + specificity ≤ 1 "
            "and were left out"
        )
    return "\n".join(lines)


def render_panel_section(panel: PanelSummary) -> str:
    """The "Judge panel" section.

    Args:
        panel: the combined verdicts of the panel.

    Returns:
        Markdown text, starting with ``## Judge panel``.
    """
    lines = [
        "## Judge panel",
        "",
        f"Every answer judged by {len(panel.models)} models; the panel verdict is the majority "
        "of accepts among the models that gave a verdict (ties: unscored). "
        f"Cost: {panel.cost_multiplier:g}× a single judge.",
        "",
        "A member's J is its mean verdict (0-100); the panel's verdict is accept or reject, so "
        "its J is the percent of questions the majority accepts: compare it with the members' "
        "accept rates (verdict ≥ the accept threshold), not with their J.",
        "",
        "| judge | n | J (mean verdict) | accepted (%) |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {m} | {panel.n_per_model[m]} | {_num(panel.j_per_model[m], 2)} "
        f"| {_num(panel.accept_per_model.get(m), 2)} |"
        for m in panel.models
    ]
    lines.append(
        f"| **panel (majority)** | {panel.n_panel_scored} | n/a (accept or reject) "
        f"| {_num(panel.panel_j, 2)} |"
    )
    lines += [
        "",
        f"- Krippendorff's α ({panel.alpha_level}): {_num(panel.alpha)}",
        f"- Questions without a panel verdict: {panel.n_unscored}",
    ]
    lines += [f"  - {reason}: {count}" for reason, count in sorted(panel.unscored.items())]
    if panel.pairs:
        lines += ["", "| pair | n | agreement | Cohen's κ |", "|---|---:|---:|---:|"]
        for pair in panel.pairs:
            lines.append(
                f"| {pair.a} vs {pair.b} | {pair.agreement.n} | {_prop(pair.agreement.agreement)} "
                f"| {_num(pair.agreement.kappa)} |"
            )
    return "\n".join(lines)


def render_trust_sections(
    outcome: TrustSummary, category_names: Mapping[int, str] | None = None, *,
    figure: str = "Corrected J", headline: str = "J", unit: str = "question",
) -> list[str]:
    """The report's trust sections of one judge job, in order.

    Args:
        outcome: from :func:`locomo_exp.trust.job.run_trust`, or read back from
            ``summary.json`` (:meth:`~locomo_exp.results.TrustSummary.from_json`).
        category_names: display names by category id.
        figure: the corrected figure's name (:func:`render_corrected_section`).
        headline: the raw figure that stays the headline.
        unit: what one judged unit is.

    Returns:
        Markdown sections: audit, human labels, stored verdicts, corrected J (or why it is
        not available), panel; only those that ran.
    """
    names = dict(category_names) if category_names else None
    sections = []
    if outcome.audit is not None:
        sections.append(render_audit_section(outcome.audit, names))
    if outcome.labels is not None:
        sections.append(render_labels_section(outcome.labels, names))
    if outcome.stored is not None:
        sections.append(render_labels_section(outcome.stored, names))
    if outcome.corrected is not None:
        sections.append(render_corrected_section(outcome.corrected, figure=figure,
                                                 headline=headline, unit=unit))
    elif outcome.corrected_unavailable is not None:
        sections.append(f"## {figure}\n\nNot available: " + outcome.corrected_unavailable + ".")
    if outcome.panel is not None:
        sections.append(render_panel_section(outcome.panel))
    return sections
