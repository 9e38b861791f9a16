"""Per-question scores and per-ability figures of both profiles, with cluster intervals.

Figures are plain dicts (``summary.json`` holds numbers and words). Every interval is a 95%
percentile cluster bootstrap (:func:`locomo_exp.stats.bootstrap.cluster_bootstrap_ci`): the
chat is the cluster, as BEAM's questions are nested in chats.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import ABILITIES, EVENT_ORDERING
from locomo_exp.benchmarks.beam.rows import BeamQuestion
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS, cluster_bootstrap_ci

EO_NOT_MEASURED = (
    "not measured: the authors score event ordering by Kendall tau-b over the answer's lines "
    "aligned to the rubric items (one yes/no judge call per line); stored item verdicts hold "
    "no such alignment"
)
"""Why beam-official's event-ordering figure cannot come from stored item verdicts."""

TAU_UNDEFINED = "tau-b undefined: one rank vector is constant (e.g. one line, no item matched)"
"""Why a judged event-ordering question has no beam-official score."""

MEAN_NOT_AUTHORS = "mean of the ability figures: not the authors' figure (they report none)"
"""The label of beam-official's mean over abilities."""


def question_scores(q: BeamQuestion, *, strict: bool = False) -> dict[str, Any]:
    """Both profiles' score of one question, from its item verdicts.

    Args:
        q: the question with its item verdicts (stored or judged).
        strict: ``beam.strict``: beam-official keeps a 0.5 verdict (mem0's clamp) instead
            of truncating it to 0.

    Returns:
        ``{"beam-nugget": {"score", "pass"}, "beam-official": {"score", "reason"}}``; the
        official score of event ordering is the aligned lines' normalised tau-b when a judged
        run aligned them, else ``None`` with a reason, as for a failed judging.
    """
    nugget = p.nugget_question_score(q.item_scores)
    if q.ability == EVENT_ORDERING:
        official: float | None = q.order_score if q.order_aligned else None
        reason: str | None = None if official is not None else (
            TAU_UNDEFINED if q.order_aligned else EO_NOT_MEASURED)
    else:
        items = q.item_scores
        if strict and items:
            items = tuple(p.clamp_item(s) for s in items)
            official = fmean(items)
        else:
            official = p.official_question_score(items)
        reason = None if official is not None else "no item verdicts (the judging failed)"
    return {
        p.NUGGET: {"score": nugget, "pass": p.nugget_passes(nugget)},
        p.OFFICIAL: {"score": official, "reason": reason},
    }


def _interval(values: Sequence[float], clusters: Sequence[str], *, samples: int,
              seed: int) -> list[float] | None:
    ci = cluster_bootstrap_ci(values, clusters, n_resamples=samples, seed=seed)
    return None if ci is None else [ci[0], ci[1]]


def _nugget_block(rows: Sequence[tuple[BeamQuestion, dict[str, Any]]], *, samples: int,
                  seed: int) -> dict[str, Any]:
    scores = [s[p.NUGGET]["score"] for _, s in rows]
    passes = [100.0 if s[p.NUGGET]["pass"] else 0.0 for _, s in rows]
    chats = [q.chat for q, _ in rows]
    return {
        "n": len(rows),
        "chats": len(set(chats)),
        "passes": sum(1 for _, s in rows if s[p.NUGGET]["pass"]),
        "pass_rate": fmean(passes) if rows else None,
        "pass_rate_ci": _interval(passes, chats, samples=samples, seed=seed),
        "avg_score": fmean(scores) if rows else None,
        "avg_score_ci": _interval(scores, chats, samples=samples, seed=seed),
        "judge_failed": sum(1 for q, _ in rows if q.judge_failed),
    }


def nugget_figures(scored: Sequence[tuple[BeamQuestion, dict[str, Any]]], *, samples: int,
                   seed: int) -> dict[str, Any]:
    """beam-nugget's figures: overall and per ability (pass rate in percent, average 0-1).

    Args:
        scored: each question with :func:`question_scores`.
        samples: bootstrap resamples per interval.
        seed: the bootstrap seed.

    Returns:
        ``{"profile", "version", "overall": {...}, "abilities": {ability: {...}}}`` where each
        block is ``{n, chats, passes, pass_rate, pass_rate_ci, avg_score, avg_score_ci,
        judge_failed}``; abilities with no question are left out.
    """
    abilities = {
        ability: _nugget_block([r for r in scored if r[0].ability == ability],
                               samples=samples, seed=seed)
        for ability in ABILITIES
        if any(q.ability == ability for q, _ in scored)
    }
    return {
        "profile": p.NUGGET,
        "version": p.PROFILE_VERSIONS[p.NUGGET],
        "overall": _nugget_block(scored, samples=samples, seed=seed),
        "abilities": abilities,
    }


def official_figures(scored: Sequence[tuple[BeamQuestion, dict[str, Any]]], *, samples: int,
                     seed: int) -> dict[str, Any]:
    """beam-official's figures from the stored item verdicts.

    Each ability's figure is the mean over chats of the per-chat mean question score; its
    interval resamples chats (the statistic of a resample is the mean of the drawn chats'
    means, the figure's own definition). There is no overall figure: ``mean_of_abilities``
    is the mean of the ten ability figures, labelled as not the authors', and ``None`` while
    one of them is not measured; ``mean_of_measured`` is the mean of those measured.

    Args:
        scored: each question with :func:`question_scores`.
        samples: bootstrap resamples per interval.
        seed: the bootstrap seed.

    Returns:
        ``{"profile", "version", "abilities": {ability: {score, ci, n, chats, unscored,
        reason}}, "mean_of_abilities", "mean_of_measured", "measured", "mean_label"}``.
    """
    abilities: dict[str, Any] = {}
    for ability in ABILITIES:
        rows = [(q, s) for q, s in scored if q.ability == ability]
        if not rows:
            continue
        pairs = [(q.chat, s[p.OFFICIAL]["score"]) for q, s in rows]
        chat_means = p.per_chat_means(pairs)
        unscored = sum(1 for _, v in pairs if v is None)
        reasons = {s[p.OFFICIAL]["reason"] for _, s in rows if s[p.OFFICIAL]["reason"]}
        abilities[ability] = {
            "score": p.official_ability_score(pairs),
            "ci": _interval(list(chat_means.values()), list(chat_means), samples=samples,
                            seed=seed),
            "n": len(rows),
            "chats": len({q.chat for q, _ in rows}),
            "unscored": unscored,
            "reason": sorted(reasons)[0] if unscored == len(rows) and reasons else None,
        }
    measured = [a["score"] for a in abilities.values() if a["score"] is not None]
    complete = len(measured) == len(ABILITIES)
    return {
        "profile": p.OFFICIAL,
        "version": p.PROFILE_VERSIONS[p.OFFICIAL],
        "abilities": abilities,
        "mean_of_abilities": fmean(measured) if complete else None,
        "mean_of_measured": fmean(measured) if measured else None,
        "measured": len(measured),
        "mean_label": MEAN_NOT_AUTHORS,
    }


def interval_note(samples: int) -> str:
    """The words under every table: what the interval is."""
    return (
        f"95% percentile cluster bootstrap over chats ({samples} resamples; none below "
        f"{MIN_RUN_CLUSTERS} chats)"
    )


__all__ = [
    "EO_NOT_MEASURED",
    "MEAN_NOT_AUTHORS",
    "TAU_UNDEFINED",
    "interval_note",
    "nugget_figures",
    "official_figures",
    "question_scores",
]
