"""Typed results of one run: what ``summary.json`` holds, as frozen dataclasses.

:class:`RunSummary` is built by :func:`locomo_exp.summary.build_summary` and read by the
report, the plots and the console table through attributes. Its :meth:`RunSummary.to_json`
is the one place that produces the ``summary.json`` layout (the contract MLflow metric names
and sweep summaries read), and :meth:`RunSummary.from_json` reads it back.

Layout (``schema_version`` 1)::

    {"schema_version": 1,
     "input": {path, name, sha256, format, prediction_key, n_records, n_skipped_records,
               skipped, n_missing_predictions, missing_predictions, n_excluded_no_gold,
               excluded_no_gold},
     "versions": {metric: version text},
     "category_names": {"1": name, ...},
     "counts": {category key: questions}, "conversations": {"1".."5", "overall": n},
     "metrics": {metric: {category key: {mean, count, min, max}}},     # lexical, 0-1
     "latency": {field: {count, p50, p95, mean}},                      # seconds; tokens
     "stored_judge": {category key: {mean, count, min, max}}?,         # 0-100
     "stored_vs_recomputed": {stored field: {best, equal, ...}}?,     # 0-1
     "runs": {n_runs, files, lexical: {metric: {key: {per_run, mean, std}}}}?,
     "judge": {...the judge package's summary...}?,                    # J 0-100
     "status": {part: "ok" | what happened},
     "analysis": {confidence, bootstrap_samples, seed, bootstrap, extremes,
                  disagreements?, reliability?}?}

Category keys are ``"1"``..``"5"``, ``"overall_1_4"`` and ``"overall"`` (see
:data:`locomo_exp.records.CATEGORY_GROUPS`). This module imports nothing from the rest of the
package, so every layer (scoring, judge, report, tracking) may use its types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

SCHEMA_VERSION = 1
"""Version of the ``summary.json`` layout written by :meth:`RunSummary.to_json`."""

_OVERALL_LABELS = {"overall_1_4": "overall (1-4)", "overall": "overall (1-5)"}


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class GroupStats:
    """Summary of the scores of one group of questions (one category key).

    Attributes:
        mean: arithmetic mean, same unit as the scores; ``None`` when ``count`` is 0.
        count: number of questions with a finite score.
        min: smallest score, or ``None``.
        max: largest score, or ``None``.
    """

    mean: float | None
    count: int
    min: float | None
    max: float | None

    def to_json(self) -> dict[str, Any]:
        """``{"mean", "count", "min", "max"}``."""
        return {"mean": self.mean, "count": self.count, "min": self.min, "max": self.max}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupStats:
        """Read ``{"mean", "count", "min"?, "max"?}`` (missing min/max -> ``None``)."""
        return cls(
            mean=_opt_float(data.get("mean")),
            count=int(data.get("count") or 0),
            min=_opt_float(data.get("min")),
            max=_opt_float(data.get("max")),
        )


ByCategory = dict[str, GroupStats]
"""Category key (``"1"``..``"5"``, ``"overall_1_4"``, ``"overall"``) -> :class:`GroupStats`."""


def by_category_to_json(groups: Mapping[str, GroupStats]) -> dict[str, Any]:
    """``{key: GroupStats.to_json()}`` in the given key order."""
    return {key: stats.to_json() for key, stats in groups.items()}


def by_category_from_json(data: Mapping[str, Any]) -> ByCategory:
    """Inverse of :func:`by_category_to_json`."""
    return {str(key): GroupStats.from_json(value) for key, value in data.items()}


_INPUT_KEYS = (
    "path",
    "name",
    "sha256",
    "format",
    "prediction_key",
    "n_records",
    "n_skipped_records",
    "skipped",
    "n_missing_predictions",
    "missing_predictions",
    "n_excluded_no_gold",
    "excluded_no_gold",
)


@dataclass(frozen=True)
class InputInfo:
    """The scored input file and what reading it dropped or flagged.

    Attributes:
        path: absolute path of the file as read.
        sha256: hex digest of the file's bytes.
        format: detected or configured layout (``qa_results``, ``locomo``, ``mem0``, ...).
        name: file name (default: the last part of ``path``).
        prediction_key: the prediction field used, when the layout has several.
        n_records: records scored.
        n_skipped_records: invalid records skipped (``data.on_invalid=skip``).
        skipped: one line per skipped record.
        n_missing_predictions: predictions null/NaN/Infinity in the file (scored 0).
        missing_predictions: where they are.
        n_excluded_no_gold: questions left out for having no gold answer.
        excluded_no_gold: where they are.
        extra: keys of a later layout this version does not know, kept for
            :meth:`to_json`.
    """

    path: str
    sha256: str
    format: str
    name: str = ""
    prediction_key: str | None = None
    n_records: int = 0
    n_skipped_records: int = 0
    skipped: tuple[str, ...] = ()
    n_missing_predictions: int = 0
    missing_predictions: tuple[str, ...] = ()
    n_excluded_no_gold: int = 0
    excluded_no_gold: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``input`` section of ``summary.json`` (lists for the tuples)."""
        return {
            "path": self.path,
            "name": self.name or PurePath(self.path).name,
            "sha256": self.sha256,
            "format": self.format,
            "prediction_key": self.prediction_key,
            "n_records": self.n_records,
            "n_skipped_records": self.n_skipped_records,
            "skipped": list(self.skipped),
            "n_missing_predictions": self.n_missing_predictions,
            "missing_predictions": list(self.missing_predictions),
            "n_excluded_no_gold": self.n_excluded_no_gold,
            "excluded_no_gold": list(self.excluded_no_gold),
            **self.extra,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InputInfo:
        """Read the ``input`` section; absent counts are 0, absent lists empty.

        Raises:
            KeyError: when ``path``, ``sha256`` or ``format`` is missing.
        """
        return cls(
            path=str(data["path"]),
            sha256=str(data["sha256"]),
            format=str(data["format"]),
            name=str(data.get("name") or PurePath(str(data["path"])).name),
            prediction_key=data.get("prediction_key"),
            n_records=int(data.get("n_records") or 0),
            n_skipped_records=int(data.get("n_skipped_records") or 0),
            skipped=tuple(str(s) for s in data.get("skipped") or ()),
            n_missing_predictions=int(data.get("n_missing_predictions") or 0),
            missing_predictions=tuple(str(s) for s in data.get("missing_predictions") or ()),
            n_excluded_no_gold=int(data.get("n_excluded_no_gold") or 0),
            excluded_no_gold=tuple(str(s) for s in data.get("excluded_no_gold") or ()),
            extra={k: v for k, v in data.items() if k not in _INPUT_KEYS},
        )


@dataclass(frozen=True)
class LatencyStats:
    """Percentiles of one optional per-question field (seconds, or tokens for context).

    Attributes:
        count: questions that have the field (0 when the input lacks it).
        p50: median (numpy ``linear`` percentile), or ``None``.
        p95: 95th percentile, or ``None``.
        mean: arithmetic mean, or ``None``.
    """

    count: int
    p50: float | None
    p95: float | None
    mean: float | None

    def to_json(self) -> dict[str, Any]:
        """``{"count", "p50", "p95", "mean"}``."""
        return {"count": self.count, "p50": self.p50, "p95": self.p95, "mean": self.mean}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LatencyStats:
        """Inverse of :meth:`to_json`."""
        return cls(
            count=int(data.get("count") or 0),
            p50=_opt_float(data.get("p50")),
            p95=_opt_float(data.get("p95")),
            mean=_opt_float(data.get("mean")),
        )


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
            mean=_opt_float(data.get("mean")),
            count=int(data.get("count") or 0),
            std_across_runs=_opt_float(data.get("std_across_runs")),
            pooled_within_std=_opt_float(data.get("pooled_within_std")),
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
            estimated_cost_usd=_opt_float(data.get("estimated_cost_usd")),
            dry_run_estimate=dict(data["dry_run_estimate"])
            if data.get("dry_run_estimate")
            else None,
            prompt_too_long_questions=tuple(
                str(q) for q in data.get("prompt_too_long_questions") or ()
            ),
            raw=dict(data),
        )


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
            gap=_opt_float(data.get("gap")),
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
            krippendorff_alpha=_opt_float(data.get("krippendorff_alpha")),
            level=str(data.get("level")),
            unanimous_share=_opt_float(data.get("unanimous_share")),
            questions=int(data.get("questions") or 0),
        )


