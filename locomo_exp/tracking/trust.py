"""MLflow numbers of judge trust: audit, labels, stored verdicts, corrected J, panel.

A flat dict of metric names (``audit/...``, ``labels/...``, ``stored_agreement/...``,
``j_corrected/...``, ``panel/...``) from the typed trust results
(:class:`~locomo_exp.results.TrustSummary`, as ``summary.json`` holds them): the names
live here only, never in ``summary.json``. Rates are logged in percent (0-100); kappa and
alpha stay on their own -1..1 scale; ``None`` values are left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from locomo_exp.benchmark.locomo import category_slug
from locomo_exp.results import Agreement, AgreementResult, Rate, TrustSummary


def _safe(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.\-/ ]+", "_", name)


def _put_prop(out: dict[str, float], name: str, p: Rate) -> None:
    if p.rate is not None:
        out[name] = 100 * p.rate
    if p.ci_low is not None and p.ci_high is not None:
        out[f"{name}_ci_low"] = 100 * p.ci_low
        out[f"{name}_ci_high"] = 100 * p.ci_high


def _put_agreement(out: dict[str, float], prefix: str, a: Agreement) -> None:
    out[f"{prefix}/n"] = float(a.n)
    _put_prop(out, f"{prefix}/agreement", a.agreement)
    if a.kappa is not None:
        out[f"{prefix}/kappa"] = a.kappa
    _put_prop(out, f"{prefix}/sensitivity", a.sensitivity)
    _put_prop(out, f"{prefix}/specificity", a.specificity)


def _agreement_metrics(
    out: dict[str, float], prefix: str, report: AgreementResult, names: Mapping[int, str] | None
) -> None:
    if report.overall is not None:
        _put_agreement(out, f"{prefix}/overall", report.overall)
    for category, agreement in report.per_category.items():
        _put_agreement(
            out, f"{prefix}/{category_slug(category, dict(names) if names else None)}", agreement
        )
    out[f"{prefix}/n_disagreements"] = float(report.n_disagreements)


def trust_metrics(
    trust: TrustSummary, category_names: Mapping[int, str] | None = None
) -> dict[str, float]:
    """MLflow-ready numbers for every trust result of a judge job (rates on 0-100).

    Names: ``audit/<kind>/accept_rate`` (+ ``_ci_low``, ``_ci_high``), ``audit/<kind>/n``,
    ``audit/<kind>/error_rate``, ``audit/<kind>/<cat slug>/accept_rate``,
    ``audit/false_accept_rate``, ``audit/false_reject_rate``, ``audit/gate_passed``
    (100 passed, 0 failed or not measured; absent when no limit is set),
    ``audit/cost_usd``; ``labels/<overall|cat slug>/{agreement,kappa,sensitivity,
    specificity}`` (+ CI bounds), ``labels/n_ambiguous``; the same under
    ``stored_agreement/`` for stored verdicts; ``j_corrected/overall`` (+ CI bounds,
    ``j_corrected/clipped``); ``panel/<model>/j``, ``panel/<model>/accept_rate`` (percent
    accepted: the scale of ``panel/j``), ``panel/j``, ``panel/alpha``,
    ``panel/kappa/<a>__<b>``, ``panel/n_unscored``, ``panel/cost_multiplier``.

    Args:
        trust: the trust results (audit, labels, stored verdicts, corrected J, panel; a
            dry run's give no metric).
        category_names: display names by category id for the metric slugs.

    Returns:
        Metric name -> value (floats; ``None`` values are left out).
    """
    out: dict[str, float] = {}
    names = dict(category_names) if category_names else None
    audit, labels, stored = trust.audit, trust.labels, trust.stored
    corrected, panel = trust.corrected, trust.panel
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
    if corrected is not None and corrected.value is not None:
        out["j_corrected/overall"] = 100 * corrected.value
        if corrected.ci_low is not None and corrected.ci_high is not None:
            out["j_corrected/overall_ci_low"] = 100 * corrected.ci_low
            out["j_corrected/overall_ci_high"] = 100 * corrected.ci_high
        out["j_corrected/clipped"] = 1.0 if corrected.clipped else 0.0
    if panel is not None:
        for model in panel.models:
            model_j = panel.j_per_model[model]
            if model_j is not None:
                out[f"panel/{_safe(model)}/j"] = model_j
            accept = panel.accept_per_model.get(model)
            if accept is not None:  # panel/j's scale
                out[f"panel/{_safe(model)}/accept_rate"] = accept
        if panel.panel_j is not None:
            out["panel/j"] = panel.panel_j
        if panel.alpha is not None:
            out["panel/alpha"] = panel.alpha
        for pair in panel.pairs:
            if pair.agreement.kappa is not None:
                out[f"panel/kappa/{_safe(pair.a)}__{_safe(pair.b)}"] = pair.agreement.kappa
        out["panel/n_unscored"] = float(panel.n_unscored)
        out["panel/cost_multiplier"] = panel.cost_multiplier
    return out
