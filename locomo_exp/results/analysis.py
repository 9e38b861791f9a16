"""Typed analysis results of one run: bootstrap intervals, extremes, judge reliability.

These are what ``summary.json`` -> ``analysis`` holds (built by :mod:`locomo_exp.scoring.summary`).
Re-exported by :mod:`locomo_exp.results`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from locomo_exp.results.convert import opt_float


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile-bootstrap confidence interval, in the unit of the metric.

    Attributes:
        low: lower bound.
        high: upper bound.
    """

    low: float
    high: float

    def to_json(self) -> list[float]:
        """``[low, high]``."""
        return [self.low, self.high]

    @classmethod
    def from_json(cls, data: Sequence[float] | None) -> BootstrapCI | None:
        """``[low, high]`` -> interval; ``None``/empty -> ``None``."""
        if not data:
            return None
        return cls(low=float(data[0]), high=float(data[1]))


_BRIEF_KEYS = ("question_id", "category", "question", "ground_truth", "prediction")


@dataclass(frozen=True)
class QuestionBrief:
    """One question as the error analysis lists it.

    Attributes:
        question_id: the question's id.
        category: LoCoMo category id.
        question: question text.
        ground_truth: gold answer (category 5: the trap answer).
        prediction: the system's answer.
        scores: metric -> value, in the order written (``f1`` 0-1, ``j_mean`` 0-100).
        gap: J - 100·F1 for F1-J disagreements, else ``None``.
    """

    question_id: Any
    category: Any
    question: Any
    ground_truth: Any
    prediction: Any
    scores: dict[str, float | None]
    gap: float | None = None

    def score(self, metric: str) -> float | None:
        """The value of ``metric`` (e.g. ``f1``, ``j_mean``), or ``None``."""
        return self.scores.get(metric)

    def to_json(self) -> dict[str, Any]:
        """Base fields, then the scores, then ``gap`` when set."""
        data: dict[str, Any] = {
            "question_id": self.question_id,
            "category": self.category,
            "question": self.question,
            "ground_truth": self.ground_truth,
            "prediction": self.prediction,
            **self.scores,
        }
        if self.gap is not None:
            data["gap"] = self.gap
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QuestionBrief:
        """Inverse of :meth:`to_json`."""
        return cls(
            **{key: data.get(key) for key in _BRIEF_KEYS},
            scores={k: v for k, v in data.items() if k not in _BRIEF_KEYS and k != "gap"},
            gap=opt_float(data.get("gap")),
        )


@dataclass(frozen=True)
class Extremes:
    """Highest and lowest questions by one metric.

    Attributes:
        top: highest first.
        bottom: lowest first.
    """

    top: tuple[QuestionBrief, ...]
    bottom: tuple[QuestionBrief, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"top": [...], "bottom": [...]}``."""
        return {
            "top": [q.to_json() for q in self.top],
            "bottom": [q.to_json() for q in self.bottom],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Extremes:
        """Inverse of :meth:`to_json`."""
        return cls(
            top=tuple(QuestionBrief.from_json(q) for q in data.get("top") or ()),
            bottom=tuple(QuestionBrief.from_json(q) for q in data.get("bottom") or ()),
        )


@dataclass(frozen=True)
class Reliability:
    """Agreement between judge runs on the same questions.

    Attributes:
        krippendorff_alpha: Krippendorff's alpha, runs as coders, or ``None``.
        level: level of measurement (``nominal``, ``interval``, ...).
        unanimous_share: share (0-1) of questions whose valid runs all agree, or ``None``.
        questions: questions judged.
    """

    krippendorff_alpha: float | None
    level: str
    unanimous_share: float | None
    questions: int

    def to_json(self) -> dict[str, Any]:
        """``{"krippendorff_alpha", "level", "unanimous_share", "questions"}``."""
        return {
            "krippendorff_alpha": self.krippendorff_alpha,
            "level": self.level,
            "unanimous_share": self.unanimous_share,
            "questions": self.questions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reliability:
        """Inverse of :meth:`to_json`."""
        return cls(
            krippendorff_alpha=opt_float(data.get("krippendorff_alpha")),
            level=str(data.get("level")),
            unanimous_share=opt_float(data.get("unanimous_share")),
            questions=int(data.get("questions") or 0),
        )


CONVERSATION = "conversation"
QUESTION = "question"

INTERVAL_METHODS: dict[str, str] = {
    CONVERSATION: (
        "percentile cluster bootstrap: whole conversations resampled with replacement, the "
        "pooled mean of their questions (Davison & Hinkley 1997, §3.8)"
    ),
    QUESTION: (
        "percentile bootstrap: questions resampled with replacement as if independent "
        "(Efron & Tibshirani 1993, ch. 13)"
    ),
}
"""Resampling unit -> how its intervals are computed (``summary.json`` labels them so)."""


def _intervals_json(
    intervals: Mapping[str, Mapping[str, BootstrapCI | None]],
) -> dict[str, dict[str, list[float] | None]]:
    return {
        metric: {key: None if ci is None else ci.to_json() for key, ci in by_key.items()}
        for metric, by_key in intervals.items()
    }


def _intervals_from_json(data: Any) -> dict[str, dict[str, BootstrapCI | None]]:
    return {
        str(metric): {str(k): BootstrapCI.from_json(v) for k, v in by_key.items()}
        for metric, by_key in (data or {}).items()
    }


def headline_intervals_json(analysis: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The headline intervals of a ``summary.json`` ``analysis`` section, and their unit.

    Args:
        analysis: ``summary["analysis"]`` (``None`` or an older layout without
            ``intervals``: the question-level ``bootstrap``).

    Returns:
        ``("conversation", analysis["cluster_bootstrap"])`` when the headline is the
        conversation-cluster interval, else ``("question", analysis["bootstrap"])``; the
        mapping is metric -> category key -> ``[low, high]`` or ``None``.
    """
    analysis = analysis or {}
    if (analysis.get("intervals") or {}).get("headline") == CONVERSATION:
        return CONVERSATION, dict(analysis.get("cluster_bootstrap") or {})
    return QUESTION, dict(analysis.get("bootstrap") or {})


