"""Rows of a comparison: per metric x category group, the paired statistics.

For each metric both runs carry and each group (every category present, ``overall_1_4``
= categories 1-4, ``overall`` = all), on the shared questions where both runs have a
value: mean A, mean B, their difference (A - B, points 0-100) with a 95% conversation-
cluster bootstrap interval and a question-level bootstrap interval, a paired test
(exact McNemar when both runs' values are all 0 or 100 on a J metric, a sign-flip
permutation test otherwise), the minimum detectable difference (80% power, alpha 0.05)
and a verdict.

Holm's adjustment (:func:`apply_holm`) runs over a family per metric: the category rows
of every compared pair; the overall rows of every pair form a family of their own.
A row's verdict is *A higher* / *B higher* when its Holm-adjusted p is below alpha and
its headline interval excludes 0, else *not distinguishable*. The headline interval is
the conversation-cluster one when the row has at least
:data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations (the threshold of a
run's headline interval; fewer give too few distinct resamples and a falsely narrow
interval); below it there is no cluster interval (NaN), the row says so (``note``,
``interval = "question"``) and its verdict uses the question-level paired interval.
"""

from __future__ import annotations

import logging
import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from locomo_exp.compare.metrics import COMPARED_BY_NAME
from locomo_exp.compare.run_data import RunData
from locomo_exp.data.match import Matching
from locomo_exp.stats.bootstrap import (
    MIN_RUN_CLUSTERS,
    cluster_bootstrap_mean_diff,
    question_bootstrap_mean_diff,
)
from locomo_exp.stats.paired import (
    holm_adjust,
    mcnemar_exact,
    mde_factor,
    minimum_detectable_difference,
    sign_flip_test,
)

logger = logging.getLogger(__name__)

NAN = float("nan")

A_HIGHER = "A higher"
B_HIGHER = "B higher"
NOT_DISTINGUISHABLE = "not distinguishable"
OVERALL_GROUPS = ("overall_1_4", "overall")

CONVERSATION = "conversation"
QUESTION = "question"
INTERVAL_METHODS = {
    CONVERSATION: "conversation-cluster bootstrap",
    QUESTION: "question-level paired bootstrap",
}
"""``CompareRow.interval`` -> the name of the method of the row's headline interval."""


def few_clusters_note(n: int) -> str:
    """Why a row's headline interval is question-level: ``n`` conversations, below the threshold.

    Args:
        n: conversations among the row's questions (fewer than
            :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS`).

    Returns:
        One sentence, e.g. ``"2 conversations: a conversation-cluster interval needs at
        least 5 (fewer give too few distinct resamples); the verdict uses the
        question-level paired interval and test"``.
    """
    return (
        f"{n} conversation{'s' if n != 1 else ''}: a conversation-cluster interval needs at "
        f"least {MIN_RUN_CLUSTERS} (fewer give too few distinct resamples); the verdict uses "
        "the question-level paired interval and test"
    )


@dataclass
class CompareRow:
    """One metric x group of one pair; values in points (0-100).

    Attributes:
        run_a, run_b: display names of the runs (difference is A - B).
        metric: metric name (``f1_locomo``, ``j``, ``stored_j``...).
        group: ``"1"``..``"5"``, ``"overall_1_4"`` or ``"overall"``.
        n: questions in the row; n_conversations: conversations among them.
        mean_a, mean_b, diff: means and difference.
        cluster_ci, question_ci: 95% intervals of the difference ``[low, high]``.
        cluster_se: standard error of the difference by the cluster bootstrap.
        test: the paired test used; p: its two-sided p-value; p_holm: Holm-adjusted.
        mde: minimum detectable difference, paired normal formula (questions independent).
        mde_cluster: ``2.80 x cluster_se`` (the same power rule on the clustered SE).
        verdict: ``A higher``, ``B higher`` or ``not distinguishable``.
        marks: why the row is not a like-for-like comparison (``allow_mismatch``).
        categories: when a run lacks values for some of the group's categories, the
            categories the row does cover (``overall_1_4`` of runs judged on categories 1
            and 2: ``[1, 2]``); empty when the row covers every category of the group's
            shared questions.
        note: how the verdict was reached when the clustered interval is not used
            (fewer than :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations:
            ``cluster_ci`` is NaN and the verdict uses the question-level interval), else ``""``.
        interval: which interval is the row's headline (verdict, console, sweep cell):
            ``"conversation"`` (cluster bootstrap) or ``"question"`` (question-level paired
            bootstrap); :data:`INTERVAL_METHODS` names the method.
        discordant: McNemar's discordant pairs ``[A only, B only]`` (questions only A, only
            B got right) when the test is exact McNemar, else ``None``; the flips the
            compare tags in MLflow and ``questions.html`` (``compare/questions.py``).
    """

    run_a: str
    run_b: str
    metric: str
    group: str
    n: int
    n_conversations: int
    mean_a: float
    mean_b: float
    diff: float
    cluster_ci: list[float]
    question_ci: list[float]
    cluster_se: float
    test: str
    p: float
    p_holm: float | None = None
    mde: float | None = None
    mde_cluster: float | None = None
    verdict: str = NOT_DISTINGUISHABLE
    marks: list[str] = field(default_factory=list)
    categories: list[int] = field(default_factory=list)
    note: str = ""
    interval: str = CONVERSATION
    discordant: list[int] | None = None

    @property
    def headline_ci(self) -> list[float]:
        """The headline 95% interval ``[low, high]`` in points (see ``interval``)."""
        return self.question_ci if self.interval == QUESTION else self.cluster_ci

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, with ``interval_method`` naming the headline interval's method."""
        return {**asdict(self), "interval_method": INTERVAL_METHODS[self.interval]}


