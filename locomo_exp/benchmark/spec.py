"""One spec per benchmark: the facts every layer reads about it.

A :class:`BenchmarkSpec` gathers what the scorers, the report and the comparison need to
know about a benchmark's questions: its category ids and default names, the questions per
category of the full set, the overall groups, and the one question normaliser used to
match questions across files. :data:`LOCOMO` is the default benchmark's (the LoCoMo job, below
the plug-ins); a benchmark plug-in keeps its own spec in its package
(``locomo_exp/benchmarks/<name>/``), and the plug-in registry
(:mod:`locomo_exp.benchmarks.registry`) is the only list of benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from locomo_exp.benchmark import locomo


@dataclass(frozen=True)
class JudgeCheckLimits:
    """When a judge's verdicts on answers known to be right or wrong make its J suspect.

    Read by :mod:`locomo_exp.trust.checks` for the audit controls, the human labels and the
    verdicts stored in the input; documented in ``docs/trust.md`` ("Checks of the judge").
    Every rate check uses the 95% Wilson interval of the rate, so a verdict is given only
    where the interval lies wholly on one side of the limit.

    Attributes:
        inflated_above: false-accept rate (0-1) on answers known to be wrong (a
            should-be-rejected audit kind, the kinds pooled, or the answers a reference
            calls wrong): an interval wholly above it means "J inflated". 0.5: the judge
            accepts known-wrong answers more often than not.
        deflated_above: false-reject rate (0-1) on answers known to be right (the gold given
            as the answer, or the answers a reference calls correct; 1 - sensitivity): an
            interval wholly above it means "J deflated". 0.5: the judge rejects right
            answers more often than it accepts them.
        min_kappa: Cohen's kappa with human labels or stored verdicts below which the
            judge is said to disagree with them (0.2: "slight" agreement at best on
            Landis & Koch's 1977 scale).
        kappa_min_n: answers compared, at least, before the kappa check gives a verdict.
        unreadable_above: share (0-1) of the judge's replies to the answers that could
            not be read (parse failures, unscored or scored by a template's
            ``on_unparsed``) above which J is said to rest on unreadable replies. A count
            of this run's own replies, not an estimate: no interval. 0.05: one reply in
            twenty; a working reply format reads every reply but a rare odd one.
    """

    inflated_above: float = 0.5
    deflated_above: float = 0.5
    min_kappa: float = 0.2
    kappa_min_n: int = 30
    unreadable_above: float = 0.05


@dataclass(frozen=True)
class BenchmarkSpec:
    """The facts of one benchmark.

    Attributes:
        name: the registry key (``locomo``).
        title: the benchmark's name as shown in reports.
        category_ids: the category ids, in report order.
        category_names: default display names keyed by category id.
        category_sizes: questions per category in the full benchmark.
        overall_groups: overall keys and the categories each covers.
        normalize_question: question text -> its matching key (the one normaliser).
        source: where the facts come from.
        judge_checks: when the judge's verdicts on known answers make J suspect.
    """

    name: str
    title: str
    category_ids: tuple[int, ...]
    category_names: Mapping[int, str]
    category_sizes: Mapping[int, int]
    overall_groups: Mapping[str, tuple[int, ...]]
    normalize_question: Callable[[Any], str]
    source: str
    judge_checks: JudgeCheckLimits = JudgeCheckLimits()

    @property
    def full_questions(self) -> dict[str, int]:
        """Questions of the full benchmark per overall group (LoCoMo: 1,540 and 1,986)."""
        return {
            key: sum(self.category_sizes[c] for c in members)
            for key, members in self.overall_groups.items()
        }


LOCOMO = BenchmarkSpec(
    name="locomo",
    title="LoCoMo",
    category_ids=locomo.CATEGORY_IDS,
    category_names=locomo.DEFAULT_CATEGORY_NAMES,
    category_sizes=locomo.LOCOMO10_CATEGORY_SIZES,
    overall_groups=locomo.OVERALL_GROUPS,
    normalize_question=locomo.normalize_question,
    source="locomo10.json (snap-research/LoCoMo)",
)
"""LoCoMo-10: 10 conversations, 1,986 questions in five categories."""
