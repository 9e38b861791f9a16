"""How big the audit is: judge runs per control and the cap on its share of the calls.

Controls estimate accept rates, and one verdict per control measures a rate as well as
ten (the spread across runs is the judge's own noise, measured on the answers already), so
each control is judged ``judge.audit.runs`` times (1 by default). The audit's calls are
capped at ``judge.audit.max_share`` (25%) of the answers' calls by judging fewer controls
per kind; ``null`` lifts the cap. The preflight line and the dry run say which applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from locomo_exp.config import JudgeAuditConfig, JudgeConfig
from locomo_exp.trust.controls import AuditControl

Control = TypeVar("Control")
"""A control of any benchmark (LoCoMo's :class:`AuditControl`, or a plug-in's own type)."""


def audit_runs(cfg: JudgeConfig) -> int:
    """Judge runs per control: ``judge.audit.runs``, or ``judge.runs`` when it is null.

    Raises:
        ValueError: for fewer than one run (the config check refuses it first).
    """
    runs = cfg.runs if cfg.audit.runs is None else int(cfg.audit.runs)
    if runs < 1:
        raise ValueError(f"judge.audit.runs={runs} must be >= 1 (or null: judge.runs)")
    return runs


def audit_judge_config(cfg: JudgeConfig, controls: Sequence[AuditControl]) -> JudgeConfig:
    """The judge config for the controls.

    Same model and prompt, ``judge.audit.runs`` runs, every control's category, and no
    audit, labels or panel of its own.
    """
    categories = sorted({c.record.category for c in controls} | {int(c) for c in cfg.categories})
    return replace(
        cfg, categories=categories, runs=audit_runs(cfg), audit=JudgeAuditConfig(n=0),
        labels=None, panel=[],
    )


def audit_budget(cfg: JudgeConfig, n_judged: int) -> int | None:
    """Most controls the audit may judge, or ``None`` without a cap.

    ``floor(max_share x answer calls / runs per control)``, answer calls being
    ``n_judged x judge.runs``.

    Args:
        cfg: the judge config.
        n_judged: questions the main judge will judge.

    Raises:
        ValueError: ``judge.audit.max_share`` outside 0-1 (the config check refuses it
            first).
    """
    share = cfg.audit.max_share
    if share is None:
        return None
    if not 0.0 <= float(share) <= 1.0:
        raise ValueError(
            f"judge.audit.max_share={share} must be a share between 0 and 1 (or null: no cap)"
        )
    return int(float(share) * n_judged * cfg.runs) // audit_runs(cfg)


def cap_controls(
    build: Callable[[int], list[Control]], n: int, budget: int | None
) -> tuple[list[Control], int]:
    """The controls of the largest ``n' <= n`` per kind whose number fits ``budget``.

    The number of controls never decreases with ``n`` (each kind takes up to ``n``
    eligible records), so a binary search over ``n'`` finds the largest that fits.

    Args:
        build: ``n -> controls`` (:func:`~locomo_exp.trust.controls.build_controls` with
            the run's settings, or a benchmark plug-in's own builder of controls).
        n: controls asked per kind (``judge.audit.n``).
        budget: most controls allowed, or ``None`` for no cap.

    Returns:
        ``(controls, n_used)``; ``([], 0)`` when not one control per kind fits.
    """
    controls = build(n)
    if budget is None or len(controls) <= budget:
        return controls, n
    low, high = 0, n
    while low < high:
        middle = (low + high + 1) // 2
        if len(build(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return (build(low) if low else []), low


def audit_note(cfg: JudgeConfig, n_judged: int, n_used: int) -> str:
    """How the audit was sized, for the preflight line and the dry run.

    Returns:
        e.g. ``"each control judged 1x (judge.audit.runs); capped at 25% of the 160
        answer calls (judge.audit.max_share; null for no cap): 5 control(s) per kind
        instead of judge.audit.n=50"``.
    """
    each = f"each control judged {audit_runs(cfg)}x (judge.audit.runs)"
    share = cfg.audit.max_share
    if share is None:
        return f"{each}; no cap (judge.audit.max_share=null)"
    cap = (
        f"capped at {100 * float(share):g}% of the {n_judged * cfg.runs} answer calls "
        "(judge.audit.max_share; null for no cap)"
    )
    if n_used < int(cfg.audit.n):
        cap += f": {n_used} control(s) per kind instead of judge.audit.n={cfg.audit.n}"
    return f"{each}; {cap}"


def audit_size_line(n_controls: int, runs_per_control: int, answer_calls: int, note: str) -> str:
    """The log line that says how many calls the audit adds (LoCoMo and the plug-ins alike).

    Args:
        n_controls: controls to judge.
        runs_per_control: judge runs per control (:func:`audit_runs`).
        answer_calls: the answers' calls (questions judged x ``judge.runs``).
        note: how the audit was sized (:func:`audit_note`).

    Returns:
        e.g. ``"judge audit: 4 controls x 1 run(s) = 4 extra judge calls (25% of the 16 calls
        for the answers); each control judged 1x ..."``.
    """
    calls = n_controls * runs_per_control
    return (
        f"judge audit: {n_controls} controls x {runs_per_control} run(s) = {calls} extra judge "
        f"calls ({100.0 * calls / max(1, answer_calls):.0f}% of the {answer_calls} calls for the "
        f"answers); {note}"
    )


__all__ = [
    "audit_budget", "audit_judge_config", "audit_note", "audit_runs", "audit_size_line",
    "cap_controls"]
