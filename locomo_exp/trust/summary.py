"""The trust engines' results as the typed results of :mod:`locomo_exp.results.trust`.

The audit (:mod:`.audit`), the label and stored-verdict comparisons (:mod:`.labels`), the
corrected J (:mod:`locomo_exp.stats.correction`) and the panel (:mod:`.panel`) each return
their own dataclasses; these functions copy what the report and MLflow read into the
:class:`~locomo_exp.results.TrustSummary` parts that ``summary.json`` holds. Values are
copied, never recomputed: rates stay 0-1, J and verdicts 0-100.
"""

from __future__ import annotations

from collections.abc import Mapping

from locomo_exp.benchmark import LOCOMO, JudgeCheckLimits
from locomo_exp.results import (
    Agreement,
    AgreementResult,
    AuditKindResult,
    AuditResult,
    CorrectedJResult,
    PanelPair,
    PanelSummary,
    Rate,
)
from locomo_exp.stats.agreement import BinaryAgreement, Proportion
from locomo_exp.stats.correction import CorrectedJ
from locomo_exp.trust.audit import AuditSummary
from locomo_exp.trust.checks import (
    DEFLATED,
    INFLATED,
    JudgeChecks,
    KnownRate,
    agreement_checks,
    audit_checks,
)
from locomo_exp.trust.labels import AgreementReport
from locomo_exp.trust.panel import PanelResult


def rate_result(p: Proportion) -> Rate:
    """A :class:`~locomo_exp.stats.agreement.Proportion` as a :class:`Rate` (same values)."""
    return Rate(p.successes, p.n, p.rate, p.ci_low, p.ci_high, p.confidence)


def agreement_result(a: BinaryAgreement) -> Agreement:
    """A :class:`~locomo_exp.stats.agreement.BinaryAgreement` as an :class:`Agreement`."""
    return Agreement(
        tp=a.tp,
        fn=a.fn,
        fp=a.fp,
        tn=a.tn,
        agreement=rate_result(a.agreement),
        kappa=a.kappa,
        sensitivity=rate_result(a.sensitivity),
        specificity=rate_result(a.specificity),
    )


def check_audit(audit: AuditSummary, limits: JudgeCheckLimits = LOCOMO.judge_checks) -> JudgeChecks:
    """The judge's checks on the audit: J inflated or deflated, per kind and pooled.

    Args:
        audit: from :func:`locomo_exp.trust.audit.summarise_audit`.
        limits: the benchmark's limits (LoCoMo's by default).

    Returns:
        :func:`locomo_exp.trust.checks.audit_checks` on the kinds' error rates.
    """
    kinds = [
        KnownRate(
            f"known-{'right' if k.expected_accept else 'wrong'} {k.kind} controls",
            k.expected_accept,
            k.error,
        )
        for k in audit.kinds.values()
    ]
    return audit_checks(kinds, audit.false_accept, audit.false_reject, limits)


def check_agreement(
    report: AgreementReport | None,
    reference: str,
    limits: JudgeCheckLimits = LOCOMO.judge_checks,
) -> JudgeChecks | None:
    """The judge's checks against human labels or stored verdicts, or ``None`` without them.

    Args:
        report: from :func:`locomo_exp.trust.labels.compare_with_labels` or
            ``compare_with_stored``.
        reference: the reference in words (``"the human labels"``).
        limits: the benchmark's limits (LoCoMo's by default).
    """
    if report is None or report.overall is None:
        return None
    found = report.overall
    return agreement_checks(
        reference,
        sensitivity=found.sensitivity,
        specificity=found.specificity,
        kappa=found.kappa,
        n=found.n,
        limits=limits,
    )


def _joined(checks: JudgeChecks, head: str) -> str | None:
    found = [w for w in checks.warnings if w.startswith(head)]
    return "; ".join(found) if found else None


