"""The run summary and its parts: input, lexical scores per category, latency.

:class:`RunSummary` is the whole of ``summary.json`` (layout in :mod:`locomo_exp.results`,
which re-exports these types); the judge's and the analysis' parts are typed in
:mod:`locomo_exp.results.judge` and :mod:`locomo_exp.results.analysis`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from locomo_exp.results.analysis import Analysis
from locomo_exp.results.convert import opt_float
from locomo_exp.results.judge import JudgeSummary
from locomo_exp.results.scales import locomo_scales

JUDGE_DRY_RUN = "dry run: nothing judged"
"""``summary["status"]["judge"]`` of ``judge.dry_run=true``: no call made, J not measured."""

WARNING_PREFIX = "warning: "
"""How the status of a part that finished with a warning starts: ``"warning: J inflated
(...)"`` (the judge's checks, :mod:`locomo_exp.trust.checks`). Such a part finished."""


NOT_MEASURED_PREFIX = "not measured"
"""How the status of a part that ran to its end with nothing to measure starts
(e.g. ``"not measured: no stored verdicts"``)."""


def part_finished(status: str) -> bool:
    """Whether a part's status says it ran to its end.

    Finished: ``"ok"``, ``"ok (...)"`` (e.g. ``"ok (stored verdicts)"`` and
    ``"ok (this tool's judge)"``), ``"warning: ..."`` and ``"not measured..."``. Not
    finished: ``"running"``, ``"interrupted ..."``, ``"failed: ..."``, a pending batch and
    :data:`JUDGE_DRY_RUN`.
    """
    return (
        status == "ok"
        or status.startswith(("ok (", WARNING_PREFIX, NOT_MEASURED_PREFIX))
    )


SCHEMA_VERSION = 2
"""Version of the ``summary.json`` layout of every benchmark's run (LoCoMo's written by
:meth:`RunSummary.to_json`). 2: the typed ``run_log`` section
(:mod:`locomo_exp.results.run_log`, whose ``RUN_LOG_VERSION`` is this number); 1: before it,
read by rebuilding the log."""

_OVERALL_LABELS = {"overall_1_4": "overall (1-4)", "overall": "overall (1-5)"}


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
            mean=opt_float(data.get("mean")),
            count=int(data.get("count") or 0),
            min=opt_float(data.get("min")),
            max=opt_float(data.get("max")),
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
            p50=opt_float(data.get("p50")),
            p95=opt_float(data.get("p95")),
            mean=opt_float(data.get("mean")),
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
            (:func:`locomo_exp.scoring.stored_vs_recomputed.compare_stored`; 0-1), or ``None``.
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
    def shown_groups(self) -> list[str]:
        """Category keys a report table shows: every id, then the overall groups that add something.

        ``overall_1_4`` when the input has questions of categories 1-4; ``overall`` (1-5)
        only when it differs from ``overall_1_4``, i.e. when the input has category-5
        questions (without them the two are the same questions and the same numbers,
        and a row labelled "overall (1-5)" would suggest category 5 was scored).
        ``summary.json`` and MLflow keep both keys.
        """
        keys = [key for key in self.counts if key.isdigit()]
        n_1_4, n_all = self.counts.get("overall_1_4", 0), self.counts.get("overall", 0)
        if n_1_4:
            keys.append("overall_1_4")
        if n_all and n_all != n_1_4:
            keys.append("overall")
        return keys

    @property
    def overall_note(self) -> str:
        """The line under a table that leaves ``overall`` (1-5) out, else ``""``."""
        if "overall" in self.shown_groups or not self.counts.get("overall"):
            return ""
        return (
            "No overall (1-5) row: the input has no category-5 question, so it equals "
            "overall (1-4)."
        )

    @property
    def incomplete(self) -> bool:
        """True when a part of the run did not finish (a status other than ``ok``).

        A judge dry run (:data:`JUDGE_DRY_RUN`) did what it was asked: it is not incomplete
        (:attr:`judge_dry_run` says what it is).
        """
        return any(
            not part_finished(value) and value != JUDGE_DRY_RUN for value in self.status.values()
        )

    @property
    def judge_dry_run(self) -> bool:
        """True for ``judge.dry_run=true``: the judge's calls were estimated, none made."""
        return self.status.get("judge") == JUDGE_DRY_RUN

    @property
    def warnings(self) -> list[str]:
        """Warnings the reader must see first: the judge's checks (J inflated or deflated).

        The trust summary's :attr:`~locomo_exp.results.TrustSummary.warnings`
        (:mod:`locomo_exp.trust.checks`); a summary written before them has only the
        audit's ``j_inflated`` line.
        """
        trust = self.judge.trust if self.judge is not None else None
        if trust is None:
            return []
        if trust.warnings:
            return list(trust.warnings)
        inflated = trust.audit.j_inflated if trust.audit is not None else None
        return [inflated] if inflated else []

    def to_json(self) -> dict[str, Any]:
        """The ``summary.json`` layout (see the module docstring), ``schema_version`` first."""
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "scales": locomo_scales(
                self.metrics,
                stored_judge=self.stored_judge is not None,
                judge=self.judge is not None and bool(self.judge.j),
            ),
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
        """Read a ``summary.json`` (schema 2, 1, or the unversioned layout before them).

        The ``run_log`` section (schema 2) is not read here: it is built from this summary
        (:func:`locomo_exp.results.locomo_log.locomo_run_log`).

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
