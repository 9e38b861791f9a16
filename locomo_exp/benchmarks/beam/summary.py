"""What a BEAM run writes: ``summary.json``, ``card.json`` and the rows of ``scores.jsonl``.

``summary.json`` holds numbers and words (``schema_version`` first); the markdown is
:mod:`locomo_exp.benchmarks.beam.report`. Every block names its profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import NAME
from locomo_exp.benchmarks.beam.baselines import BEAM_BASELINES
from locomo_exp.benchmarks.beam.figures import (
    interval_note,
    nugget_figures,
    official_figures,
    question_scores,
)
from locomo_exp.benchmarks.beam.rows import BeamInput, BeamQuestion
from locomo_exp.benchmarks.beam.run_log import beam_run_log
from locomo_exp.report.provenance import provenance
from locomo_exp.results import SCHEMA_VERSION

SCALES = {
    "pass_rate": "percent (0-100)",
    "avg_score": "0-1",
    "official score": "0-1",
}
"""The unit of each figure, written into summary.json and card.json."""

NOT_SCORED = (
    "not measured: the answers carry no stored rubric-item verdicts; judge them with "
    "scorer=judge (benchmark=beam sets the authors' temperature 0 and one run; their "
    "model is gpt-4.1-mini: add judge=gpt-4.1-mini)"
)

DRY_RUN = "judge dry run: no call made, nothing scored (judge.dry_run_estimate has the count)"


def _warnings(inp: BeamInput, scored: Sequence[tuple[BeamQuestion, dict[str, Any]]],
              judged: dict[str, Any] | None) -> list[str]:
    warnings = []
    differ = [q.question_id for q, s in scored
              if q.stored_score is not None and abs(q.stored_score - s[p.NUGGET]["score"]) > 1e-9]
    if differ:
        warnings.append(
            f"{len(differ)} question(s) store a score that differs from the mean of their item "
            f"verdicts (first: {differ[0]}); the figures use the item verdicts")
    if inp.other_settings:
        warnings.append(
            f"scored cutoff {inp.setting} only; the file also holds "
            f"{', '.join(inp.other_settings)} (choose one with data.setting=<cutoff>)")
    if inp.stored and inp.verdicts_source == "judge" and judged:
        other = p.OFFICIAL if judged["profile"] == p.NUGGET else p.NUGGET
        warnings.append(
            f"the judge gave these item verdicts under the {judged['profile']} prompt"
            f"{' (strict)' if judged.get('strict') else ''}; the {other} figures re-aggregate "
            f"them: not comparable with {other} figures of a run judged under its own prompt")
    elif inp.stored:
        warnings.append(
            f"{p.OFFICIAL} figures here re-aggregate item verdicts judged under the stored run's "
            "own prompt (question shown, 0.5 allowed before truncation); the authors' judge "
            "(gpt-4.1-mini, no question shown) could give other verdicts: not comparable with "
            f"{p.OFFICIAL} figures of a judged run")
    if judged:  # the labels' and the panel's checks (kappa too low ...)
        warnings += [str(w) for w in (judged.get("trust") or {}).get("warnings") or ()]
    return warnings


def build_summary(inp: BeamInput, *, samples: int, seed: int,
                  judged: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``summary.json`` of a BEAM run.

    Args:
        inp: the read answers (with this run's judged verdicts, if any).
        samples: bootstrap resamples per interval (``report.bootstrap_samples``).
        seed: the bootstrap seed (``report.seed``).
        judged: the judge section of a judged run (:meth:`.judged.BeamJudged.section`:
            profile, strict, settings, counts, cost; ``dry_run_estimate`` for a dry run),
            else ``None``.

    Returns:
        ``{"schema_version", "benchmark", "profiles", "scales", "input", "verdicts",
        "figures": {profile: ...}, "baselines", "intervals", "warnings", "status",
        "run_log"}`` (``run_log``: :func:`.run_log.beam_run_log`, the typed log);
        ``figures`` is empty when nothing could be scored (``status.scoring`` says why).
    """
    dry_run = bool(judged and "dry_run_estimate" in judged)
    strict = bool(judged and judged.get("strict"))
    scored = ([(q, question_scores(q, strict=strict)) for q in inp.questions]
              if inp.stored and not dry_run else [])
    figures: dict[str, Any] = {}
    if scored:
        figures = {
            p.NUGGET: nugget_figures(scored, samples=samples, seed=seed),
            p.OFFICIAL: official_figures(scored, samples=samples, seed=seed),
        }
    judge = inp.stored_judge if inp.stored else None
    if judged and scored:
        judge = str(judged.get("model_snapshot") or judged.get("model") or "") or None
    summary: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": NAME,
        "profiles": {name: {"version": v} for name, v in p.PROFILE_VERSIONS.items()},
        "scales": dict(SCALES),
        "input": {
            "path": str(inp.path),
            "sha256": inp.sha256,
            "layout": inp.layout,
            "setting": inp.setting,
            "other_settings": list(inp.other_settings),
            "reference": [str(r) for r in inp.reference],
            "questions": len(inp.questions),
            "rubric_items": inp.n_items,
            "chats": len({q.chat for q in inp.questions}),
            "system": dict(inp.system),
        },
        "verdicts": {
            "source": inp.verdicts_source if scored else "none",
            "judge_model": judge,
        },
        "figures": figures,
        "baselines": [
            {
                "name": b.name,
                "profile": b.profile,
                "judge": b.judge,
                "source": b.source,
                "not_comparable": {
                    name: b.comparable(name, judge) for name in figures
                } if figures else {},
            }
            for b in BEAM_BASELINES
        ],
        "intervals": {"samples": samples, "seed": seed, "method": interval_note(samples)},
        "judge": judged,
        "warnings": _warnings(inp, scored, judged),
        "status": {"scoring": "ok" if scored else DRY_RUN if dry_run else NOT_SCORED},
    }
    summary["run_log"] = beam_run_log(summary).to_json()  # the typed log (docs/run_log.md)
    return summary