def _groups(categories: np.ndarray) -> list[tuple[str, np.ndarray]]:
    out = [(str(c), categories == c) for c in sorted(set(categories.tolist()))]
    out.append(("overall_1_4", np.isin(categories, [1, 2, 3, 4])))
    out.append(("overall", np.ones(categories.shape, dtype=bool)))
    return [(g, m) for g, m in out if m.any()]


def _narrowed(group: np.ndarray, covered: np.ndarray) -> list[int]:
    """The covered categories when fewer than the group's, else ``[]``."""
    wanted, got = sorted({int(c) for c in group}), sorted({int(c) for c in covered})
    return got if got != wanted else []


def row_stream(seed: int, metric: str, group: str) -> np.random.Generator:
    """The random stream of one row: derived from the seed, the metric's and the group's names.

    Names, not positions: the same two runs compared on the same metric and group get the
    same interval whatever else is compared (``mode=compare`` of every metric and a
    sweep's baseline comparison of three agree exactly). CRC-32 (:func:`zlib.crc32`) turns
    a name into a stable integer (Python's ``hash`` of a string changes per process).

    Args:
        seed: ``compare.seed``.
        metric: metric name (``stored_j``).
        group: group key (``"1"``, ``"overall_1_4"``, ``"overall"``).

    Returns:
        ``numpy.random.default_rng([seed, crc32(metric), crc32(group)])``.
    """
    return np.random.default_rng([seed, zlib.crc32(metric.encode()), zlib.crc32(group.encode())])


def interval_method(bootstrap_samples: int, seed: int) -> str:
    """One line naming how every interval of a comparison was computed.

    ``compare.md`` and ``sweep_summary.md`` print it, so a reader can see that the two give
    the same interval for the same pair (both call :func:`compare_pair`).

    Args:
        bootstrap_samples: resamples per interval.
        seed: the comparison's seed.

    Returns:
        e.g. ``"95% percentile intervals, paired bootstrap resampling conversations
        (clusters) and questions: 2000 resamples, seed 0 (each row's stream from the seed,
        metric and group); a row's headline interval is the conversation one when it has at
        least 5 conversations, else the question-level one"``.
    """
    return (
        "95% percentile intervals, paired bootstrap resampling conversations (clusters) and "
        f"questions: {bootstrap_samples} resamples, seed {seed} (each row's stream from the "
        "seed, metric and group); a row's headline interval is the conversation one when it "
        f"has at least {MIN_RUN_CLUSTERS} conversations, else the question-level one"
    )


def _is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0.0) | (values == 100.0)))