@dataclass(frozen=True)
class Analysis:
    """Uncertainty, judge reliability and error analysis (built by ``scoring.summary.analyse``).

    Attributes:
        confidence: coverage of the intervals (0.95).
        bootstrap_samples: resamples per interval (both units).
        seed: seed of the resampling (both units).
        bootstrap: the question-level intervals: metric (``f1`` 0-1, ``j_mean`` 0-100) ->
            category key -> interval or ``None``.
        extremes: metric -> highest/lowest questions.
        disagreements: questions where F1 and J differ most (when both ran), else ``None``.
        reliability: judge agreement between runs (when the judge ran), else ``None``.
        cluster_bootstrap: the conversation-cluster intervals, same layout as
            ``bootstrap`` (``None`` for a group with fewer than 2 conversations); empty
            when the questions carry no conversation ids.
        clusters: category key -> conversations among its questions (empty without
            conversation ids).
        headline: the unit of the interval a reader is shown first (report, MLflow,
            sweep): :data:`CONVERSATION` when cluster intervals exist, else
            :data:`QUESTION`.
        headline_note: why the headline is question-level (``""`` when it is not).
    """

    confidence: float
    bootstrap_samples: int
    seed: int
    bootstrap: dict[str, dict[str, BootstrapCI | None]]
    extremes: dict[str, Extremes]
    disagreements: tuple[QuestionBrief, ...] | None = None
    reliability: Reliability | None = None
    cluster_bootstrap: dict[str, dict[str, BootstrapCI | None]] = field(default_factory=dict)
    clusters: dict[str, int] = field(default_factory=dict)
    headline: str = QUESTION
    headline_note: str = ""

    @property
    def headline_intervals(self) -> dict[str, dict[str, BootstrapCI | None]]:
        """The headline unit's intervals (metric -> category key -> interval or ``None``)."""
        return self.cluster_bootstrap if self.headline == CONVERSATION else self.bootstrap

    def to_json(self) -> dict[str, Any]:
        """The ``analysis`` section of ``summary.json``.

        ``intervals`` labels both kinds (unit, method, resamples, seed, confidence; the
        conversation kind with the number of conversations per group) and names the
        headline; ``bootstrap`` holds the question-level intervals, ``cluster_bootstrap``
        the conversation-cluster ones.
        """
        common = {
            "resamples": self.bootstrap_samples,
            "seed": self.seed,
            "confidence": self.confidence,
        }
        intervals: dict[str, Any] = {
            "headline": self.headline,
            "question": {"key": "bootstrap", "method": INTERVAL_METHODS[QUESTION], **common},
        }
        if self.cluster_bootstrap:
            intervals["conversation"] = {
                "key": "cluster_bootstrap",
                "method": INTERVAL_METHODS[CONVERSATION],
                **common,
                "clusters": dict(self.clusters),
            }
        if self.headline_note:
            intervals["note"] = self.headline_note
        data: dict[str, Any] = {
            "confidence": self.confidence,
            "bootstrap_samples": self.bootstrap_samples,
            "seed": self.seed,
            "intervals": intervals,
            "bootstrap": _intervals_json(self.bootstrap),
        }
        if self.cluster_bootstrap:
            data["cluster_bootstrap"] = _intervals_json(self.cluster_bootstrap)
        data["extremes"] = {metric: ends.to_json() for metric, ends in self.extremes.items()}
        if self.disagreements is not None:
            data["disagreements"] = [q.to_json() for q in self.disagreements]
        if self.reliability is not None:
            data["reliability"] = self.reliability.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Analysis:
        """Inverse of :meth:`to_json`."""
        disagreements = data.get("disagreements")
        reliability = data.get("reliability")
        intervals = data.get("intervals") or {}
        return cls(
            confidence=float(data["confidence"]),
            bootstrap_samples=int(data["bootstrap_samples"]),
            seed=int(data.get("seed") or 0),
            bootstrap=_intervals_from_json(data.get("bootstrap")),
            extremes={
                str(m): Extremes.from_json(e) for m, e in (data.get("extremes") or {}).items()
            },
            disagreements=None
            if disagreements is None
            else tuple(QuestionBrief.from_json(q) for q in disagreements),
            reliability=None if reliability is None else Reliability.from_json(reliability),
            cluster_bootstrap=_intervals_from_json(data.get("cluster_bootstrap")),
            clusters={
                str(k): int(v)
                for k, v in ((intervals.get("conversation") or {}).get("clusters") or {}).items()
            },
            headline=str(intervals.get("headline") or QUESTION),
            headline_note=str(intervals.get("note") or ""),
        )
