"""Judge trust for a pipeline benchmark: the generic trust engine behind the JobSteps hooks.

LoCoMo's judge job plans its trust checks before any call
(:func:`locomo_exp.trust.plan.plan_trust`), counts their calls in ``judge.max_cost_usd``
(:func:`locomo_exp.trust.job.spend_parts`), makes them after the answers are judged
(:func:`locomo_exp.trust.job.run_trust`) and shows the :class:`~locomo_exp.results.TrustSummary`
in the report (:func:`locomo_exp.report.trust.render_trust_sections`) and MLflow
(:func:`locomo_exp.tracking.trust.trust_metrics`). A pipeline benchmark does the same through
its hooks with these helpers:

* ``read`` (preflight, nothing written or paid): :func:`plan_plugin_trust` validates
  ``judge.labels``, ``judge.panel`` and ``judge.audit.*`` and builds the controls (one
  line naming the option, the file, the entry and the field on a bad value);
* ``spend_parts``: :func:`trust_parts` adds the audit's and the panel's calls;
* ``trust``: :func:`run_plugin_trust` judges the controls and the panel (same cache,
  client, stop and spend cap as the benchmark's own calls) and compares with the labels:
  Cohen's kappa, Rogan-Gladen corrected accuracy with its interval
  (:mod:`locomo_exp.stats.correction`);
* ``summary`` / ``report`` / ``console`` / ``run_metrics`` / ``gate``: :func:`trust_section`,
  :func:`trust_report_sections`, :func:`trust_console_lines`, :func:`trust_run_metrics`,
  :func:`trust_gate`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from locomo_exp.benchmarks.steps import JobContext
    from locomo_exp.config import JudgeConfig
    from locomo_exp.judge.aggregate import JudgeRunResult
    from locomo_exp.judge.spend import Part
    from locomo_exp.results import QARecord, TrustSummary
    from locomo_exp.results.run_log import JudgeSpend, TrustBrief
    from locomo_exp.trust.plan import TrustPlan


def trust_asked(judge: JudgeConfig) -> bool:
    """Whether ``judge`` asks for any trust check: audit controls, a gate, labels, a panel."""
    audit = judge.audit
    return bool(int(audit.n) != 0 or audit.max_false_accept is not None
                or audit.max_false_reject is not None or judge.labels or judge.panel)


def plan_plugin_trust(
    records: list[QARecord], judge: JudgeConfig, *, start_dir: Path, source: str,
    answer_categories: Mapping[str, Collection[int]] | None = None,
    panel_member: Callable[[str], JudgeConfig] | None = None,
) -> TrustPlan | None:
    """Validate the trust options of a benchmark's judged run and build its controls.

    Args:
        records: the judged units' records (one per judged unit, ids as the labels file's).
        judge: the judge settings of those units (``judge.audit``, ``labels``, ``panel``).
        start_dir: where relative label and control files are resolved (absolute).
        source: the answers file, named in a refusal.
        answer_categories: kind -> the categories whose gold that built-in control kind may
            use (:func:`locomo_exp.trust.controls.build_controls`); ``None``: LoCoMo's.
        panel_member: preset name -> a panel member's judge config (``None``: the preset
            over ``judge``, :func:`locomo_exp.trust.plan.panel_preset_config`).

    Returns:
        The :class:`~locomo_exp.trust.plan.TrustPlan`, or ``None`` when no trust check is
        asked for (:func:`trust_asked`).

    Raises:
        JudgeError: a bad trust option, labels file or panel preset (one line, before any
            call and before anything is written).
    """
    if not trust_asked(judge):
        return None
    from locomo_exp.trust.plan import plan_trust

    return plan_trust(records, judge, start_dir=start_dir, source=source,
                      answer_categories=answer_categories, panel_member=panel_member)


def trust_parts(plan: TrustPlan | None, records: list[QARecord], judge: JudgeConfig
                ) -> list[Part]:
    """The audit's and the panel's parts of the job, for ``judge.max_cost_usd``.

    Args:
        plan: from :func:`plan_plugin_trust`, or ``None`` (no part).
        records: the judged units' records.
        judge: their judge settings.

    Returns:
        ``("audit", controls, config)`` when there are controls, then ``("panel", records,
        member)`` per panel member (:func:`locomo_exp.trust.job.spend_parts` without the
        answers' part, which the benchmark counts itself).
    """
    if plan is None:
        return []
    from locomo_exp.trust.job import spend_parts

    return spend_parts(plan, records, judge)[1:]


def run_plugin_trust(
    plan: TrustPlan | None, records: list[QARecord], judge: JudgeConfig, main: JudgeRunResult,
    ctx: JobContext, *, category_names: Mapping[int, str] | None = None,
) -> TrustSummary | None:
    """Judge the controls and the panel, compare with the labels (:func:`~.trust.job.run_trust`).

    Args:
        plan: from :func:`plan_plugin_trust`, or ``None`` (nothing to do).
        records: the judged units' records.
        judge: their judge settings.
        main: the judge's result on those units (a dry run's gets the trust calls added
            to its estimate).
        ctx: the job's context (cache directory, client, stop, spend cap).
        category_names: display names by category code.

    Returns:
        The :class:`~locomo_exp.results.TrustSummary`, or ``None`` without a plan.

    Raises:
        Whatever :func:`locomo_exp.trust.job.run_trust` raises (completed calls cached).
    """
    if plan is None:
        return None
    from locomo_exp.trust.job import run_trust

    return run_trust(plan, records, judge, main, start_dir=ctx.start_dir,
                     category_names=category_names, client=ctx.client,
                     calls_stop=ctx.calls_stop, spend=ctx.spend)


def trust_section(trust: TrustSummary | None) -> dict[str, Any] | None:
    """The ``trust`` block of ``summary.json`` (numbers and words), or ``None``."""
    return None if trust is None else trust.to_json()


def _read(section: Mapping[str, Any] | None) -> TrustSummary | None:
    if not section:
        return None
    from locomo_exp.results import TrustSummary

    return TrustSummary.from_json(section)


CORRECTED_FIGURE = "Corrected accept rate"
"""A plug-in's corrected figure, named alike on the console and in the report: the share of
judged units accepted, corrected by Rogan-Gladen (LoCoMo's is its "Corrected J")."""


def trust_report_sections(section: Mapping[str, Any] | None,
                          category_names: Mapping[int, str] | None = None, *,
                          unit: str, headline: str) -> list[str]:
    """The report's trust sections (audit, labels, corrected accuracy, panel), LoCoMo's renderer.

    The corrected figure is named :data:`CORRECTED_FIGURE`, as the console names it, not
    LoCoMo's "Corrected J".

    Args:
        section: the ``trust`` block of ``summary.json``, or ``None`` (no section).
        category_names: display names by category code.
        unit: what one judged unit is (``rubric item``, ``item``), counted in the section.
        headline: the benchmark's raw figure that stays the headline (e.g. ``mean label
            score``).

    Returns:
        Markdown sections, only those that ran (none without a block).
    """
    trust = _read(section)
    if trust is None:
        return []
    from locomo_exp.report.trust import render_trust_sections

    return render_trust_sections(trust, category_names, figure=CORRECTED_FIGURE,
                                 headline=headline, unit=unit)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def trust_console_lines(section: Mapping[str, Any] | None, *, unit: str,
                        with_warnings: bool = True) -> list[str]:
    """The console's trust lines: audit rates, kappa with the labels, corrected accuracy, panel.

    Args:
        section: the ``trust`` block of ``summary.json``, or ``None`` (no line).
        unit: what a verdict is about (``rubric item``, ``item``), named in the lines.
        with_warnings: also a ``warning: ...`` line per trust warning (``False`` when the
            benchmark's console already prints the run's warnings, which hold them).

    Returns:
        One line per check that ran; a check that could not be measured says so.
    """
    trust = _read(section)
    if trust is None:
        return []
    lines: list[str] = []
    if trust.audit is not None:
        audit = trust.audit
        lines.append(f"Judge audit ({audit.controls} controls, one {unit} each): false-accept "
                     f"{_pct(audit.false_accept.rate)}, false-reject "
                     f"{_pct(audit.false_reject.rate)}; gate {audit.gate.state}")
    if trust.labels is not None and trust.labels.overall is not None:
        overall = trust.labels.overall
        kappa = "n/a" if overall.kappa is None else f"{overall.kappa:.3f}"
        lines.append(f"Judge vs human labels ({overall.n} {unit}s): agreement "
                     f"{_pct(overall.agreement.rate)}, Cohen's kappa {kappa}")
    if trust.corrected is not None and trust.corrected.value is not None:
        c = trust.corrected
        lines.append(f"{CORRECTED_FIGURE} (Rogan-Gladen, from {c.source}): {_pct(c.value)} "
                     f"[{_pct(c.ci_low)}, {_pct(c.ci_high)}] vs raw {_pct(c.raw)}")
    elif trust.corrected is not None:  # e.g. a judge no better than chance on the labels
        lines.append(f"{CORRECTED_FIGURE}: not measured ({trust.corrected.reason})")
    elif trust.corrected_unavailable:
        lines.append(f"{CORRECTED_FIGURE}: not measured ({trust.corrected_unavailable})")
    if trust.panel is not None:
        alpha = trust.panel.alpha
        lines.append(f"Judge panel ({', '.join(trust.panel.models)}): Krippendorff's alpha "
                     + ("n/a" if alpha is None else f"{alpha:.3f}"))
    if with_warnings:
        lines += [f"warning: {w}" for w in trust.warnings]
    return lines


def trust_run_metrics(section: Mapping[str, Any] | None,
                      category_names: Mapping[int, str] | None = None) -> dict[str, float]:
    """The trust block's MLflow metrics, LoCoMo's names (:func:`~.tracking.trust.trust_metrics`)."""
    trust = _read(section)
    if trust is None:
        return {}
    from locomo_exp.tracking.trust import trust_metrics

    return trust_metrics(trust, category_names)


def trust_brief(section: Mapping[str, Any] | None, *, audit: Mapping[str, Any] | None = None,
                warnings: list[str] | None = None) -> TrustBrief | None:
    """The run log's trust brief: the audit's pooled rates and gate, the corrected figure.

    Args:
        section: the ``trust`` block of ``summary.json``, or ``None``.
        audit: a benchmark's own audit block (``{"false_accept": {"rate"}, "false_reject",
            "gate": {"state"}}``), used when the trust block has no audit.
        warnings: the run's warnings.

    Returns:
        :class:`~locomo_exp.results.run_log.TrustBrief` (rates 0-1; the corrected accept
        rate as ``j_corrected/overall``, 0-1, with its interval), or ``None`` when neither
        block ran.
    """
    from locomo_exp.results.run_log import Figure, TrustBrief

    trust = _read(section)
    if trust is None and not audit:
        return None
    gate: str | None = None
    false_accept = false_reject = None
    if trust is not None and trust.audit is not None:
        gate = trust.audit.gate.state
        false_accept, false_reject = trust.audit.false_accept.rate, trust.audit.false_reject.rate
    elif audit:
        gate = (audit.get("gate") or {}).get("state")
        false_accept = (audit.get("false_accept") or {}).get("rate")
        false_reject = (audit.get("false_reject") or {}).get("rate")
    corrected = trust.corrected if trust is not None else None
    return TrustBrief(
        gate_passed=None if gate not in ("passed", "failed") else gate == "passed",
        false_accept_rate=false_accept, false_reject_rate=false_reject,
        corrected=None if corrected is None else Figure(
            name="j_corrected/overall", value=corrected.value, unit="0-1",
            ci_low=corrected.ci_low, ci_high=corrected.ci_high, n=corrected.n_questions),
        warnings=list(warnings or ()),
    )


def _money(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def _added(values: list[float | None]) -> float | None:
    return None if None in values else sum(v for v in values if v is not None)


def plugin_spend(sections: list[Mapping[str, Any]], trust_section: Mapping[str, Any] | None, *,
                 status: str, dry_run_estimate: Mapping[str, Any] | None = None) -> JudgeSpend:
    """The run log's judge spend of a whole plug-in job: its own calls, the audit's, the panel's.

    A plug-in's ``judge`` block holds its own calls' sections (the judged units first, then
    any further calls of its own, e.g. alignment calls or its own audit's controls); the
    generic ``trust`` block (:func:`run_plugin_trust`) adds the audit's and the panel's
    calls. Calls and US dollars are those of every part, as the trust block's total is
    (LoCoMo's run log likewise); tokens and the reply counts (parse failures, API errors)
    are the sections' only, the trust block recording none for its calls.

    Args:
        sections: the job's own judge sections (``counts``, ``tokens``,
            ``estimated_cost_usd``, ``estimated_cost_usd_including_cached``), the judged
            units' first.
        trust_section: the ``trust`` block of ``summary.json``, or ``None``.
        status: the judge's status words.
        dry_run_estimate: a dry run's estimate (then no call is counted, as
            :func:`~locomo_exp.results.run_log.judge_spend` does).

    Returns:
        :class:`~locomo_exp.results.run_log.JudgeSpend`: ``cost_usd`` the calls paid (USD,
        list price; ``None`` when a part's price is unknown), ``cost_in_all_usd`` with the
        calls answered from the cache at their stored usage.
    """
    from locomo_exp.results.run_log import judge_spend

    parts: list[Mapping[str, Any]] = list(sections)
    paid = [_money(s.get("estimated_cost_usd")) for s in sections]
    # in all: the judged units' as recorded; a further section at its own cost when it has
    # no figure with the cached calls
    in_all = [_money(s.get("estimated_cost_usd_including_cached",
                           None if i == 0 else s.get("estimated_cost_usd")))
              for i, s in enumerate(sections)]
    trust = None if dry_run_estimate is not None else _read(trust_section)
    if trust is not None:
        runs = [(trust.audit.calls_made, trust.audit.estimated_cost_usd)
                if trust.audit is not None else None,
                (trust.panel.calls_made, trust.panel.estimated_cost_usd)
                if trust.panel is not None else None]
        for calls, cost in (run for run in runs if run is not None):
            parts.append({"counts": {"calls_made": calls}})
            paid.append(cost)
        if any(run is not None for run in runs):  # its total in all: the units', audit, panel
            in_all = [trust.total_cost_including_cached_usd, *in_all[1:]]
    if dry_run_estimate is not None:
        return judge_spend(parts, status=status, dry_run_estimate=dry_run_estimate,
                           cost_in_all_usd=_added(in_all))
    return judge_spend(parts, status=status, cost_usd=_added(paid),
                       cost_in_all_usd=_added(in_all))


TRUST_HEADER = (f"{CORRECTED_FIGURE} %", f"{CORRECTED_FIGURE} 95% CI", "audit false-accept %",
                "audit false-reject %")
"""The trust columns of a plug-in's sweep table (:func:`trust_sweep_cells`)."""

TRUST_LEGEND = (f"- trust: {CORRECTED_FIGURE.lower()} (Rogan-Gladen, from the human labels or "
                "the audit controls) with its 95% interval, and the audit's pooled false-accept "
                "and false-reject rates, percent; \"not measured\" where the job did not "
                "measure them (no labels or audit, a dry run)")
"""The legend line of those columns."""

NOT_MEASURED = "not measured"


def trust_sweep_cells(row: Mapping[str, Any]) -> list[str]:
    """A sweep row's trust cells under :data:`TRUST_HEADER`, percent with 1 decimal.

    Args:
        row: a sweep summary row; its ``trust`` cells (0-1) are the run log's
            (:func:`locomo_exp.sweep.log_rows.trust_row_cells`).

    Returns:
        Four cells; ``not measured`` for a figure the job did not measure (the interval's
        cell is empty beside an unmeasured figure).
    """
    trust = row.get("trust") or {}

    def pct(value: Any) -> str:
        return NOT_MEASURED if value is None else f"{100 * float(value):.1f}"

    ci = trust.get("corrected_ci")
    return [pct(trust.get("corrected")),
            f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}" if ci else
            ("" if trust.get("corrected") is None else NOT_MEASURED),
            pct(trust.get("false_accept")), pct(trust.get("false_reject"))]


def trust_gate(section: Mapping[str, Any] | None) -> str | None:
    """The audit gate's message when it fails the run (exit status 1), else ``None``."""
    trust = _read(section)
    if trust is None or trust.audit is None or not trust.audit.gate.fails_run:
        return None
    return trust.audit.gate.message or "judge audit gate failed"


__all__ = [
    "CORRECTED_FIGURE",
    "TRUST_HEADER",
    "TRUST_LEGEND",
    "plan_plugin_trust",
    "plugin_spend",
    "run_plugin_trust",
    "trust_asked",
    "trust_brief",
    "trust_console_lines",
    "trust_gate",
    "trust_parts",
    "trust_report_sections",
    "trust_run_metrics",
    "trust_section",
    "trust_sweep_cells",
]
