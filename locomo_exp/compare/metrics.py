"""The metrics a comparison can test: every lexical metric of the registry, then J.

The lexical entries are derived from :data:`locomo_exp.scoring.specs.LEXICAL_SPECS`
(a new F1 variant is compared without an edit here); the judge's two metrics, J from
this tool's judge and a stored judge's verdicts, follow. ``compare.metrics`` and the
sweep's baseline comparison (:mod:`locomo_exp.sweep.vs_baseline`) choose among these
names.
"""

from __future__ import annotations

from dataclasses import dataclass

from locomo_exp.scoring.specs import LEXICAL_SPECS, MetricSpec


@dataclass(frozen=True)
class ComparedMetric:
    """A per-question metric two runs can be compared on.

    Attributes:
        name: key in the compare outputs (``f1_locomo``, ``bleu1``, ``j``, ``stored_j``).
        label: display name (compare tables, console, forest plot titles).
        field: the ``scores.jsonl`` field holding it.
        scale: factor from the stored value to points (0-100): 100 for a 0-1 metric,
            1 for J.
        binary_capable: a J-like metric, tested with exact McNemar when every value of
            both runs is 0 or 100.
        f1_variant: an F1 variant, so a comparison of runs whose ``f1.variant`` differs
            marks its rows.
    """

    name: str
    label: str
    field: str
    scale: float
    binary_capable: bool = False
    f1_variant: bool = False


def lexical_compared(spec: MetricSpec) -> ComparedMetric:
    """The compared form of a lexical metric (stored 0-1 in ``scores.jsonl``).

    Args:
        spec: an entry of :data:`~locomo_exp.scoring.specs.LEXICAL_SPECS`.

    Returns:
        Its :class:`ComparedMetric`: name and field ``spec.metric``, label
        ``spec.short_title``, scale ``100 / spec.scale[1]`` (points).
    """
    return ComparedMetric(
        name=spec.metric,
        label=spec.short_title,
        field=spec.metric,
        scale=100.0 / spec.scale[1],
        f1_variant=spec.kind == "f1",
    )


JUDGE_METRICS: tuple[ComparedMetric, ...] = (
    ComparedMetric("j", "J", "j_mean", 1.0, binary_capable=True),
    ComparedMetric("stored_j", "stored J", "stored_judge_score", 1.0, binary_capable=True),
)
"""J of this tool's judge (0-100) and the verdicts a results file stored (0-100)."""

COMPARED_METRICS: tuple[ComparedMetric, ...] = (
    *(lexical_compared(spec) for spec in LEXICAL_SPECS),
    *JUDGE_METRICS,
)
"""Every comparable metric, in table order: the lexical metrics, then J."""

COMPARED_BY_NAME: dict[str, ComparedMetric] = {m.name: m for m in COMPARED_METRICS}
""":data:`COMPARED_METRICS` by name."""

F1_VARIANT_METRICS: tuple[str, ...] = tuple(m.name for m in COMPARED_METRICS if m.f1_variant)
"""Names whose rows are marked when the compared runs' ``f1.variant`` differs."""

__all__ = [
    "COMPARED_BY_NAME",
    "COMPARED_METRICS",
    "F1_VARIANT_METRICS",
    "JUDGE_METRICS",
    "ComparedMetric",
    "lexical_compared",
]
