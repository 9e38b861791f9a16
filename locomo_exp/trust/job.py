"""Judge trust in the judge job: audit controls, human labels, stored verdicts, a panel.

:func:`plan_trust` validates everything before any call (labels file, control files, panel
presets, audit options) and counts the extra calls; :func:`run_trust` judges the controls and
the panel through :func:`~locomo_exp.judge.job.run_judge` (same prompt, temperature, runs, cache
and client as the real answers; controls never enter J) and returns the summary section and the
typed results for the report and MLflow (:mod:`locomo_exp.report.trust`, ``tracking.trust``).
With ``judge.dry_run`` no call is made: the audit's and the panel's calls and cost are estimated.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from locomo_exp.config import JudgeAuditConfig, JudgeConfig
from locomo_exp.judge.aggregate import JudgeRunResult
from locomo_exp.judge.errors import JudgeError
from locomo_exp.judge.messages import JudgeClient
from locomo_exp.judge.models import model_price
from locomo_exp.judge.preflight import check_panel_members, judged_records
from locomo_exp.judge.protocols import protocol_spec
from locomo_exp.judge.providers import AUTO_KEY_ENV
from locomo_exp.results import QARecord
from locomo_exp.stats.correction import CorrectedJ, corrected_j
from locomo_exp.trust.audit import (
    AuditGate,
    AuditSummary,
    audit_pairs,
    inflated_j_warning,
    summarise_audit,
)
from locomo_exp.trust.budget import (
    audit_budget,
    audit_judge_config,
    audit_note,
    audit_runs,
    cap_controls,
)
from locomo_exp.trust.controls import AuditControl, build_controls, user_controls
from locomo_exp.trust.labels import (
    AgreementReport,
    LabelsError,
    LabelSet,
    compare_with_labels,
    compare_with_stored,
    load_labels,
    match_labels,
)
from locomo_exp.trust.panel import PanelResult, judge_panel

logger = logging.getLogger(__name__)

UNIT_CALL_TOKENS = (1000, 60)
"""(input, output) tokens of the notional call used to compare model prices (panel)."""


class JudgeAuditFailed(JudgeError):
    """The judge audit exceeded ``judge.audit.max_false_accept`` / ``max_false_reject``.

    Raised after every output is written and the run is logged (tagged
    ``judge.audit_gate=failed``); the CLI prints the one-line message and exits 1.
    """


@dataclass
class TrustPlan:
    """What the trust part of a judge job will do, validated before any call.

    Attributes:
        controls: the audit controls (built-in and user), empty when the audit is off.
        labels: the human labels, or ``None``.
        panel: ``(preset, judge config)`` per panel member, in the given order.
        audit_calls: judge calls of the audit (controls x ``judge.audit.runs``).
        panel_calls: judge calls of the panel (members x judged questions x runs).
        panel_cost_multiplier: cost of the main judge plus the panel's other models over
            the main judge alone (1.0 without a panel; by list price when known, else by
            count); calls of a panel member that is the main judge are cache hits.
        audit_note: how the audit was sized (runs per control, the cap), for the log.
    """

    controls: list[AuditControl] = field(default_factory=list)
    labels: LabelSet | None = None
    panel: list[tuple[str, JudgeConfig]] = field(default_factory=list)
    audit_calls: int = 0
    panel_calls: int = 0
    panel_cost_multiplier: float = 1.0
    audit_note: str = ""


@dataclass
class TrustOutcome:
    """The trust results of a judge job.

    Attributes:
        summary: JSON-ready section for ``summary["judge"]["trust"]`` (the experiment adds
            the report sections ``sections`` and the MLflow numbers ``metrics``).
        gate: the audit gate, or ``None`` without an audit.
        audit: the audit's summary, or ``None`` without an audit.
        labels: agreement with the human labels, or ``None``.
        stored: agreement with the verdicts stored in the file, or ``None``.
        corrected: J corrected for the judge's measured errors, or ``None``.
        panel: the panel's result, or ``None``.
    """

    summary: dict[str, Any]
    gate: AuditGate | None = None
    audit: AuditSummary | None = None
    labels: AgreementReport | None = None
    stored: AgreementReport | None = None
    corrected: CorrectedJ | None = None
    panel: PanelResult | None = None


def panel_preset_config(base: JudgeConfig, preset: str) -> JudgeConfig:
    """The judge config of a panel member: ``base`` with the preset's model settings.

    Args:
        base: the run's judge config (prompt, runs, cache, client settings are kept).
        preset: a name of the ``judge`` config group (``haiku-4-5``, ``sonnet-4-6`` ...).

    Returns:
        A :class:`JudgeConfig` for the preset, without audit, labels or panel.

    Raises:
        JudgeError: for an unknown preset (naming the known ones).
    """
    folder = resources.files("locomo_exp") / "conf" / "judge"
    known = sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))
    if preset not in known:
        raise JudgeError(
            f"judge.panel: unknown judge preset {preset!r} (known: {', '.join(known)})"
        )
    try:
        merged = OmegaConf.merge(
            OmegaConf.structured(base),
            OmegaConf.create((folder / f"{preset}.yaml").read_text(encoding="utf-8")),
        )
        cfg = OmegaConf.to_object(merged)
    except OmegaConfBaseException as error:
        raise JudgeError(f"judge.panel: preset {preset!r} cannot be used: {error}") from None
    assert isinstance(cfg, JudgeConfig)
    if cfg.provider != base.provider:
        # another provider's endpoint and key: its own defaults (e.g. OPENAI_BASE_URL)
        cfg = replace(cfg, base_url=None, api_key_env=AUTO_KEY_ENV)
    # same temperature as the run's judge, unless the preset's model takes none
    temperature = base.temperature if cfg.model_info.temperature else cfg.temperature
    return replace(cfg, temperature=temperature, audit=JudgeAuditConfig(n=0), labels=None, panel=[])


def _unit_price(cfg: JudgeConfig) -> float | None:
    price = model_price(cfg)
    if price is None:
        return None
    return price["input"] * UNIT_CALL_TOKENS[0] + price["output"] * UNIT_CALL_TOKENS[1]


def _panel_multiplier(cfg: JudgeConfig, panel: list[tuple[str, JudgeConfig]]) -> float:
    others = [p for _, p in panel if p.model != cfg.model]
    main = _unit_price(cfg)
    prices = [_unit_price(p) for p in others]
    if main is None or main <= 0 or any(p is None for p in prices):
        return 1.0 + len(others)
    return 1.0 + sum(p for p in prices if p is not None) / main


def _user_controls(cfg: JudgeConfig, start_dir: Path) -> list[AuditControl]:
    from locomo_exp.data import DataValidationError
    from locomo_exp.data.read_file import load_results

    out: list[AuditControl] = []
    for number, entry in enumerate(cfg.audit.controls):
        path = Path(str(entry.path))
        path = path if path.is_absolute() else start_dir / path
        where = f"judge.audit.controls[{number}]"
        try:
            loaded = load_results(path)
            out += user_controls(loaded.records, str(entry.expected), name=path.stem)
        except DataValidationError as error:
            raise JudgeError(f"{where} ({path}): {error}") from None
        except ValueError as error:
            raise JudgeError(f"{where} ({path}): field 'expected': {error}") from None
    return out


def plan_trust(records: list[QARecord], cfg: JudgeConfig, *, start_dir: Path) -> TrustPlan:
    """Validate the trust options and build the controls, before any judge call.

    Args:
        records: the run's records (controls come from those in ``judge.categories``).
        cfg: the judge config.
        start_dir: directory relative paths (labels, control files) are resolved against.

    Returns:
        The :class:`TrustPlan`; its call counts are logged.

    Raises:
        JudgeError: one line naming the option (and file/entry/field) for a negative
            ``judge.audit.n``, an unknown kind, a limit outside 0-1, an unreadable labels
            or control file, or an unknown panel preset.
    """
    audit = cfg.audit
    for name in ("max_false_accept", "max_false_reject"):
        limit = getattr(audit, name)
        if limit is not None and not 0.0 <= float(limit) <= 1.0:
            raise JudgeError(f"judge.audit.{name}={limit} must be a rate between 0 and 1 (or null)")
    controls: list[AuditControl] = []
    n_judged = len(judged_records(records, cfg))
    runs_per_control, budget = audit_runs(cfg), audit_budget(cfg, n_judged)
    n_used = int(audit.n)
    if audit.n != 0:
        user = _user_controls(cfg, start_dir)  # asked for by name: never capped
        kinds, cats = [str(k) for k in audit.kinds], [int(c) for c in cfg.categories]
        seed = int(audit.seed)
        try:
            controls, n_used = cap_controls(
                lambda n: build_controls(records, n=n, seed=seed, kinds=kinds, categories=cats),
                int(audit.n), None if budget is None else max(0, budget - len(user)),
            )
        except ValueError as error:
            raise JudgeError(f"judge.audit: {error}") from None
        controls += user
    labels = None
    if cfg.labels:
        path = Path(cfg.labels)
        try:
            labels = load_labels(path if path.is_absolute() else start_dir / path)
            match_labels(labels, judged_records(records, cfg), log_unmatched=False)  # conflicts
        except LabelsError as error:
            raise JudgeError(f"judge.labels: {error}") from None
    panel = [(str(p), panel_preset_config(cfg, str(p))) for p in cfg.panel]
    if len(panel) == 1:
        raise JudgeError("judge.panel needs at least two judge presets (or none)")
    check_panel_members(panel)
    plan = TrustPlan(
        controls=controls,
        labels=labels,
        panel=panel,
        audit_calls=len(controls) * runs_per_control,
        audit_note=audit_note(cfg, n_judged, n_used),
        panel_calls=len(panel) * n_judged * cfg.runs,
        panel_cost_multiplier=_panel_multiplier(cfg, panel) if panel else 1.0,
    )
    if controls:
        logger.info(
            "judge audit: %d controls x %d run(s) = %d extra judge calls (%.0f%% of the %d "
            "calls for the answers); %s",
            len(controls), runs_per_control, plan.audit_calls,
            100.0 * plan.audit_calls / max(1, n_judged * cfg.runs), n_judged * cfg.runs,
            plan.audit_note,
        )
    elif audit.n != 0:
        logger.warning("judge audit: no control judged; %s", plan.audit_note)
    if panel:
        logger.info(
            "judge panel: %d models, %d calls; cost %.2fx the main judge alone",
            len(panel),
            plan.panel_calls,
            plan.panel_cost_multiplier,
        )
    return plan


def _verdicts(result: JudgeRunResult) -> dict[str, float | None]:
    return {qid: agg.mean_score for qid, agg in result.per_question.items()}


def _control_costs(result: JudgeRunResult, cfg: JudgeConfig) -> dict[str, float] | None:
    """USD paid per control: calls made now (batch at its price factor); cached calls free."""
    price = model_price(cfg)
    if price is None:
        return None
    factor = float((result.summary.get("batch") or {}).get("price_factor", 1.0))
    return {
        qid: sum(
            (r.input_tokens * price["input"] + r.output_tokens * price["output"]) / 1e6 * factor
            for r in agg.runs
            if not r.cached
        )
        for qid, agg in result.per_question.items()
    }


def _estimate_part(estimate: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("calls_total", "calls_cached", "calls_to_make", "estimated_cost_usd", "max_cost_usd")
    return {k: estimate.get(k) for k in keys}


def _add_costs(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _dry_run(
    plan: TrustPlan,
    records: list[QARecord],
    cfg: JudgeConfig,
    main: JudgeRunResult,
    judge: Any,
) -> TrustOutcome:
    estimate = main.summary["dry_run_estimate"]
    out: dict[str, Any] = {}
    if plan.controls:
        audit = judge([c.record for c in plan.controls], audit_judge_config(cfg, plan.controls))
        out["audit"] = _estimate_part(audit.summary["dry_run_estimate"])
    panel_parts = {}
    for preset, member in plan.panel:
        part = _estimate_part(judge(records, member).summary["dry_run_estimate"])
        if cfg.cache and member.model == cfg.model and member.temperature == cfg.temperature:
            # the same calls as the answers': cache hits once the answers are judged
            part.update(calls_cached=part["calls_total"], calls_to_make=0, estimated_cost_usd=0.0)
            part["max_cost_usd"] = 0.0
        panel_parts[preset] = part
    if panel_parts:
        out["panel"] = panel_parts
        out["panel_cost_multiplier"] = plan.panel_cost_multiplier
    parts = [out["audit"]] if "audit" in out else []
    parts += list(panel_parts.values())
    total_calls = estimate["calls_to_make"] + sum(p["calls_to_make"] for p in parts)
    total_cost = estimate["estimated_cost_usd"]
    for p in parts:
        total_cost = _add_costs(total_cost, p["estimated_cost_usd"])
    # flat keys, printed by the CLI's dry-run line
    if "audit" in out:
        estimate["audit_calls_to_make"] = out["audit"]["calls_to_make"]
        estimate["audit_sizing"] = plan.audit_note
        estimate["audit_estimated_cost_usd"] = out["audit"]["estimated_cost_usd"]
    if panel_parts:
        estimate["panel_calls_to_make"] = sum(p["calls_to_make"] for p in panel_parts.values())
        estimate["panel_cost_multiplier"] = round(plan.panel_cost_multiplier, 3)
    estimate["total_calls_to_make"] = total_calls
    # USD to a millionth of a dollar, as the parts are printed (no 0.10536000000000001)
    estimate["total_estimated_cost_usd"] = None if total_cost is None else round(total_cost, 6)
    logger.info(
        "judge dry run with trust: %d calls to make in all (audit %s, panel %s), "
        "estimated cost %s USD",
        total_calls,
        out.get("audit", {}).get("calls_to_make", 0),
        estimate.get("panel_calls_to_make", 0),
        "n/a" if total_cost is None else f"{total_cost:.2f}",
    )
    return TrustOutcome(summary={"dry_run": out, "sections": [], "metrics": {}})


def _corrected(
    judged: list[QARecord],
    verdicts: Mapping[str, float | None],
    labels: AgreementReport | None,
    plan: TrustPlan,
    audit_verdicts: Mapping[str, float | None],
    threshold: float,
) -> tuple[CorrectedJ | None, str]:
    scores = [verdicts.get(r.question_id) for r in judged]
    accepts = [v >= threshold for v in scores if v is not None]
    if not accepts:
        return None, "no judged question has a verdict"
    if labels is not None and labels.reference:
        ref, got, source = list(labels.reference), list(labels.judge), "labels"
    elif plan.controls:
        ref, got = audit_pairs(plan.controls, audit_verdicts, threshold)
        source = "audit"
    else:
        return None, "no labels and no audit"
    try:
        return corrected_j(accepts, ref, got, source=source), ""
    except ValueError as error:
        return None, f"{source}: {error}"


def run_trust(
    plan: TrustPlan,
    records: list[QARecord],
    cfg: JudgeConfig,
    main: JudgeRunResult,
    *,
    start_dir: Path,
    category_names: Mapping[int, str] | None = None,
    client: JudgeClient | None = None,
) -> TrustOutcome:
    """Judge the controls and the panel, compare with labels/stored verdicts, summarise.

    Args:
        plan: from :func:`plan_trust`.
        records: the run's records.
        cfg: the judge config.
        main: the result of judging the real answers (its verdicts are compared; in a dry
            run its estimate gets the audit's and panel's calls and cost added).
        start_dir: directory the cache path is resolved against.
        category_names: display names by category id.
        client: the judge client (tests); ``None`` builds the SDK client per config.

    Returns:
        The :class:`TrustOutcome`: the summary section and the typed results (audit,
        labels, stored verdicts, corrected J, panel).

    Raises:
        ValueError: ``cfg.protocol`` is not a registered protocol, or its template file
            cannot be read (the judge's preflight refuses both before).
        Whatever :func:`~locomo_exp.judge.job.run_judge` raises for the extra calls.
    """
    from locomo_exp.judge.job import run_judge

    protocol = protocol_spec(cfg)
    threshold = protocol.accept_threshold

    names = dict(category_names) if category_names else None
    judged = judged_records(records, cfg)

    def judge(recs: list[QARecord], c: JudgeConfig) -> JudgeRunResult:
        return run_judge(recs, c, start_dir=start_dir, category_names=names, client=client)

    if cfg.dry_run:
        return _dry_run(plan, records, cfg, main, judge)
    verdicts = _verdicts(main)
    audit: AuditSummary | None = None
    audit_verdicts: dict[str, float | None] = {}
    summary: dict[str, Any] = {}
    if plan.controls:
        audit_cfg = audit_judge_config(cfg, plan.controls)
        logger.info("judge audit: judging %d control answers", len(plan.controls))
        audit_result = judge([c.record for c in plan.controls], audit_cfg)
        audit_verdicts = _verdicts(audit_result)
        audit = summarise_audit(
            plan.controls,
            audit_verdicts,
            threshold=threshold,
            max_false_accept=cfg.audit.max_false_accept,
            max_false_reject=cfg.audit.max_false_reject,
            cost_usd=_control_costs(audit_result, audit_cfg),
        )
        counts = audit_result.summary["counts"]
        summary["audit"] = {
            "controls": len(plan.controls),
            "calls_made": counts.get("calls_made", 0),
            "cache_hits": counts.get("cache_hits", 0),
            "runs_total": counts.get("runs_total", 0),
            "estimated_cost_usd": audit_result.summary.get("estimated_cost_usd"),
            "gate": audit.gate.state,
            "gate_passed": audit.gate.passed,
            "gate_message": audit.gate.message,
            "j_inflated": inflated_j_warning(audit),
            "verdicts": audit_verdicts,
        }
    labels = (
        compare_with_labels(judged, verdicts, plan.labels, threshold=threshold)
        if plan.labels
        else None
    )
    stored = compare_with_stored(judged, verdicts, threshold=threshold)
    corrected, why_not = _corrected(judged, verdicts, labels, plan, audit_verdicts, threshold)
    if corrected is None and (labels is not None or audit is not None):
        summary["corrected_j_unavailable"] = why_not
    panel: PanelResult | None = None
    if plan.panel:
        per_model: dict[str, dict[str, float | None]] = {}
        panel_calls = 0
        panel_cost: float | None = 0.0
        for preset, member in plan.panel:
            logger.info("judge panel: judging with %s (%s)", preset, member.model)
            result = judge(records, member)
            per_model[member.model] = _verdicts(result)
            panel_calls += result.summary["counts"].get("calls_made", 0)
            panel_cost = _add_costs(panel_cost, result.summary.get("estimated_cost_usd"))
        panel = judge_panel(
            per_model,
            protocol=protocol,
            question_ids=[r.question_id for r in judged],
        )
        panel = replace(panel, cost_multiplier=plan.panel_cost_multiplier)
        summary["panel"] = {
            "models": list(panel.models),
            "j_per_model": panel.j_per_model,
            "panel_j": panel.panel_j,
            "alpha": panel.alpha,
            "n_unscored": len(panel.unscored_reasons),
            "calls_made": panel_calls,
            "estimated_cost_usd": panel_cost,
            "cost_multiplier": panel.cost_multiplier,
        }
    # one cost everywhere: calls actually paid (answers, audit, panel); cached calls free
    summary["total_cost_usd"] = _add_costs(
        _add_costs(main.summary.get("estimated_cost_usd"), (summary.get("audit") or {}).get(
            "estimated_cost_usd", 0.0)),
        (summary.get("panel") or {}).get("estimated_cost_usd", 0.0),
    )
    return TrustOutcome(
        summary=summary,
        gate=audit.gate if audit is not None else None,
        audit=audit,
        labels=labels,
        stored=stored,
        corrected=corrected,
        panel=panel,
    )
