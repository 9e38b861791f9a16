"""Typed results of judge trust: what ``summary.json`` -> ``judge`` -> ``trust`` holds.

The trust job (:mod:`locomo_exp.trust.job`) builds a :class:`TrustSummary` from its audit,
human labels, stored verdicts, corrected J and panel; the report (:mod:`locomo_exp.report.trust`)
renders it and :mod:`locomo_exp.tracking.trust` maps it to MLflow metric names. It holds
numbers and words only: no Markdown, no metric names. Rates are shares 0-1 with 95% Wilson
intervals (Wilson 1927); J and verdicts are 0-100; kappa and alpha stay on -1..1; costs are
USD. The layout, field by field, is in ``docs/trust.md``. Re-exported by
:mod:`locomo_exp.results`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.results.agreement import Agreement, AgreementResult
from locomo_exp.results.audit import AuditResult
from locomo_exp.results.convert import opt_float


class OlderTrustLayout(ValueError):
    """``summary.json`` -> ``judge`` -> ``trust`` was written before the typed trust results.

    That layout held the report's Markdown sections and MLflow metric names, not the
    measurements; the message is one line saying so.
    """


@dataclass(frozen=True)
class CorrectedJResult:
    """J corrected for the judge's measured errors (Rogan & Gladen 1978), beside the raw J.

    ``value = (raw + specificity - 1) / (sensitivity + specificity - 1)``, clipped to 0-1,
    with a bootstrap interval over questions and labelled items.

    Attributes:
        source: where sensitivity and specificity come from: ``"labels"`` or ``"audit"``.
        raw: share of judged answers accepted (0-1; not J).
        sensitivity: share of correct answers the judge accepts (0-1).
        specificity: share of wrong answers it rejects (0-1).
        value: the corrected share (0-1), or ``None`` when not defined.
        unclipped: the estimate before clipping to 0-1, or ``None``.
        clipped: whether it was clipped.
        reason: why ``value`` is ``None`` (``""`` otherwise).
        ci_low: lower bound of the interval (0-1), or ``None``.
        ci_high: upper bound (0-1), or ``None``.
        confidence: level of the interval.
        n_questions: judged questions with a verdict.
        n_labelled: labelled items (labels or audit controls).
        n_boot: bootstrap replicates drawn.
        n_boot_invalid: replicates left out (sensitivity + specificity <= 1).
        seed: the bootstrap's seed.
        method: how the interval was computed, in words.
    """

    source: str
    raw: float
    sensitivity: float
    specificity: float
    value: float | None
    unclipped: float | None
    clipped: bool
    reason: str
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_questions: int
    n_labelled: int
    n_boot: int
    n_boot_invalid: int
    seed: int
    method: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict of the fields, in declaration order."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CorrectedJResult:
        """Inverse of :meth:`to_json`."""
        return cls(
            source=str(data["source"]),
            raw=float(data["raw"]),
            sensitivity=float(data["sensitivity"]),
            specificity=float(data["specificity"]),
            value=opt_float(data.get("value")),
            unclipped=opt_float(data.get("unclipped")),
            clipped=bool(data.get("clipped")),
            reason=str(data.get("reason") or ""),
            ci_low=opt_float(data.get("ci_low")),
            ci_high=opt_float(data.get("ci_high")),
            confidence=float(data["confidence"]),
            n_questions=int(data["n_questions"]),
            n_labelled=int(data["n_labelled"]),
            n_boot=int(data.get("n_boot") or 0),
            n_boot_invalid=int(data.get("n_boot_invalid") or 0),
            seed=int(data.get("seed") or 0),
            method=str(data.get("method") or ""),
        )


@dataclass(frozen=True)
class PanelPair:
    """Two panel members' agreement on accept/reject (model ``a`` as the reference).

    Attributes:
        a: first model id.
        b: second model id.
        agreement: their agreement over the questions both gave a verdict on.
    """

    a: str
    b: str
    agreement: Agreement

    def to_json(self) -> dict[str, Any]:
        """``{"a", "b", "agreement"}``."""
        return {"a": self.a, "b": self.b, "agreement": self.agreement.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PanelPair:
        """Inverse of :meth:`to_json`."""
        return cls(str(data["a"]), str(data["b"]), Agreement.from_json(data["agreement"]))


@dataclass(frozen=True)
class PanelSummary:
    """Every answer judged by several models; the panel verdict is their majority.

    Attributes:
        models: model ids, in the panel's order.
        protocol: judge protocol.
        j_per_model: J (0-100) per model, or ``None`` without a verdict: its mean verdict
            (a mean score under a rubric).
        accept_per_model: percent (0-100) of its scored questions each model accepts, or
            ``None``: the scale of ``panel_j``.
        n_per_model: questions each model gave a verdict on.
        panel_j: J (0-100) of the majority verdicts (accept 100, reject 0), or ``None``:
            the percent of questions the majority accepts, comparable with
            ``accept_per_model``, not with ``j_per_model`` under a rubric.
        n_panel_scored: questions with a panel verdict.
        alpha: Krippendorff's alpha across the models, or ``None`` when not computed.
        alpha_level: the alpha's level of measurement (``nominal``, ``interval``...).
        unscored: reason -> questions without a panel verdict for that reason.
        pairs: each pair of models' agreement.
        cost_multiplier: cost of the panel over a single judge.
        calls_made: judge calls the panel paid for.
        estimated_cost_usd: their cost (USD), or ``None`` without a price.
    """

    models: tuple[str, ...]
    protocol: str
    j_per_model: dict[str, float | None]
    n_per_model: dict[str, int]
    panel_j: float | None
    n_panel_scored: int
    alpha: float | None
    alpha_level: str
    unscored: dict[str, int] = field(default_factory=dict)
    pairs: tuple[PanelPair, ...] = ()
    cost_multiplier: float = 1.0
    calls_made: int = 0
    estimated_cost_usd: float | None = None
    accept_per_model: dict[str, float | None] = field(default_factory=dict)

    @property
    def n_unscored(self) -> int:
        """Questions without a panel verdict."""
        return sum(self.unscored.values())

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (layout in ``docs/trust.md``)."""
        return {
            "models": list(self.models),
            "protocol": self.protocol,
            "j_per_model": dict(self.j_per_model),
            "accept_per_model": dict(self.accept_per_model),
            "n_per_model": dict(self.n_per_model),
            "panel_j": self.panel_j,
            "n_panel_scored": self.n_panel_scored,
            "alpha": self.alpha,
            "alpha_level": self.alpha_level,
            "unscored": dict(self.unscored),
            "pairs": [pair.to_json() for pair in self.pairs],
            "cost_multiplier": self.cost_multiplier,
            "calls_made": self.calls_made,
            "estimated_cost_usd": self.estimated_cost_usd,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PanelSummary:
        """Inverse of :meth:`to_json`."""
        return cls(
            models=tuple(str(m) for m in data["models"]),
            protocol=str(data.get("protocol") or ""),
            j_per_model={str(k): opt_float(v) for k, v in data["j_per_model"].items()},
            accept_per_model={
                str(k): opt_float(v) for k, v in (data.get("accept_per_model") or {}).items()
            },
            n_per_model={str(k): int(v) for k, v in (data.get("n_per_model") or {}).items()},
            panel_j=opt_float(data.get("panel_j")),
            n_panel_scored=int(data.get("n_panel_scored") or 0),
            alpha=opt_float(data.get("alpha")),
            alpha_level=str(data.get("alpha_level") or ""),
            unscored={str(k): int(v) for k, v in (data.get("unscored") or {}).items()},
            pairs=tuple(PanelPair.from_json(p) for p in data.get("pairs") or ()),
            cost_multiplier=float(data.get("cost_multiplier", 1.0)),
            calls_made=int(data.get("calls_made") or 0),
            estimated_cost_usd=opt_float(data.get("estimated_cost_usd")),
        )


_ESTIMATE_KEYS = (
    "calls_total",
    "calls_cached",
    "calls_to_make",
    "estimated_cost_usd",
    "cost_upper_bound_usd",
)


@dataclass(frozen=True)
class CallEstimate:
    """A dry run's estimate for one part (the audit, a panel member): no call was made.

    Attributes:
        calls_total: judge calls the part needs.
        calls_cached: of those, already in the judge cache.
        calls_to_make: calls that would be paid.
        estimated_cost_usd: their estimated cost (USD), or ``None`` without a price.
        cost_upper_bound_usd: the cost if every reply used ``judge.max_tokens`` (USD), or
            ``None``: an upper bound of the estimate, not the spend cap
            ``judge.max_cost_usd`` (summaries written before it was renamed call it
            ``max_cost_usd``; :meth:`from_json` reads both).
    """

    calls_total: int
    calls_cached: int
    calls_to_make: int
    estimated_cost_usd: float | None
    cost_upper_bound_usd: float | None

    def to_json(self) -> dict[str, Any]:
        """The five counts and costs, keyed by field name."""
        return {name: getattr(self, name) for name in _ESTIMATE_KEYS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallEstimate:
        """Inverse of :meth:`to_json` (absent counts are 0; an older ``max_cost_usd`` is read)."""
        return cls(
            calls_total=int(data.get("calls_total") or 0),
            calls_cached=int(data.get("calls_cached") or 0),
            calls_to_make=int(data.get("calls_to_make") or 0),
            estimated_cost_usd=opt_float(data.get("estimated_cost_usd")),
            cost_upper_bound_usd=opt_float(
                data["cost_upper_bound_usd"]
                if "cost_upper_bound_usd" in data
                else data.get("max_cost_usd")
            ),
        )


@dataclass(frozen=True)
class TrustDryRun:
    """What a dry run's trust part would cost (``judge.dry_run``: no call made).

    Attributes:
        audit: the audit's estimate, or ``None`` without an audit.
        panel: estimate per panel preset, in the panel's order.
        panel_cost_multiplier: cost of the panel over a single judge, or ``None``
            without a panel.
    """

    audit: CallEstimate | None = None
    panel: dict[str, CallEstimate] = field(default_factory=dict)
    panel_cost_multiplier: float | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"audit"?, "panel"?, "panel_cost_multiplier"?}`` (absent parts left out)."""
        out: dict[str, Any] = {}
        if self.audit is not None:
            out["audit"] = self.audit.to_json()
        if self.panel:
            out["panel"] = {preset: part.to_json() for preset, part in self.panel.items()}
            out["panel_cost_multiplier"] = self.panel_cost_multiplier
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrustDryRun:
        """Inverse of :meth:`to_json`."""
        audit = data.get("audit")
        return cls(
            audit=None if audit is None else CallEstimate.from_json(audit),
            panel={str(k): CallEstimate.from_json(v) for k, v in (data.get("panel") or {}).items()},
            panel_cost_multiplier=opt_float(data.get("panel_cost_multiplier")),
        )


@dataclass(frozen=True)
class TrustSummary:
    """Everything the trust part of a judge job measured (``summary.json`` -> judge -> trust).

    Attributes:
        total_cost_usd: the run's judge cost: calls actually paid for the answers, the
            audit and the panel (cached calls free), USD; ``None`` when a price is unknown.
        audit: the audit, or ``None`` when it did not run.
        labels: agreement with human labels (``judge.labels``), or ``None``.
        stored: agreement with the verdicts stored in the input, or ``None``.
        corrected: the corrected J, or ``None``.
        corrected_unavailable: why there is no corrected J although labels or an audit
            were there (``None`` otherwise).
        panel: the judge panel, or ``None``.
        dry_run: a dry run's estimate (then nothing else is set), or ``None``.
        total_cost_including_cached_usd: the same calls' cost counting those answered from
            the cache at their stored usage (what the run's verdicts cost in all, over every
            run that paid for them), USD; ``None`` when a price is unknown or not recorded.
        warnings: the judge's checks (:mod:`locomo_exp.trust.checks`): one line each,
            ``"J inflated (...)"``, ``"J deflated (...)"``, ``"low agreement with ... (...)"``;
            the judge's status is ``"warning: "`` and these lines.
    """

    total_cost_usd: float | None = None
    audit: AuditResult | None = None
    labels: AgreementResult | None = None
    stored: AgreementResult | None = None
    corrected: CorrectedJResult | None = None
    corrected_unavailable: str | None = None
    panel: PanelSummary | None = None
    dry_run: TrustDryRun | None = None
    warnings: tuple[str, ...] = ()
    total_cost_including_cached_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``trust`` section of ``summary.json``: parts that ran, ``total_cost_usd`` last.

        Layout (``docs/trust.md``)::

            {"dry_run"?: {...}, "audit"?: {...}, "labels"?: {...}, "stored"?: {...},
             "corrected"?: {...}, "corrected_unavailable"?: "why", "panel"?: {...},
             "warnings"?: [...], "total_cost_usd": USD | null}
        """
        out: dict[str, Any] = {}
        if self.dry_run is not None:
            out["dry_run"] = self.dry_run.to_json()
        parts: tuple[tuple[str, Any], ...] = (
            ("audit", self.audit),
            ("labels", self.labels),
            ("stored", self.stored),
            ("corrected", self.corrected),
        )
        out.update({name: part.to_json() for name, part in parts if part is not None})
        if self.corrected_unavailable is not None:
            out["corrected_unavailable"] = self.corrected_unavailable
        if self.panel is not None:
            out["panel"] = self.panel.to_json()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.dry_run is None or self.total_cost_usd is not None:  # a dry run paid nothing
            out["total_cost_usd"] = self.total_cost_usd
        if self.total_cost_including_cached_usd is not None:
            out["total_cost_including_cached_usd"] = self.total_cost_including_cached_usd
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrustSummary:
        """Read the ``trust`` section written by :meth:`to_json`.

        Raises:
            OlderTrustLayout: for the layout written before these types (it held the
                report's Markdown ``sections`` and MLflow ``metrics``): one line saying so.
            ValueError: for an audit gate state not in :data:`GATE_STATES`.
            KeyError: when a part lacks a required field.
        """
        if "sections" in data or "metrics" in data:
            raise OlderTrustLayout(
                "summary.json: judge.trust was written by an older locomo_exp (Markdown "
                "sections and MLflow names, before typed trust results); its report.md has "
                "the trust sections; re-run the judge job to read them with this version"
            )

        def part(name: str, reader: Any) -> Any:
            value = data.get(name)
            return None if value is None else reader(value)

        return cls(
            total_cost_usd=opt_float(data.get("total_cost_usd")),
            audit=part("audit", AuditResult.from_json),
            labels=part("labels", AgreementResult.from_json),
            stored=part("stored", AgreementResult.from_json),
            corrected=part("corrected", CorrectedJResult.from_json),
            corrected_unavailable=part("corrected_unavailable", str),
            panel=part("panel", PanelSummary.from_json),
            dry_run=part("dry_run", TrustDryRun.from_json),
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
            total_cost_including_cached_usd=opt_float(data.get("total_cost_including_cached_usd")),
        )
