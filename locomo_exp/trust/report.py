"""Report sections and MLflow numbers for judge trust: audit, labels, corrected J, panel.

Pure functions from the result dataclasses of :mod:`locomo_exp.trust` and
:mod:`locomo_exp.stats.correction` to Markdown (the ``report.md`` sections "Judge audit",
"Agreement with human labels", "Corrected J", "Judge panel") and to a flat dict of MLflow
metrics. Rates are shown and logged in percent (0-100); kappa and alpha stay on their
own -1..1 scale; ``None`` values are left out of the metrics.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from locomo_exp.benchmark.locomo import category_slug
from locomo_exp.stats.agreement import BinaryAgreement, Proportion
from locomo_exp.stats.correction import CorrectedJ
from locomo_exp.trust.audit import AuditSummary, inflated_j_warning
from locomo_exp.trust.labels import AgreementReport
from locomo_exp.trust.panel import PanelResult


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _prop(p: Proportion) -> str:
    """``"42.0% [30.1, 55.0] (21/50)"``, or ``"–"`` when nothing was observed."""
    if p.rate is None or p.ci_low is None or p.ci_high is None:
        return "– (0)"
    return (
        f"{100 * p.rate:.1f}% [{100 * p.ci_low:.1f}, {100 * p.ci_high:.1f}] ({p.successes}/{p.n})"
    )


def _rate_count(p: Proportion) -> str:
    return f"{_pct(p.rate)} ({p.successes}/{p.n})"


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _cell(text: object, limit: int = 80) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cat_label(category: int, names: Mapping[int, str] | None) -> str:
    return f"{category} ({names[category]})" if names and category in names else str(category)


def render_audit_section(
    summary: AuditSummary, category_names: Mapping[int, str] | None = None
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
    ]
    if summary.cost_usd is not None:
        lines.append(f"- Audit cost: {summary.cost_usd:.4f} USD")
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
    inflated = inflated_j_warning(summary)
    if inflated:
        lines.append(f"- **Warning: {inflated}.**")
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
                _rate_count(kind.per_category[c]) if c in kind.per_category else "–"
                for c in categories
            ]
            lines.append(f"| {kind.kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _agreement_row(label: str, agreement: BinaryAgreement) -> str:
    return (
        f"| {label} | {agreement.n} | {_prop(agreement.agreement)} | {_num(agreement.kappa)} "
        f"| {_prop(agreement.sensitivity)} | {_prop(agreement.specificity)} |"
    )


def render_labels_section(
    report: AgreementReport, category_names: Mapping[int, str] | None = None
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


def render_corrected_section(corrected: CorrectedJ) -> str:
    """The "Corrected J" section (reported beside the raw J, never instead of it).

    Args:
        corrected: the Rogan-Gladen estimate with its bootstrap interval.

    Returns:
        Markdown text, starting with ``## Corrected J``.
    """
    est = corrected.estimate
    source = (
        "human labels"
        if corrected.source == "labels"
        else "the audit controls (weaker: controls are not real answers)"
    )
    lines = [
        "## Corrected J",
        "",
        "Misclassification-corrected accept rate (Rogan & Gladen 1978: "
        "(J + specificity − 1) / (sensitivity + specificity − 1)), with sensitivity and "
        f"specificity from {source}. The raw J stays the headline.",
        "",
        f"- Raw accept rate J: {_pct(est.raw)} ({corrected.n_questions} questions)",
        f"- Sensitivity {_pct(est.sensitivity)}, specificity {_pct(est.specificity)} "
        f"({corrected.n_labelled} items)",
    ]
    if est.value is None:
        lines.append(f"- Corrected J: not available ({est.reason})")
    else:
        ci = (
            "–"
            if corrected.ci_low is None or corrected.ci_high is None
            else f"[{100 * corrected.ci_low:.1f}, {100 * corrected.ci_high:.1f}]"
        )
        lines.append(
            f"- Corrected J: **{_pct(est.value)}**, {100 * corrected.confidence:g}% interval {ci}"
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


def render_panel_section(panel: PanelResult) -> str:
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
        "| judge | n | J |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {m} | {panel.n_per_model[m]} | {_num(panel.j_per_model[m], 2)} |" for m in panel.models
    ]
    lines.append(f"| **panel (majority)** | {panel.n_panel_scored} | {_num(panel.panel_j, 2)} |")
    lines += [
        "",
        f"- Krippendorff's α ({panel.alpha_level}): {_num(panel.alpha)}",
        f"- Questions without a panel verdict: {len(panel.unscored_reasons)}",
    ]
    reasons: dict[str, int] = {}
    for reason in panel.unscored_reasons.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    lines += [f"  - {reason}: {count}" for reason, count in sorted(reasons.items())]
    if panel.pairwise:
        lines += ["", "| pair | n | agreement | Cohen's κ |", "|---|---:|---:|---:|"]
        for (a, b), agreement in panel.pairwise.items():
            lines.append(
                f"| {a} vs {b} | {agreement.n} | {_prop(agreement.agreement)} "
                f"| {_num(agreement.kappa)} |"
            )
    return "\n".join(lines)


def _safe(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.\-/ ]+", "_", name)


def _put_prop(out: dict[str, float], name: str, p: Proportion) -> None:
    if p.rate is not None:
        out[name] = 100 * p.rate
    if p.ci_low is not None and p.ci_high is not None:
        out[f"{name}_ci_low"] = 100 * p.ci_low
        out[f"{name}_ci_high"] = 100 * p.ci_high


def _put_agreement(out: dict[str, float], prefix: str, a: BinaryAgreement) -> None:
    out[f"{prefix}/n"] = float(a.n)
    _put_prop(out, f"{prefix}/agreement", a.agreement)
    if a.kappa is not None:
        out[f"{prefix}/kappa"] = a.kappa
    _put_prop(out, f"{prefix}/sensitivity", a.sensitivity)
    _put_prop(out, f"{prefix}/specificity", a.specificity)


def _agreement_metrics(
    out: dict[str, float], prefix: str, report: AgreementReport, names: Mapping[int, str] | None
) -> None:
    if report.overall is not None:
        _put_agreement(out, f"{prefix}/overall", report.overall)
    for category, agreement in report.per_category.items():
        _put_agreement(
            out, f"{prefix}/{category_slug(category, dict(names) if names else None)}", agreement
        )
    out[f"{prefix}/n_disagreements"] = float(report.n_disagreements)


def trust_metrics(
    *,
    audit: AuditSummary | None = None,
    labels: AgreementReport | None = None,
    stored: AgreementReport | None = None,
    corrected: CorrectedJ | None = None,
    panel: PanelResult | None = None,
    category_names: Mapping[int, str] | None = None,
) -> dict[str, float]:
    """MLflow-ready numbers for every trust result given (rates on 0-100).

    Names: ``audit/<kind>/accept_rate`` (+ ``_ci_low``, ``_ci_high``), ``audit/<kind>/n``,
    ``audit/<kind>/error_rate``, ``audit/<kind>/<cat slug>/accept_rate``,
    ``audit/false_accept_rate``, ``audit/false_reject_rate``, ``audit/gate_passed``
    (100 passed, 0 failed or not measured; absent when no limit is set),
    ``audit/cost_usd``; ``labels/<overall|cat slug>/{agreement,kappa,sensitivity,
    specificity}`` (+ CI bounds), ``labels/n_ambiguous``; the same under
    ``stored_agreement/`` for stored verdicts; ``j_corrected/overall`` (+ CI bounds,
    ``j_corrected/clipped``); ``panel/<model>/j``, ``panel/j``, ``panel/alpha``,
    ``panel/kappa/<a>__<b>``, ``panel/n_unscored``, ``panel/cost_multiplier``.

    Args:
        audit: the judged audit.
        labels: agreement with human labels.
        stored: agreement with stored verdicts.
        corrected: the corrected J.
        panel: the judge panel.
        category_names: display names by category id for the metric slugs.

    Returns:
        Metric name -> value (floats; ``None`` values are left out).
    """
    out: dict[str, float] = {}
    names = dict(category_names) if category_names else None
    if audit is not None:
        for kind in audit.kinds.values():
            prefix = f"audit/{_safe(kind.kind)}"
            out[f"{prefix}/n"] = float(kind.accept.n)
            _put_prop(out, f"{prefix}/accept_rate", kind.accept)
            if kind.error.rate is not None:
                out[f"{prefix}/error_rate"] = 100 * kind.error.rate
            for category, p in kind.per_category.items():
                _put_prop(out, f"{prefix}/{category_slug(category, names)}/accept_rate", p)
        _put_prop(out, "audit/false_accept_rate", audit.false_accept)
        _put_prop(out, "audit/false_reject_rate", audit.false_reject)
        if audit.gate.state != "not set":  # percent scale: 100 passed, 0 failed/not measured
            out["audit/gate_passed"] = 100.0 if audit.gate.passed else 0.0
        if audit.cost_usd is not None:
            out["audit/cost_usd"] = audit.cost_usd
    if labels is not None:
        _agreement_metrics(out, "labels", labels, names)
        out["labels/n_ambiguous"] = float(labels.n_ambiguous)
    if stored is not None:
        _agreement_metrics(out, "stored_agreement", stored, names)
    if corrected is not None and corrected.estimate.value is not None:
        out["j_corrected/overall"] = 100 * corrected.estimate.value
        if corrected.ci_low is not None and corrected.ci_high is not None:
            out["j_corrected/overall_ci_low"] = 100 * corrected.ci_low
            out["j_corrected/overall_ci_high"] = 100 * corrected.ci_high
        out["j_corrected/clipped"] = 1.0 if corrected.estimate.clipped else 0.0
    if panel is not None:
        for model in panel.models:
            model_j = panel.j_per_model[model]
            if model_j is not None:
                out[f"panel/{_safe(model)}/j"] = model_j
        if panel.panel_j is not None:
            out["panel/j"] = panel.panel_j
        if panel.alpha is not None:
            out["panel/alpha"] = panel.alpha
        for (a, b), agreement in panel.pairwise.items():
            if agreement.kappa is not None:
                out[f"panel/kappa/{_safe(a)}__{_safe(b)}"] = agreement.kappa
        out["panel/n_unscored"] = float(len(panel.unscored_reasons))
        out["panel/cost_multiplier"] = panel.cost_multiplier
    return out
