"""Typed view of the judge's part of ``summary.json`` (J per category, counts, cost).

The judge package builds and owns that dict; :class:`JudgeSummary` reads the fields the
report shows and gives the dict back unchanged. Re-exported by :mod:`locomo_exp.results`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.results.convert import opt_float


@dataclass(frozen=True)
class JudgeGroup:
    """J of one category key (0-100), as :func:`locomo_exp.judge.aggregate.group_j` gives.

    Attributes:
        mean: mean over questions of each question's mean over valid runs, or ``None``.
        count: questions with at least one valid run.
        std_across_runs: sample std of the run-level J across runs, or ``None``.
        pooled_within_std: pooled within-question std, or ``None``.
    """

    mean: float | None
    count: int
    std_across_runs: float | None = None
    pooled_within_std: float | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeGroup:
        """Read one entry of the judge summary's ``j`` (other keys are ignored)."""
        return cls(
            mean=opt_float(data.get("mean")),
            count=int(data.get("count") or 0),
            std_across_runs=opt_float(data.get("std_across_runs")),
            pooled_within_std=opt_float(data.get("pooled_within_std")),
        )


@dataclass(frozen=True)
class JudgeSummary:
    """Typed view of the judge package's summary (``summary.json`` -> ``judge``).

    The judge package builds and owns that dict (:func:`locomo_exp.judge.run_judge`);
    this class reads the fields the report shows, and :meth:`to_json` returns the dict
    unchanged, so no key the judge adds is lost.

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
        tokens: ``{"input", "output"}`` token totals.
        estimated_cost_usd: cost of the calls made (USD), or ``None`` without a price.
        dry_run_estimate: the estimate of a dry run (no call made), else ``None``.
        prompt_too_long_questions: ids of questions whose prompt the API refused.
        raw: the judge's dict as produced.
        provider: ``judge.provider`` (``None`` in summaries made before providers).
        endpoint: the API base URL the calls went to (never a key).
        endpoint_kind: ``default`` or ``custom``.
        model_snapshot: the model id the API answered with (most replies), if known.
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
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    provider: str | None = None
    endpoint: str | None = None
    endpoint_kind: str | None = None
    model_snapshot: str | None = None

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

    def to_json(self) -> dict[str, Any]:
        """The judge's dict, as produced (a shallow copy)."""
        return dict(self.raw)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeSummary:
        """Wrap the judge's summary dict; absent fields read as ``None``/empty."""
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
            dry_run_estimate=dict(data["dry_run_estimate"])
            if data.get("dry_run_estimate")
            else None,
            prompt_too_long_questions=tuple(
                str(q) for q in data.get("prompt_too_long_questions") or ()
            ),
            raw=dict(data),
            **{
                name: None if data.get(name) is None else str(data[name])
                for name in ("provider", "endpoint", "endpoint_kind", "model_snapshot")
            },
        )
