"""The trust part of a judge job, planned and checked before any call.

:func:`plan_trust` validates the trust options (labels file, control files, panel presets,
audit limits), builds the audit controls and counts the extra judge calls;
:func:`panel_preset_config` gives a panel member's judge config. The calls themselves are
made by :func:`locomo_exp.trust.job.run_trust`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from locomo_exp.config import JudgeAuditConfig, JudgeConfig
from locomo_exp.judge.preflight import (
    check_panel_members,
    judged_records,
    refuse_too_long_prompts,
)
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.models import model_price
from locomo_exp.llm.providers import AUTO_KEY_ENV
from locomo_exp.results import QARecord
from locomo_exp.trust.budget import (
    audit_budget,
    audit_note,
    audit_runs,
    audit_size_line,
    cap_controls,
)
from locomo_exp.trust.controls import AuditControl, build_controls, user_controls
from locomo_exp.trust.labels import LabelsError, LabelSet, load_labels, match_labels

logger = logging.getLogger(__name__)

UNIT_CALL_TOKENS = (1000, 60)
"""(input, output) tokens of the notional call used to compare model prices (panel)."""

TOKEN_KEYS = ("estimated_input_tokens", "estimated_output_tokens")
"""The token counts of a dry-run estimate, summed over its parts as ``total_<key>``."""


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
        audit_unmeasured: the warning of an audit asked for (``judge.audit.n`` > 0) that
            judges no control, e.g. ``"audit: not measured (0 controls:
            judge.audit.max_share of 10 calls)"``; ``None`` otherwise. The run's J was not
            checked, so the report, the console, summary.json and MLflow say so.
    """

    controls: list[AuditControl] = field(default_factory=list)
    labels: LabelSet | None = None
    panel: list[tuple[str, JudgeConfig]] = field(default_factory=list)
    audit_calls: int = 0
    panel_calls: int = 0
    panel_cost_multiplier: float = 1.0
    audit_note: str = ""
    audit_unmeasured: str | None = None

    def part_calls(self, main: JudgeConfig) -> list[int]:
        """The calls of each part after the answers, in the order they are made.

        Args:
            main: the run's judge config.

        Returns:
            The audit's calls (when it has controls), then each panel member's; a member
            with the main judge's provider, endpoint and model counts 0 (its calls are the
            answers', answered from the cache).
        """
        per_member = self.panel_calls // len(self.panel) if self.panel else 0
        same = (main.provider, main.base_url, main.model)
        return [self.audit_calls] * bool(self.controls) + [
            0 if (m.provider, m.base_url, m.model) == same else per_member for _, m in self.panel
        ]


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


def judge_name(summary: Mapping[str, Any]) -> str:
    """``<provider> <model>`` of a judge run's summary, ``at <endpoint>`` when not the default.

    The endpoint is the one the summary records (no user info, query or fragment: never a
    credential, :func:`locomo_exp.llm.providers.endpoint`).
    """
    where = f" at {summary.get('endpoint')}" if summary.get("endpoint_kind") == "custom" else ""
    return f"{summary.get('provider')} {summary.get('model')}{where}"


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