def compare_pair(
    run_a: RunData,
    run_b: RunData,
    matching: Matching,
    metrics: Sequence[str],
    *,
    bootstrap_samples: int,
    permutation_samples: int,
    seed: int,
    alpha: float = 0.05,
    marks: dict[str, list[str]] | None = None,
) -> list[CompareRow]:
    """Rows of one pair of runs (before Holm; see :func:`apply_holm`).

    Args:
        run_a: run A.
        run_b: run B.
        matching: their shared questions.
        metrics: metric names to compare (those missing from either run are skipped).
        bootstrap_samples: resamples per interval.
        permutation_samples: Monte Carlo budget per sign-flip test.
        seed: base seed; each row draws from :func:`row_stream` (seed, metric name, group
            name), so the row's interval does not depend on which other metrics, groups or
            pairs are compared alongside it.
        alpha: level for the minimum detectable difference.
        marks: metric name -> mismatch notes attached to its rows.

    Returns:
        Rows in metric order, then group order (categories, overall_1_4, overall).
    """
    ia = np.array([p[0] for p in matching.pairs], dtype=int)
    ib = np.array([p[1] for p in matching.pairs], dtype=int)
    categories = np.array([int(run_a.rows[i]["category"]) for i in ia], dtype=int)
    conversations = np.array([str(run_a.rows[i]["conversation_id"]) for i in ia])
    rows: list[CompareRow] = []
    for metric in metrics:
        if metric not in run_a.values or metric not in run_b.values:
            continue
        va = np.array([run_a.values[metric][i] for i in ia], dtype=object)
        vb = np.array([run_b.values[metric][i] for i in ib], dtype=object)
        present = np.array(
            [x is not None and y is not None for x, y in zip(va, vb, strict=True)], dtype=bool
        )
        previous: tuple[np.ndarray, CompareRow] | None = None
        for group, mask in _groups(categories):
            sel = mask & present
            if not sel.any():
                continue
            if previous is not None and np.array_equal(previous[0], sel):  # overall == overall_1_4
                rows.append(replace(previous[1], group=group, marks=list(previous[1].marks)))
                continue
            a = va[sel].astype(float)
            b = vb[sel].astype(float)
            conv = conversations[sel]
            n_conv = int(np.unique(conv).size)
            rng = row_stream(seed, metric, group)
            cluster = cluster_bootstrap_mean_diff(
                a, b, conv, n_resamples=bootstrap_samples, seed=rng
            )
            clustered = n_conv >= MIN_RUN_CLUSTERS
            cluster_ci = [cluster.low, cluster.high] if clustered else [NAN, NAN]
            question = question_bootstrap_mean_diff(a, b, n_resamples=bootstrap_samples, seed=rng)
            if COMPARED_BY_NAME[metric].binary_capable and _is_binary(a) and _is_binary(b):
                test = mcnemar_exact(a, b)
            else:
                test = sign_flip_test(a, b, n_resamples=permutation_samples, seed=rng)
            d = a - b
            sd = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
            rows.append(
                CompareRow(
                    run_a=run_a.name,
                    run_b=run_b.name,
                    metric=metric,
                    group=group,
                    n=int(d.size),
                    n_conversations=n_conv,
                    mean_a=float(a.mean()),
                    mean_b=float(b.mean()),
                    diff=float(d.mean()),
                    cluster_ci=cluster_ci,
                    question_ci=[question.low, question.high],
                    cluster_se=cluster.std_error,
                    test=test.test,
                    p=test.pvalue,
                    mde=minimum_detectable_difference(sd, int(d.size), alpha=alpha),
                    mde_cluster=mde_factor(alpha) * cluster.std_error
                    if clustered
                    else None,
                    marks=list((marks or {}).get(metric, [])),
                    categories=_narrowed(categories[mask], categories[sel]),
                    note="" if clustered else few_clusters_note(n_conv),
                    interval=CONVERSATION if clustered else QUESTION,
                    discordant=list(test.discordant) if test.discordant else None,
                )
            )
            previous = (sel, rows[-1])
    return rows


def apply_holm(rows: list[CompareRow], alpha: float = 0.05) -> None:
    """Set ``p_holm`` and ``verdict`` of every row, in place.

    Families: per metric, the category rows of all pairs; per metric, the overall rows
    (``overall_1_4`` and ``overall`` separately) of all pairs. With one pair the overall
    families have one member (no adjustment).

    Args:
        rows: rows of every compared pair.
        alpha: family-wise level of the verdicts.
    """
    families: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        kind = row.group if row.group in OVERALL_GROUPS else "categories"
        families[(row.metric, kind)].append(i)
    for members in families.values():
        adjusted = holm_adjust([rows[i].p for i in members])
        for i, p in zip(members, adjusted, strict=True):
            rows[i].p_holm = p
    for row in rows:
        low, high = row.headline_ci
        separated = low > 0 or high < 0
        if row.p_holm is not None and row.p_holm < alpha and separated:
            row.verdict = A_HIGHER if row.diff > 0 else B_HIGHER
        else:
            row.verdict = NOT_DISTINGUISHABLE


__all__ = [
    "A_HIGHER",
    "B_HIGHER",
    "NOT_DISTINGUISHABLE",
    "CONVERSATION",
    "INTERVAL_METHODS",
    "QUESTION",
    "CompareRow",
    "apply_holm",
    "compare_pair",
    "few_clusters_note",
    "interval_method",
    "row_stream",
]