def audit_result(
    audit: AuditSummary,
    *,
    controls: int,
    counts: Mapping[str, int],
    estimated_cost_usd: float | None,
    verdicts: Mapping[str, float | None],
    checks: JudgeChecks | None = None,
) -> AuditResult:
    """The judged audit as an :class:`AuditResult`.

    Args:
        audit: from :func:`locomo_exp.trust.audit.summarise_audit`.
        controls: controls judged.
        counts: the audit's judge counts (``calls_made``, ``cache_hits``, ``runs_total``).
        estimated_cost_usd: cost of the audit's calls (USD), or ``None``.
        verdicts: control id -> mean verdict (0-100) or ``None``.
        checks: the audit's checks (default :func:`check_audit` with LoCoMo's limits).

    Returns:
        The typed result, with the J-inflated and J-deflated warnings when they apply and
        the pooled checks' verdicts.
    """
    checks = check_audit(audit) if checks is None else checks
    kinds = {
        name: AuditKindResult(
            kind=kind.kind,
            expected_accept=kind.expected_accept,
            n_controls=kind.n_controls,
            n_unscored=kind.n_unscored,
            accept=rate_result(kind.accept),
            error=rate_result(kind.error),
            per_category={c: rate_result(p) for c, p in kind.per_category.items()},
            cost_usd=kind.cost_usd,
            notes=tuple(kind.notes),
        )
        for name, kind in audit.kinds.items()
    }
    return AuditResult(
        controls=controls,
        calls_made=int(counts.get("calls_made", 0)),
        cache_hits=int(counts.get("cache_hits", 0)),
        runs_total=int(counts.get("runs_total", 0)),
        estimated_cost_usd=estimated_cost_usd,
        threshold=audit.threshold,
        kinds=kinds,
        false_accept=rate_result(audit.false_accept),
        false_reject=rate_result(audit.false_reject),
        gate=audit.gate,
        max_false_accept=audit.max_false_accept,
        max_false_reject=audit.max_false_reject,
        cost_usd=audit.cost_usd,
        j_inflated=_joined(checks, INFLATED),
        verdicts=dict(verdicts),
        j_deflated=_joined(checks, DEFLATED),
        checks=dict(checks.verdicts),
    )


def agreement_report_result(report: AgreementReport) -> AgreementResult:
    """A comparison with human labels or stored verdicts as an :class:`AgreementResult`."""
    return AgreementResult(
        reference_name=report.reference_name,
        overall=None if report.overall is None else agreement_result(report.overall),
        per_category={c: agreement_result(a) for c, a in report.per_category.items()},
        n_ambiguous=report.n_ambiguous,
        n_unscored=report.n_unscored,
        n_unmatched=report.n_unmatched,
        n_disagreements=report.n_disagreements,
        disagreements=report.disagreements,
    )


def corrected_result(corrected: CorrectedJ) -> CorrectedJResult:
    """The Rogan-Gladen corrected J as a :class:`CorrectedJResult` (shares 0-1)."""
    est = corrected.estimate
    return CorrectedJResult(
        source=corrected.source,
        raw=est.raw,
        sensitivity=est.sensitivity,
        specificity=est.specificity,
        value=est.value,
        unclipped=est.unclipped,
        clipped=est.clipped,
        reason=est.reason,
        ci_low=corrected.ci_low,
        ci_high=corrected.ci_high,
        confidence=corrected.confidence,
        n_questions=corrected.n_questions,
        n_labelled=corrected.n_labelled,
        n_boot=corrected.n_boot,
        n_boot_invalid=corrected.n_boot_invalid,
        seed=corrected.seed,
        method=corrected.method,
    )


def panel_summary(
    panel: PanelResult, *, calls_made: int, estimated_cost_usd: float | None
) -> PanelSummary:
    """The panel's result as a :class:`PanelSummary`.

    Args:
        panel: from :func:`locomo_exp.trust.panel.judge_panel`.
        calls_made: judge calls the panel paid for.
        estimated_cost_usd: their cost (USD), or ``None`` without a price.

    Returns:
        The typed result; questions without a panel verdict are counted per reason
        (reasons in alphabetical order).
    """
    unscored: dict[str, int] = {}
    for reason in panel.unscored_reasons.values():
        unscored[reason] = unscored.get(reason, 0) + 1
    return PanelSummary(
        models=tuple(panel.models),
        protocol=panel.protocol,
        j_per_model=dict(panel.j_per_model),
        accept_per_model=dict(panel.accept_per_model),
        n_per_model=dict(panel.n_per_model),
        panel_j=panel.panel_j,
        n_panel_scored=panel.n_panel_scored,
        alpha=panel.alpha,
        alpha_level=panel.alpha_level,
        unscored=dict(sorted(unscored.items())),
        pairs=tuple(PanelPair(a, b, agreement_result(x)) for (a, b), x in panel.pairwise.items()),
        cost_multiplier=panel.cost_multiplier,
        calls_made=calls_made,
        estimated_cost_usd=estimated_cost_usd,
    )
