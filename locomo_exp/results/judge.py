"""Typed view of the judge's part of ``summary.json`` (J per category, counts, cost, trust).

The judge package builds that dict (:func:`locomo_exp.judge.run_judge`) and the trust job adds
its ``trust`` part; :class:`JudgeSummary` reads the fields the report, the console and the
card use into typed attributes, keeps the judge's other keys as they are, and writes the same
dict back (same keys, same order). Re-exported by :mod:`locomo_exp.results`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.results.convert import opt_float
from locomo_exp.results.trust import TrustSummary


@dataclass(frozen=True)
class JudgeGroup:
    """J of one category key (0-100), as :func:`locomo_exp.judge.aggregate.group_j` gives.

    Attributes:
        mean: mean over questions of each question's mean over valid runs, or ``None``.
        count: questions with at least one valid run.
        std_across_runs: sample std of the run-level J across runs, or ``None``.
        pooled_within_std: pooled within-question std, or ``None``.
        questions: questions in the group (with or without a valid run), or ``None`` when
            not recorded.
        run_means: J of each run over the group (0-100; ``None`` for a run without a valid
            verdict).
    """

    mean: float | None
    count: int
    std_across_runs: float | None = None
    pooled_within_std: float | None = None
    questions: int | None = None
    run_means: tuple[float | None, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The entry as the judge writes it (``questions`` left out when not recorded)."""
        out: dict[str, Any] = {"mean": self.mean, "count": self.count}
        if self.questions is not None:
            out["questions"] = self.questions
        out["std_across_runs"] = self.std_across_runs
        out["pooled_within_std"] = self.pooled_within_std
        out["run_means"] = list(self.run_means)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeGroup:
        """Read one entry of the judge summary's ``j``."""
        questions = data.get("questions")
        return cls(
            mean=opt_float(data.get("mean")),
            count=int(data.get("count") or 0),
            std_across_runs=opt_float(data.get("std_across_runs")),
            pooled_within_std=opt_float(data.get("pooled_within_std")),
            questions=None if questions is None else int(questions),
            run_means=tuple(opt_float(v) for v in data.get("run_means") or ()),
        )


_TYPED = (
    "protocol",
    "prompt_version",
    "template",
    "provider",
    "endpoint",
    "endpoint_kind",
    "model",
    "temperature",
    "runs",
    "mode",
    "categories",
    "j",
    "counts",
    "model_snapshot",
    "prompt_too_long_questions",
    "tokens",
    "estimated_cost_usd",
    "dry_run_estimate",
    "trust",
)
"""The judge summary's keys :class:`JudgeSummary` types, in the judge package's order."""


