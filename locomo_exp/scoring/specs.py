"""The one list of lexical metrics: every F1 variant and BLEU-1, each a :class:`MetricSpec`.

Everything that names a lexical metric is derived from :data:`LEXICAL_SPECS`
(``f1.variant``'s choices, :class:`locomo_exp.config.F1Variant`, are the variants of the
``conf/f1`` presets, which ``tests/scoring/test_f1_specs.py`` checks against it), the
per-question metric names (:data:`LEXICAL_METRICS`), the version strings written into every
output (:data:`F1_VERSIONS`, :data:`BLEU1_VERSION`), the scoring functions (:data:`F1_FUNCTIONS`)
and the report's column titles (:data:`METRIC_TITLES`). A spec cannot be built without a
title, so no metric can drop out of the report unnoticed.

Adding an F1 variant ``foo``:

1. write ``foo_f1(predicted, ground_truth, category) -> float`` (0-1) in
   :mod:`locomo_exp.scoring.f1`;
2. add ``MetricSpec(name="foo", kind="f1", function=foo_f1, version=..., title=...,
   short_title=..., source=...)`` to :data:`LEXICAL_SPECS` below;
3. add ``locomo_exp/conf/f1/foo.yaml`` (``variant: foo``, ``bleu1: true``).

``f1=foo`` then works on the command line, every run computes and reports ``f1_foo``,
its version is written into ``summary.json`` and MLflow, and ``mode=compare`` and the
sweep's baseline comparison test it (:mod:`locomo_exp.compare.metrics`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from locomo_exp.scoring.f1 import (
    BLEU1_BASE_VERSION,
    bleu1,
    bleu1_version,
    compute_token_f1,
    locomo_f1,
    mem0_f1,
)

ScoreFunction = Callable[[str, str, int], float]
"""``fn(predicted, ground_truth, category) -> score``; the category is a LoCoMo id 1-5."""


class UnknownMetricError(ValueError):
    """A metric or F1 variant name that is not in :data:`LEXICAL_SPECS`."""


@dataclass(frozen=True)
class MetricSpec:
    """One lexical metric: how it is computed, which semantics, how it is shown.

    Attributes:
        name: the spec's name: the F1 variant (``locomo``, ``squad``, ``mem0``) for
            ``kind="f1"``, else the metric (``bleu1``).
        kind: ``f1`` (a token-F1 variant, selectable as ``f1.variant``) or ``bleu1``.
        function: ``fn(predicted, ground_truth, category) -> score`` for one reference.
        version: version text written into every output, so two numbers can be told apart.
        title: column title in the report.
        short_title: label where space is short (compare tables and console, forest
            plot titles).
        source: where the definition comes from (scorer file, paper).
        higher_is_better: direction of the metric.
        scale: ``(low, high)`` bounds of a per-question score; ``(0, 1)`` for every
            lexical metric (the report shows percent).
        official_rounding: decimals each per-question score is rounded to before the
            metric's authors average it (LoCoMo's ``evaluate_qa.py`` stores
            ``round(f1, 3)`` and ``analyze_aggr_acc`` averages those); ``None`` when the
            authors average unrounded scores. A spec with it also gets the aggregate
            ``<metric>_official`` (:data:`OFFICIAL_SUFFIX`).
    """

    name: str
    kind: Literal["f1", "bleu1"]
    function: ScoreFunction
    version: str
    title: str
    short_title: str
    source: str
    higher_is_better: bool = True
    scale: tuple[float, float] = (0.0, 1.0)
    official_rounding: int | None = None

    def __post_init__(self) -> None:
        """Refuse a spec without a name, title or version (it would vanish from outputs)."""
        for attribute in ("name", "title", "short_title", "version", "source"):
            if not str(getattr(self, attribute)).strip():
                raise ValueError(f"MetricSpec {self.name!r}: {attribute} must not be empty")

    @property
    def metric(self) -> str:
        """Per-question metric name in the outputs: ``f1_<name>``, or ``bleu1``."""
        return f"f1_{self.name}" if self.kind == "f1" else self.name

    @property
    def official_metric(self) -> str | None:
        """Name of the rounded-first aggregate (``f1_locomo_official``), or ``None``."""
        return None if self.official_rounding is None else self.metric + OFFICIAL_SUFFIX


def _without_category(function: Callable[[str, str], float]) -> ScoreFunction:
    """Adapt a ``fn(predicted, ground_truth)`` scorer to the :data:`ScoreFunction` shape."""

    def score(predicted: str, ground_truth: str, category: int) -> float:
        return function(predicted, ground_truth)

    score.__name__ = getattr(function, "__name__", "score")
    score.__doc__ = function.__doc__
    return score


LEXICAL_SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name="locomo",
        kind="f1",
        function=locomo_f1,
        version=(
            "locomo-official-f1/v2 (snap-research/LoCoMo task_eval/evaluation.py; "
            "NFC, best of golds)"
        ),
        title="F1, LoCoMo scorer (mean per question)",
        short_title="F1 (LoCoMo scorer)",
        source="snap-research/LoCoMo (branch code) task_eval/evaluation.py",
        official_rounding=3,
    ),
    MetricSpec(
        name="squad",
        kind="f1",
        function=_without_category(compute_token_f1),
        version=(
            "squad-stemmed-f1/v2 (NFC, quotes/dashes folded, Unicode punctuation dropped, "
            "decimal point kept; a/an/the removed, Porter stem, both-empty=1; best of golds)"
        ),
        title="F1, SQuAD-style stemmed",
        short_title="F1 (SQuAD, stemmed)",
        source="SQuAD v1.1 f1_score with Porter stemming (the project's robust variant)",
    ),
    MetricSpec(
        name="mem0",
        kind="f1",
        function=_without_category(mem0_f1),
        version=(
            "mem0-harness-f1/v2 (mem0ai/mem0 evaluation/metrics/utils.py, set overlap; "
            "NFC, best of golds)"
        ),
        title="F1, Mem0 harness",
        short_title="F1 (Mem0 harness)",
        source="mem0ai/mem0 evaluation/metrics/utils.py",
    ),
    MetricSpec(
        name="bleu1",
        kind="bleu1",
        function=_without_category(bleu1),
        version=BLEU1_BASE_VERSION,  # outputs name a differing nltk: output_version()
        title="BLEU-1 (Mem0 harness)",
        short_title="BLEU-1",
        source="mem0ai/mem0 evaluation/metrics/utils.py (nltk sentence_bleu)",
    ),
)
"""Every lexical metric, in report-column order. v2 of every variant: NFC on both texts,
several golds scored as the best one, a missing prediction scores 0; ``squad`` v2 also folds
quotes/dashes, drops Unicode punctuation and keeps decimal points."""

OFFICIAL_SUFFIX = "_official"
"""Suffix of a metric's official aggregate (:attr:`MetricSpec.official_rounding`)."""

