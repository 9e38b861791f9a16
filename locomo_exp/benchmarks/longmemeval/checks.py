"""The judge's checks on a LongMemEval run (:mod:`locomo_exp.trust.checks`, LongMemEval's limits).

Read from the run's ``summary.json`` content (numbers and words): the audit's controls
(``audit.kinds``: false accepts on expected-no controls, false rejects on expected-yes
ones, and both pooled), this judge's agreement with the file's stored verdicts
(``judge.agreement_with_stored``) and with human labels (``labels``), and the share of this
judge's replies that could not be read (``judge.counts``). The warnings go to
``summary["warnings"]`` and into the status (``"warning: J deflated (...)"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.longmemeval.facts import JUDGE_CHECKS
from locomo_exp.results.template_note import unparsed_scored_words
from locomo_exp.stats.agreement import Proportion, wilson_interval
from locomo_exp.trust.checks import (
    JudgeChecks,
    KnownRate,
    agreement_checks,
    answering_model_checks,
    audit_checks,
    merged,
    unreadable_checks,
    warning_status,
)


def _rate(data: Mapping[str, Any]) -> Proportion:
    """A ``{"count", "n", ...}`` rate of ``summary.json`` as a Wilson :class:`Proportion`."""
    return wilson_interval(int(data.get("count") or 0), int(data.get("n") or 0))


def _complement(p: Proportion) -> Proportion:
    return wilson_interval(p.n - p.successes, p.n)


def _audit(audit: Mapping[str, Any] | None) -> JudgeChecks | None:
    if not audit or not audit.get("kinds"):
        return None
    kinds = []
    for kind, row in audit["kinds"].items():
        kinds.append(KnownRate(f"expected-no {kind} controls", False, _rate(row["false_accept"])))
        kinds.append(KnownRate(f"expected-yes {kind} controls", True, _rate(row["false_reject"])))
    kinds = [k for k in kinds if k.error.n]
    return audit_checks(
        kinds,
        _complement(_rate(audit["specificity"])),
        _complement(_rate(audit["sensitivity"])),
        JUDGE_CHECKS,
    )


def _stored(agreement: Mapping[str, Any] | None) -> JudgeChecks | None:
    if not agreement or "stored_yes" not in agreement:  # runs before the counts were kept
        return None
    yes, no = int(agreement["stored_yes"]), int(agreement["stored_no"])
    return agreement_checks(
        "the stored verdicts",
        sensitivity=wilson_interval(yes - int(agreement["stored_yes_judge_no"]), yes),
        specificity=wilson_interval(no - int(agreement["stored_no_judge_yes"]), no),
        kappa=agreement.get("kappa"),
        n=int(agreement["n"]),
        limits=JUDGE_CHECKS,
    )


def _labels(labels: Mapping[str, Any] | None) -> JudgeChecks | None:
    if not labels or not labels.get("n"):
        return None
    return agreement_checks(
        "the human labels",
        sensitivity=_rate(labels["sensitivity"]),
        specificity=_rate(labels["specificity"]),
        kappa=labels.get("kappa"),
        n=int(labels["n"]),
        limits=JUDGE_CHECKS,
    )


def with_lme_checks(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with the checks of its headline verdicts: warnings and status.

    The audit and the agreement with the stored verdicts check this tool's judge; human
    labels check the headline verdicts (this judge's, or the stored ones when no judge ran).

    Args:
        summary: a LongMemEval ``summary.json`` content (changed in place).

    Returns:
        The same dict, with ``warnings`` (a list, when a check found something) and
        ``status.j`` / ``status.judge`` as ``"warning: ..."`` then; the audit's pooled
        verdicts in ``audit.checks``.
    """
    judge = summary.get("judge") or {}
    audit = _audit(summary.get("audit"))
    if audit is not None:
        summary["audit"]["checks"] = dict(audit.verdicts)
    counts = judge.get("counts") or {}
    unreadable = unreadable_checks(  # this judge's replies that could not be read
        int(counts.get("parse_failure") or 0),
        int(counts.get("runs_total") or 0),
        JUDGE_CHECKS,
        unparsed_scored_words(judge),
    )
    warnings = merged(
        answering_model_checks(judge.get("model"), judge.get("response_models")),
        unreadable,
        audit,
        _stored(judge.get("agreement_with_stored")),
        _labels(summary.get("labels")),
    )
    if not warnings:
        return summary
    summary["warnings"] = list(warnings)
    status = summary["status"]
    if str(status.get("j", "")).startswith("ok"):
        status["j"] = warning_status("ok", warnings)
    if "judge" in status:
        status["judge"] = warning_status(status["judge"], warnings)
    return summary


__all__ = ["with_lme_checks"]