def plan_trust(
    records: list[QARecord], cfg: JudgeConfig, *, start_dir: Path, source: str | None = None,
    answer_categories: Mapping[str, Collection[int]] | None = None,
    panel_member: Callable[[str], JudgeConfig] | None = None,
) -> TrustPlan:
    """Validate the trust options and build the controls, before any judge call.

    Args:
        records: the run's records (controls come from those in ``judge.categories``).
        cfg: the judge config.
        start_dir: directory relative paths (labels, control files) are resolved against.
        source: the answers file, named when a panel member's model cannot take a prompt.
        answer_categories: kind -> the categories whose gold that built-in kind may use
            (:func:`~locomo_exp.trust.controls.build_controls`); ``None``: LoCoMo's.
        panel_member: a panel preset's name -> that member's judge config, for a
            benchmark whose judged unit needs its own settings; ``None``:
            :func:`panel_preset_config` of ``cfg``.

    Returns:
        The :class:`TrustPlan`; its call counts are logged.

    Raises:
        JudgeError: one line naming the option (and file/entry/field) for a negative
            ``judge.audit.n``, an unknown kind, a limit outside 0-1, an unreadable labels
            or control file, an unknown panel preset, or a prompt too long for a panel
            member's model (:func:`~locomo_exp.judge.preflight.refuse_too_long_prompts`).
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
                lambda n: build_controls(records, n=n, seed=seed, kinds=kinds, categories=cats,
                                         answer_categories=answer_categories),
                int(audit.n),
                None if budget is None else max(0, budget - len(user)),
            )
        except ValueError as error:
            raise JudgeError(f"judge.audit: {error}") from None
        short = short_kinds_line(controls, kinds, n_used)
        if short:
            logger.info("%s", short)
        controls += user
    labels = None
    if cfg.labels:
        path = Path(cfg.labels)
        try:
            labels = load_labels(path if path.is_absolute() else start_dir / path)
            match_labels(labels, judged_records(records, cfg), log_unmatched=False)  # conflicts
        except LabelsError as error:
            raise JudgeError(f"judge.labels: {error}") from None
    member_of = panel_member or (lambda preset: panel_preset_config(cfg, preset))
    panel = [(str(p), member_of(str(p))) for p in cfg.panel]
    if len(panel) == 1:
        raise JudgeError("judge.panel needs at least two judge presets (or none)")
    check_panel_members(panel)
    for preset, member in panel:  # a member's context window may be smaller than the judge's
        refuse_too_long_prompts(records, member, source=source, who=f"judge.panel {preset}")
    plan = TrustPlan(
        controls=controls,
        labels=labels,
        panel=panel,
        audit_calls=len(controls) * runs_per_control,
        audit_note=audit_note(cfg, n_judged, n_used),
        audit_unmeasured=unmeasured_audit_warning(n_judged * cfg.runs, n_used)
        if audit.n != 0 and not controls
        else None,
        panel_calls=len(panel) * n_judged * cfg.runs,
        panel_cost_multiplier=_panel_multiplier(cfg, panel) if panel else 1.0,
    )
    if controls:
        logger.info(
            "%s",
            audit_size_line(len(controls), runs_per_control, n_judged * cfg.runs, plan.audit_note),
        )
    elif audit.max_false_accept is not None or audit.max_false_reject is not None:
        logger.warning(
            "judge audit: no control judged (%s): the gate asked for (judge.audit."
            "max_false_accept / max_false_reject) cannot be measured, so the run will exit 1 "
            "after its outputs are written; judge.audit.max_share=null lifts the cap",
            plan.audit_note if audit.n != 0 else "judge.audit.n=0",
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


def unmeasured_audit_warning(answer_calls: int, n_used: int) -> str:
    """The warning of an audit that was asked for but judges no control.

    Args:
        answer_calls: the judge calls for the answers (judged questions x ``judge.runs``),
            the base of ``judge.audit.max_share``.
        n_used: controls per kind left after the cap (0 when the cap took them all).

    Returns:
        ``"audit: not measured (0 controls: judge.audit.max_share of 10 calls)"`` when the
        cap left none, else ``"audit: not measured (0 controls: no record could be made a
        control)"``.
    """
    why = (
        f"judge.audit.max_share of {answer_calls} calls"
        if n_used == 0
        else "no record could be made a control"
    )
    return f"audit: not measured (0 controls: {why})"


def short_kinds_line(controls: list[AuditControl], kinds: list[str], n: int) -> str | None:
    """One line naming the built-in kinds with fewer eligible records than ``n``, or ``None``.

    Said once per run, after the audit is sized (the sizing builds the controls several
    times, and a line per kind and build repeated the same words about forty times).

    Args:
        controls: the built-in controls chosen.
        kinds: the kinds asked for (``judge.audit.kinds``), in order.
        n: controls per kind asked for after the sizing (``judge.audit.n`` or its cap).

    Returns:
        e.g. ``"audit: fewer eligible records than n=11 per kind: adversarial_trap 0"``.
    """
    counts = {kind: 0 for kind in kinds}
    for control in controls:
        counts[control.kind] = counts.get(control.kind, 0) + 1
    short = [f"{kind} {count}" for kind, count in counts.items() if count < n]
    if not short or n <= 0:
        return None
    return f"audit: fewer eligible records than n={n} per kind: {', '.join(short)}"


__all__ = [
    "TOKEN_KEYS", "UNIT_CALL_TOKENS", "TrustPlan", "judge_name", "panel_preset_config",
    "plan_trust", "short_kinds_line", "unmeasured_audit_warning"]