OFFICIAL_AGGREGATION_VERSION = (
    "mean of round(score, {digits}) per question (snap-research/LoCoMo task_eval/"
    "evaluate_qa.py stores round(f1, 3); analyze_aggr_acc averages the stored values)"
)
"""Version text of an official aggregate; ``{digits}`` is the spec's rounding."""

REPORTED_F1 = "f1"
"""Per-question name of the F1 selected by ``f1.variant`` (a copy of ``f1_<variant>``)."""

REPORTED_F1_TITLE = "F1 (reported variant)"
"""Report column title of :data:`REPORTED_F1`."""

F1_SPECS: tuple[MetricSpec, ...] = tuple(s for s in LEXICAL_SPECS if s.kind == "f1")
"""The F1 variants, in order."""

F1_VARIANTS: tuple[str, ...] = tuple(s.name for s in F1_SPECS)
"""Allowed values of ``f1.variant`` (``locomo``, ``squad``, ``mem0``)."""

BLEU1_SPEC: MetricSpec = next(s for s in LEXICAL_SPECS if s.kind == "bleu1")
"""BLEU-1's spec."""

F1_FUNCTIONS: dict[str, ScoreFunction] = {s.name: s.function for s in F1_SPECS}
"""Per-question F1 by variant name: ``fn(predicted, ground_truth, category) -> [0, 1]``."""

F1_VERSIONS: dict[str, str] = {s.name: s.version for s in F1_SPECS}
"""Version string of each F1 variant, written into every output."""


LEXICAL_METRICS: tuple[str, ...] = (REPORTED_F1, *(s.metric for s in LEXICAL_SPECS))
"""Per-question lexical metric names (``f1``, ``f1_locomo``, ..., ``bleu1``); all are 0-1."""

OFFICIAL_SPECS: tuple[MetricSpec, ...] = tuple(
    s for s in LEXICAL_SPECS if s.official_rounding is not None
)
"""Specs whose authors round each question first (``locomo``: 3 decimals)."""

OFFICIAL_VERSIONS: dict[str, str] = {
    str(s.official_metric): OFFICIAL_AGGREGATION_VERSION.format(digits=s.official_rounding)
    for s in OFFICIAL_SPECS
}
"""Version text of each official aggregate (``f1_locomo_official``), for ``summary.json``."""


def _titles() -> dict[str, str]:
    titles = {REPORTED_F1: REPORTED_F1_TITLE}
    for spec in LEXICAL_SPECS:
        titles[spec.metric] = spec.title
        if spec.official_metric is not None:
            titles[spec.official_metric] = (
                f"F1, {spec.source.split(' ')[0].split('/')[-1]}'s own aggregate "
                f"(round({spec.official_rounding}) first)"
            )
    return titles


METRIC_TITLES: dict[str, str] = _titles()
"""Report column title of every lexical metric (per question, and the official aggregates
such as ``f1_locomo_official`` right after their metric), in column order."""


def f1_variant(name: str) -> MetricSpec:
    """The spec of an F1 variant.

    Args:
        name: a ``f1.variant`` value, e.g. ``"locomo"``.

    Returns:
        Its :class:`MetricSpec`.

    Raises:
        UnknownMetricError: ``unknown F1 variant 'x'. Available: locomo, squad, mem0``.
    """
    for spec in F1_SPECS:
        if spec.name == name:
            return spec
    raise UnknownMetricError(f"unknown F1 variant {name!r}. Available: {', '.join(F1_VARIANTS)}")


def lexical_spec(metric: str) -> MetricSpec:
    """The spec behind a per-question metric name (``f1_mem0``, ``bleu1``).

    Args:
        metric: a name from :data:`LEXICAL_METRICS` other than ``f1``.

    Returns:
        Its :class:`MetricSpec`.

    Raises:
        UnknownMetricError: for a name no spec has, listing the available ones.
    """
    for spec in LEXICAL_SPECS:
        if spec.metric == metric:
            return spec
    available = ", ".join(s.metric for s in LEXICAL_SPECS)
    raise UnknownMetricError(f"unknown lexical metric {metric!r}. Available: {available}")


def output_version(spec: MetricSpec) -> str:
    """The version text written into the outputs for a spec.

    BLEU-1's names the installed nltk when its tokenizer differs from the pinned one
    (:func:`locomo_exp.scoring.f1.bleu1_version`, checked here on first use so that
    importing the registry needs no nltk); every other spec's is its ``version``.

    Args:
        spec: a spec of :data:`LEXICAL_SPECS`.

    Returns:
        The version text.
    """
    return bleu1_version(spec.version) if spec.kind == "bleu1" else spec.version