@dataclass(frozen=True)
class Analysis:
    """Uncertainty, judge reliability and error analysis (:func:`locomo_exp.analysis.analyse`).

    Attributes:
        confidence: coverage of the intervals (0.95).
        bootstrap_samples: resamples per interval.
        seed: seed of the resampling.
        bootstrap: metric (``f1`` 0-1, ``j_mean`` 0-100) -> category key -> interval or ``None``.
        extremes: metric -> highest/lowest questions.
        disagreements: questions where F1 and J differ most (when both ran), else ``None``.
        reliability: judge agreement between runs (when the judge ran), else ``None``.
    """

    confidence: float
    bootstrap_samples: int
    seed: int
    bootstrap: dict[str, dict[str, BootstrapCI | None]]
    extremes: dict[str, Extremes]
    disagreements: tuple[QuestionBrief, ...] | None = None
    reliability: Reliability | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``analysis`` section of ``summary.json``."""
        data: dict[str, Any] = {
            "confidence": self.confidence,
            "bootstrap_samples": self.bootstrap_samples,
            "seed": self.seed,
            "bootstrap": {
                metric: {key: None if ci is None else ci.to_json() for key, ci in by_key.items()}
                for metric, by_key in self.bootstrap.items()
            },
            "extremes": {metric: ends.to_json() for metric, ends in self.extremes.items()},
        }
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
        return cls(
            confidence=float(data["confidence"]),
            bootstrap_samples=int(data["bootstrap_samples"]),
            seed=int(data.get("seed") or 0),
            bootstrap={
                str(metric): {str(k): BootstrapCI.from_json(v) for k, v in by_key.items()}
                for metric, by_key in (data.get("bootstrap") or {}).items()
            },
            extremes={
                str(m): Extremes.from_json(e) for m, e in (data.get("extremes") or {}).items()
            },
            disagreements=None
            if disagreements is None
            else tuple(QuestionBrief.from_json(q) for q in disagreements),
            reliability=None if reliability is None else Reliability.from_json(reliability),
        )


@dataclass(frozen=True)
class RunSummary:
    """Everything one run measured: the content of ``summary.json``.

    Attributes:
        input: the scored file.
        versions: metric name -> version text (F1 variants, BLEU-1, judge prompt).
        category_names: display name by category id as a string (``"1"`` -> ``multi_hop``).
        counts: questions per category key.
        conversations: conversations per category id (``"1"``..``"5"``) and ``overall``.
        metrics: lexical metric (``f1``, ``f1_locomo``, ..., ``bleu1``) -> category key ->
            stats; means 0-1. Empty when F1 was not run.
        latency: field (``search_latency_s``, ``total_latency_s``, ``context_tokens``) ->
            percentiles (seconds; tokens).
        stored_judge: another judge's verdicts carried by the input (0-100), or ``None``.
        judge: this run's judge (J 0-100), or ``None`` when it did not run.
        status: part (``f1``, ``judge``) -> ``"ok"`` or what happened.
        analysis: bootstrap intervals, reliability and error analysis, or ``None``.
        stored_judge_detail: stored J as the file's authors compute it (field, mean over
            judgments, majority vote, per-run J, mean ± std across runs; 0-100), or ``None``.
        stored_vs_recomputed: the file's own per-question metrics (``f1_score``,
            ``<name>_f1``...) against this run's, per stored field
            (:func:`locomo_exp.scoring.stored.compare_stored`; 0-1), or ``None``.
        runs: ``data.runs``: ``{"n_runs", "files", "lexical": {metric: {category key:
            {"per_run", "mean", "std"}}}}`` (0-1; sample std across runs), or ``None``.
    """

    input: InputInfo
    versions: dict[str, str]
    category_names: dict[str, str]
    counts: dict[str, int]
    conversations: dict[str, int]
    metrics: dict[str, ByCategory]
    latency: dict[str, LatencyStats]
    stored_judge: ByCategory | None = None
    judge: JudgeSummary | None = None
    status: dict[str, str] = field(default_factory=dict)
    analysis: Analysis | None = None
    stored_judge_detail: dict[str, Any] | None = None
    stored_vs_recomputed: dict[str, Any] | None = None
    runs: dict[str, Any] | None = None

    def category_name(self, key: str | int) -> str:
        """Display name of a category id (``"?"`` when unknown)."""
        return self.category_names.get(str(key), "?")

    def category_label(self, key: str) -> str:
        """Row label of a category key.

        Returns:
            ``"1 multi_hop"`` for an id, ``"overall (1-4)"`` or ``"overall (1-5)"`` for the
            overall keys.
        """
        if key.isdigit():
            return f"{key} {self.category_name(key)}"
        return _OVERALL_LABELS.get(key, key)

    @property
    def incomplete(self) -> bool:
        """True when a part of the run did not finish (a status other than ``ok``)."""
        return any(value != "ok" for value in self.status.values())

    def to_json(self) -> dict[str, Any]:
        """The ``summary.json`` layout (see the module docstring), ``schema_version`` first."""
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "input": self.input.to_json(),
            "versions": dict(self.versions),
            "category_names": dict(self.category_names),
            "counts": dict(self.counts),
            "conversations": dict(self.conversations),
            "metrics": {name: by_category_to_json(groups) for name, groups in self.metrics.items()},
            "latency": {name: stats.to_json() for name, stats in self.latency.items()},
        }
        if self.stored_judge is not None:
            data["stored_judge"] = by_category_to_json(self.stored_judge)
        if self.stored_judge_detail is not None:
            data["stored_judge_detail"] = self.stored_judge_detail
        if self.stored_vs_recomputed is not None:
            data["stored_vs_recomputed"] = self.stored_vs_recomputed
        if self.runs is not None:
            data["runs"] = self.runs
        if self.judge is not None:
            data["judge"] = self.judge.to_json()
        data["status"] = dict(self.status)
        if self.analysis is not None:
            data["analysis"] = self.analysis.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunSummary:
        """Read a ``summary.json`` (schema 1, or the unversioned layout before it).

        Raises:
            ValueError: for a ``schema_version`` newer than this code reads.
            KeyError: when a required section is missing.
        """
        version = int(data.get("schema_version", SCHEMA_VERSION))
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"summary.json schema_version {version} is newer than this locomo_exp reads "
                f"({SCHEMA_VERSION}); upgrade locomo_exp"
            )
        stored = data.get("stored_judge")
        judge = data.get("judge")
        analysis = data.get("analysis")
        return cls(
            input=InputInfo.from_json(data["input"]),
            versions={str(k): str(v) for k, v in data["versions"].items()},
            category_names={str(k): str(v) for k, v in data["category_names"].items()},
            counts={str(k): int(v) for k, v in data["counts"].items()},
            conversations={str(k): int(v) for k, v in (data.get("conversations") or {}).items()},
            metrics={str(m): by_category_from_json(g) for m, g in data["metrics"].items()},
            latency={
                str(n): LatencyStats.from_json(s) for n, s in (data.get("latency") or {}).items()
            },
            stored_judge=None if stored is None else by_category_from_json(stored),
            judge=None if judge is None else JudgeSummary.from_json(judge),
            status={str(k): str(v) for k, v in (data.get("status") or {}).items()},
            analysis=None if analysis is None else Analysis.from_json(analysis),
            stored_judge_detail=data.get("stored_judge_detail"),
            stored_vs_recomputed=data.get("stored_vs_recomputed"),
            runs=data.get("runs"),
        )