def build_card(summary: dict[str, Any], *, argv: list[str] | None = None) -> dict[str, Any]:
    """The ``card.json`` of a BEAM run: provenance, then what produced each figure.

    Args:
        summary: the run's ``summary.json``.
        argv: the command line (default ``sys.argv``).

    Returns:
        :func:`~locomo_exp.report.provenance.provenance`'s fields, then ``benchmark``,
        ``profiles`` (each with its version), ``headline_profile``, ``scales``, ``input``,
        ``verdicts`` (``stored (gpt-5)`` or ``none``), ``judge``.
    """
    verdicts = summary["verdicts"]
    judged = summary.get("judge")
    headline = None
    if summary["figures"]:
        headline = judged["profile"] if judged else p.NUGGET
    words = {"stored": "stored", "judge": "judged by this run"}
    return {
        **provenance(argv=argv),
        "benchmark": NAME,
        "profiles": summary["profiles"],
        "headline_profile": headline,
        "scales": summary["scales"],
        "input": {k: summary["input"][k] for k in ("path", "sha256", "layout", "setting")},
        "verdicts": (
            f"{words[verdicts['source']]} "
            f"({verdicts['judge_model'] or 'judge not named in the file'})"
            if verdicts["source"] in words else "none"
        ),
        "judge": ({k: judged.get(k) for k in ("profile", "strict", "protocol", "prompt_version",
                                              "template", "provider", "endpoint", "model",
                                              "temperature", "max_tokens", "mode")}
                  if judged else None),
    }


def score_rows(inp: BeamInput, *, strict: bool = False) -> list[dict[str, Any]]:
    """One ``scores.jsonl`` row per question: ids, item verdicts and both profiles' scores.

    Args:
        inp: the answers with their item verdicts (stored or judged).
        strict: ``beam.strict`` of a judged official run (0.5 kept).
    """
    rows = []
    stored = inp.stored  # a walk over every question: once, not once per question
    for q in inp.questions:
        scores = question_scores(q, strict=strict) if stored else None
        rows.append({
            "question_id": q.question_id,
            "chat": q.chat,
            "ability": q.ability,
            "position": q.position,
            "difficulty": q.difficulty,
            "setting": inp.setting,
            "rubric_items": len(q.rubric),
            "item_scores": list(q.item_scores) if q.item_scores is not None else None,
            "judge_failed": q.judge_failed,
            "stored_score": q.stored_score,
            "verdicts": inp.verdicts_source if scores else None,
            "order_tau_norm": q.order_score if q.order_aligned else None,
            p.NUGGET: scores[p.NUGGET] if scores else None,
            p.OFFICIAL: scores[p.OFFICIAL] if scores else None,
        })
    return rows


__all__ = ["DRY_RUN", "NOT_SCORED", "SCALES", "build_card", "build_summary", "score_rows"]
