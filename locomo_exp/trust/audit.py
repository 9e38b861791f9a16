"""Summary of a judged audit: accept and error rates per control kind, and the gate.

The controls themselves are built in :mod:`locomo_exp.trust.controls`. A control is
accepted when its verdict (0-100) is >= ``threshold`` (the judge protocol's
``accept_threshold``); a ``None`` verdict is unscored
and left out of the rates (counted). Rates carry Wilson intervals; the gate fails when a
reject kind's false-accept rate exceeds ``judge.audit.max_false_accept`` or an accept
kind's false-reject rate exceeds ``judge.audit.max_false_reject``. A gate with neither limit
is "not set"; a limit whose kinds got no verdict at all is "not measured", which fails too.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from locomo_exp.results.audit import GateResult
from locomo_exp.stats.agreement import Proportion, wilson_interval
from locomo_exp.trust.controls import AuditControl

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KindSummary:
    """How the judge treated one kind of control.

    Attributes:
        kind: the control kind.
        expected_accept: whether a correct judge accepts these controls.
        n_controls: controls built (scored + unscored).
        n_unscored: controls without a verdict (left out of the rates).
        accept: accepted / scored, with a Wilson interval (0-1).
        error: the judge's error rate: false-reject rate (1 - accept) for accept kinds,
            false-accept rate (= accept) for reject kinds.
        per_category: category id -> accept rate of that category's scored controls.
        cost_usd: summed cost of the kind's judge calls, when costs were given.
        notes: distinct notes of the kind's controls with their counts.
    """

    kind: str
    expected_accept: bool
    n_controls: int
    n_unscored: int
    accept: Proportion
    error: Proportion
    per_category: dict[int, Proportion]
    cost_usd: float | None = None
    notes: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class AuditSummary:
    """The judged audit: per kind, pooled error rates, and the gate.

    Attributes:
        kinds: kind -> :class:`KindSummary`, in control order.
        false_accept: accepted / scored over all reject-kind controls (0-1).
        false_reject: rejected / scored over all accept-kind controls (0-1).
        gate: the :class:`GateResult`.
        threshold: verdict (0-100) at or above which a control counts as accepted.
        max_false_accept: the limit checked per reject kind (0-1), or ``None``.
        max_false_reject: the limit checked per accept kind (0-1), or ``None``.
        cost_usd: total cost of the audit's judge calls, when costs were given.
    """

    kinds: dict[str, KindSummary]
    false_accept: Proportion
    false_reject: Proportion
    gate: GateResult
    threshold: float
    max_false_accept: float | None = None
    max_false_reject: float | None = None
    cost_usd: float | None = None


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def summarise_audit(
    controls: Sequence[AuditControl],
    verdicts: Mapping[str, float | None],
    *,
    threshold: float,
    max_false_accept: float | None = None,
    max_false_reject: float | None = None,
    confidence: float = 0.95,
    cost_usd: Mapping[str, float] | None = None,
) -> AuditSummary:
    """Summarise judged controls: accept rates per kind and category, error rates, gate.

    Args:
        controls: the controls that were judged.
        verdicts: control id -> verdict on 0-100, or ``None`` (unscored); a missing id is
            unscored too.
        threshold: a verdict >= this counts as accepted.
        max_false_accept: fail the gate when any reject kind's false-accept rate (0-1)
            exceeds it; ``None`` disables the check.
        max_false_reject: fail the gate when any accept kind's false-reject rate (0-1)
            exceeds it; ``None`` disables the check.
        confidence: level of the Wilson intervals.
        cost_usd: control id -> cost in USD of its judge calls (optional).

    Returns:
        The :class:`AuditSummary`.

    Raises:
        ValueError: if a limit is outside [0, 1].
    """
    for name, limit in (
        ("max_false_accept", max_false_accept),
        ("max_false_reject", max_false_reject),
    ):
        if limit is not None and not 0.0 <= limit <= 1.0:
            raise ValueError(f"judge.audit.{name} must be a rate on 0-1, got {limit}")
    by_kind: dict[str, list[AuditControl]] = {}
    for control in controls:
        by_kind.setdefault(control.kind, []).append(control)
    kinds: dict[str, KindSummary] = {}
    pooled = {True: [0, 0], False: [0, 0]}  # expected_accept -> [accepted, scored]
    total_cost: float | None = 0.0 if cost_usd is not None else None
    failures: list[str] = []
    measured = 0  # checked kinds with at least one verdict
    for kind, members in by_kind.items():
        expected = members[0].expected_accept
        accepted = scored = 0
        per_cat: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        notes: dict[str, int] = defaultdict(int)
        kind_cost: float | None = None
        if cost_usd is not None:
            kind_cost = sum(float(cost_usd.get(c.control_id, 0.0)) for c in members)
        for control in members:
            if control.note:
                notes[control.note] += 1
            verdict = verdicts.get(control.control_id)
            if verdict is None:
                continue
            hit = verdict >= threshold
            accepted += hit
            scored += 1
            per_cat[control.record.category][0] += hit
            per_cat[control.record.category][1] += 1
        pooled[expected][0] += accepted
        pooled[expected][1] += scored
        errors = scored - accepted if expected else accepted
        error = wilson_interval(errors, scored, confidence)
        kinds[kind] = KindSummary(
            kind=kind,
            expected_accept=expected,
            n_controls=len(members),
            n_unscored=len(members) - scored,
            accept=wilson_interval(accepted, scored, confidence),
            error=error,
            per_category={
                c: wilson_interval(a, s, confidence) for c, (a, s) in sorted(per_cat.items())
            },
            cost_usd=kind_cost,
            notes=tuple(sorted(notes.items())),
        )
        if kind_cost is not None and total_cost is not None:
            total_cost += kind_cost
        limit, what, option = (
            (max_false_reject, "false-reject", "max_false_reject")
            if expected
            else (max_false_accept, "false-accept", "max_false_accept")
        )
        if limit is None:
            continue
        if error.rate is None:
            failures.append(
                f"{what} rate not measured on {kind}: none of its {len(members)} control(s) "
                f"got a verdict (judge.audit.{option}={_pct(limit)})"
            )
            continue
        measured += 1
        if error.rate > limit:
            failures.append(
                f"{what} rate {_pct(error.rate)} ({errors}/{scored}) on {kind} exceeds "
                f"judge.audit.{option}={_pct(limit)}"
            )
    gate = _gate(failures, measured, max_false_accept is None and max_false_reject is None)
    if gate.fails_run:
        logger.warning(gate.message)
    fa, fr = pooled[False], pooled[True]
    return AuditSummary(
        kinds=kinds,
        false_accept=wilson_interval(fa[0], fa[1], confidence),
        false_reject=wilson_interval(fr[1] - fr[0], fr[1], confidence),
        gate=gate,
        threshold=threshold,
        max_false_accept=max_false_accept,
        max_false_reject=max_false_reject,
        cost_usd=total_cost,
    )


def unmeasured_gate_audit(
    n: int,
    max_false_accept: float | None,
    max_false_reject: float | None,
    *,
    threshold: float,
    why: str,
) -> AuditSummary:
    """The audit of a run whose gate was asked for but judged no control.

    ``judge.audit.max_false_accept`` / ``max_false_reject`` set with ``judge.audit.n=0``, or
    with the audit capped to 0 controls per kind by ``judge.audit.max_share`` (a small
    input): nothing was measured, so the gate is ``not measured`` (which fails the run,
    as a gate whose controls got no verdict does), never passed.

    Args:
        n: ``judge.audit.n`` (controls per kind asked for).
        max_false_accept: ``judge.audit.max_false_accept`` (0-1) or ``None``.
        max_false_reject: ``judge.audit.max_false_reject`` (0-1) or ``None``.
        threshold: the protocol's accept threshold (0-100).
        why: how the audit was sized (:func:`locomo_exp.trust.budget.audit_note`).

    Returns:
        An :class:`AuditSummary` with no kind, empty pooled rates and the gate
        ``not measured`` with the reason and the fix.
    """
    if n == 0:
        reason = "no control judged: judge.audit.n=0 turns the audit off"
    else:
        reason = (
            f"no control judged: {why}; judge.audit.max_share=null (or a larger share) "
            "judges the controls"
        )
    empty = wilson_interval(0, 0)
    return AuditSummary(
        kinds={},
        false_accept=empty,
        false_reject=empty,
        gate=GateResult(
            state="not measured",
            failures=(reason,),
            message=f"judge audit not measured: {reason}",
        ),
        threshold=threshold,
        max_false_accept=max_false_accept,
        max_false_reject=max_false_reject,
        cost_usd=None,
    )


def _gate(failures: list[str], measured: int, no_limit: bool) -> GateResult:
    """The gate from the failing phrases and the number of measured checked kinds."""
    if no_limit:
        return GateResult(state="not set")
    if measured == 0:
        reason = "; ".join(failures) if failures else "no control kind the limits check was built"
        return GateResult(
            state="not measured",
            failures=tuple(failures),
            message=f"judge audit not measured: {reason}",
        )
    if failures:
        return GateResult(
            state="failed",
            failures=tuple(failures),
            message="judge audit failed: " + "; ".join(failures),
        )
    return GateResult(state="passed")


def audit_pairs(
    controls: Sequence[AuditControl],
    verdicts: Mapping[str, float | None],
    threshold: float,
) -> tuple[list[bool], list[bool]]:
    """(expected, judge accepted) per scored control, for a correction from the audit.

    Args:
        controls: the judged controls.
        verdicts: control id -> verdict on 0-100 or ``None``.
        threshold: acceptance threshold on 0-100.

    Returns:
        Two equally long lists: the expected verdict and the judge's, per scored control.
    """
    expected: list[bool] = []
    judged: list[bool] = []
    for control in controls:
        verdict = verdicts.get(control.control_id)
        if verdict is not None:
            expected.append(control.expected_accept)
            judged.append(verdict >= threshold)
    return expected, judged