@dataclass(frozen=True)
class JudgeSummary:
    """Typed view of the judge's summary (``summary.json`` -> ``judge``).

    The judge package builds the dict (:func:`locomo_exp.judge.run_judge`) and the trust
    job adds ``trust``. The fields below are what the report, the console, the card and
    MLflow read; the judge's other keys (token totals by source, stop reasons, wall time,
    batch ids...) are kept in ``other`` and written back unchanged, and :meth:`to_json`
    gives the keys in the order they were read.

    Attributes:
        protocol: judge protocol name (``binary``, ``rubric``, ...).
        prompt_version: version of the judge prompt.
        model: judge model id.
        temperature: sampling temperature (0-1) as the judge wrote it, or ``None`` when
            not sent.
        runs: judge runs per question, as the judge wrote it.
        mode: ``realtime`` or ``batch``.
        categories: LoCoMo category ids judged.
        j: J per category key (0-100).
        counts: outcome counts (``valid``, ``parse_failure``, ``api_error``, ...).
        tokens: ``{"input", "output", ...}`` token totals.
        estimated_cost_usd: cost of the answers' calls made (USD), or ``None`` without a
            price.
        dry_run_estimate: the estimate of a dry run (no call made), else ``None``.
        prompt_too_long_questions: ids of questions whose prompt the API refused.
        provider: ``judge.provider`` (``None`` in summaries made before providers).
        endpoint: the API base URL the calls went to (never a key).
        endpoint_kind: ``default`` or ``custom``.
        model_snapshot: the model id the API answered with (most replies), if known.
        template: the judge template's card (name, version, sha256, rule...) when
            ``judge.protocol=template``, else ``None``.
        trust: what the trust job measured (audit, labels, corrected J, panel), or
            ``None`` when it did not run.
        other: the judge's keys not typed above, as written.
        key_order: the keys in the order read (``to_json`` follows it; empty: typed keys
            first, in the judge package's order, then ``other``).
    """

    protocol: str | None
    prompt_version: str | None
    model: str | None
    temperature: float | None
    runs: int | None
    mode: str
    categories: tuple[int, ...]
    j: dict[str, JudgeGroup]
    counts: dict[str, int]
    tokens: dict[str, int]
    estimated_cost_usd: float | None
    dry_run_estimate: dict[str, Any] | None
    prompt_too_long_questions: tuple[str, ...]
    provider: str | None = None
    endpoint: str | None = None
    endpoint_kind: str | None = None
    model_snapshot: str | None = None
    template: Mapping[str, Any] | None = None
    trust: TrustSummary | None = None
    other: Mapping[str, Any] = field(default_factory=dict, repr=False)
    key_order: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def overall_label(self) -> str:
        """Label of the judge's pooled overall, naming the categories it covers.

        Returns:
            ``"overall (1, 2, 3, 4)"`` for a judge run on categories 1-4; ``"overall"``
            when the categories are not known.
        """
        if not self.categories:
            return "overall"
        return "overall (" + ", ".join(str(c) for c in sorted(self.categories)) + ")"

    @property
    def total_cost_usd(self) -> float | None:
        """The run's judge cost (USD): answers + audit + panel, calls actually paid.

        The trust job's total when it ran, else the answers' cost; ``None`` when a price
        is unknown.
        """
        return self.trust.total_cost_usd if self.trust is not None else self.estimated_cost_usd

    def _typed_json(self) -> dict[str, Any]:
        """The typed fields as JSON, in :data:`_TYPED` order (``None`` extras left out)."""
        values: dict[str, Any] = {
            "protocol": self.protocol,
            "prompt_version": self.prompt_version,
            "template": None if self.template is None else dict(self.template),
            "provider": self.provider,
            "endpoint": self.endpoint,
            "endpoint_kind": self.endpoint_kind,
            "model": self.model,
            "temperature": self.temperature,
            "runs": self.runs,
            "mode": self.mode,
            "categories": list(self.categories),
            "j": {key: group.to_json() for key, group in self.j.items()},
            "counts": dict(self.counts),
            "model_snapshot": self.model_snapshot,
            "prompt_too_long_questions": list(self.prompt_too_long_questions),
            "tokens": dict(self.tokens),
            "estimated_cost_usd": self.estimated_cost_usd,
            "dry_run_estimate": None
            if self.dry_run_estimate is None
            else dict(self.dry_run_estimate),
            "trust": None if self.trust is None else self.trust.to_json(),
        }
        if self.key_order:
            return values
        optional = (
            "template",
            "provider",
            "endpoint",
            "endpoint_kind",
            "model_snapshot",
            "dry_run_estimate",
            "trust",
        )
        return {k: v for k, v in values.items() if v is not None or k not in optional}

    def to_json(self) -> dict[str, Any]:
        """The judge's dict: the keys read, in their order, typed fields written back."""
        typed = self._typed_json()
        if not self.key_order:
            return {**typed, **self.other}
        out: dict[str, Any] = {}
        for key in self.key_order:
            out[key] = typed[key] if key in typed else self.other[key]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeSummary:
        """Read the judge's summary dict; absent fields read as ``None``/empty.

        Raises:
            OlderTrustLayout: when its ``trust`` part is the layout written before typed
                trust results (one line saying so).
        """
        template = data.get("template")
        trust = data.get("trust")
        return cls(
            protocol=None if data.get("protocol") is None else str(data["protocol"]),
            prompt_version=None
            if data.get("prompt_version") is None
            else str(data["prompt_version"]),
            model=None if data.get("model") is None else str(data["model"]),
            temperature=data.get("temperature"),
            runs=data.get("runs"),
            mode=str(data.get("mode") or "realtime"),
            categories=tuple(int(c) for c in data.get("categories") or ()),
            j={str(k): JudgeGroup.from_json(v) for k, v in (data.get("j") or {}).items()},
            counts={str(k): int(v or 0) for k, v in (data.get("counts") or {}).items()},
            tokens={str(k): int(v or 0) for k, v in (data.get("tokens") or {}).items()},
            estimated_cost_usd=opt_float(data.get("estimated_cost_usd")),
            dry_run_estimate=None
            if data.get("dry_run_estimate") is None
            else dict(data["dry_run_estimate"]),
            prompt_too_long_questions=tuple(
                str(q) for q in data.get("prompt_too_long_questions") or ()
            ),
            template=dict(template) if isinstance(template, Mapping) else None,
            trust=None if trust is None else TrustSummary.from_json(trust),
            other={k: v for k, v in data.items() if k not in _TYPED},
            key_order=tuple(str(k) for k in data),
            **{
                name: None if data.get(name) is None else str(data[name])
                for name in ("provider", "endpoint", "endpoint_kind", "model_snapshot")
            },
        )
