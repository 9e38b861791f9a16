"""A BEAM sweep's rows, each job against the baseline job, the summary table.

A BEAM job's ``summary.json`` has no F1 and no LoCoMo J. Its headline figures, as its own
report gives them: beam-nugget's overall pass rate (percent, with its 95% cluster-bootstrap
interval over chats) and average score (0-1), and beam-official's mean of the ability
figures (0-1; not the authors' figure, and not measured when an ability is not, e.g. event
ordering of stored verdicts). Each job is paired with the baseline job as ``mode=compare``
of the two runs pairs them (:mod:`locomo_exp.benchmarks.beam.compare`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import ABILITIES, NAME
from locomo_exp.benchmarks.beam.compare import OVERALL, PROFILES, compare_runs, read_run, render
from locomo_exp.benchmarks.plugin_trust import TRUST_HEADER, TRUST_LEGEND, trust_sweep_cells
from locomo_exp.config import CompareConfig
from locomo_exp.report.run_dir import atomic_write_text


def is_beam_summary(summary: Mapping[str, Any] | None) -> bool:
    """Whether a job's ``summary.json`` is a BEAM run's."""
    return bool(summary) and (summary or {}).get("benchmark") == NAME


def beam_row_fields(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A BEAM job's cells of the sweep summary row.

    Args:
        summary: the job's ``summary.json`` (:func:`.summary.build_summary`).

    Returns:
        ``beam``: ``{"verdicts", "questions", "chats", "pass_rate", "pass_rate_ci",
        "avg_score", "avg_score_ci", "official_mean", "official_measured",
        "official_abilities"}`` (``official_measured`` of BEAM's ``official_abilities``
        abilities measured; pass rate in percent, the rest 0-1; ``None`` when not
        measured, e.g. a dry run; ``verdicts`` is ``stored (<judge>)``, ``judge (<model>,
        <profile>)`` or ``none``) and ``n_questions``. The headlines and the judge's counts,
        tokens and cost are the run log's (:mod:`locomo_exp.sweep.log_rows`).
    """
    verdicts = summary.get("verdicts") or {}
    judge = summary.get("judge") or {}
    source = verdicts.get("source") or "none"
    words = "none" if source == "none" else f"{source} ({verdicts.get('judge_model')}"
    if source == "judge":
        words += f", {judge.get('profile')}{' strict' if judge.get('strict') else ''}"
    words += "" if source == "none" else ")"
    figures = summary.get("figures") or {}
    overall = (figures.get(p.NUGGET) or {}).get("overall") or {}
    official = figures.get(p.OFFICIAL) or {}
    beam = {
        "verdicts": words,
        "questions": (summary.get("input") or {}).get("questions"),
        "chats": (summary.get("input") or {}).get("chats"),
        "pass_rate": overall.get("pass_rate"),
        "pass_rate_ci": overall.get("pass_rate_ci"),
        "avg_score": overall.get("avg_score"),
        "avg_score_ci": overall.get("avg_score_ci"),
        "official_mean": official.get("mean_of_abilities"),
        "official_measured": official.get("measured"),
        "official_abilities": len(ABILITIES) if official else None,
    }
    return {"beam": beam, "n_questions": beam["questions"]}


def _group_cells(group: Mapping[str, Any]) -> dict[str, Any]:
    return {key: group.get(key) for key in
            ("n_pairs", "unpaired", "chats", "difference", "ci", "pvalue")}


def beam_vs_baseline(rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path) -> str:
    """Each completed BEAM job against the baseline job, as ``mode=compare`` does.

    Questions paired by ``question_id``; for each profile the overall difference of the
    mean question score (job - baseline, 0-1) with its 95% percentile cluster-bootstrap
    interval over chats and the paired sign-flip test's p, at ``mode=compare``'s defaults
    (:func:`locomo_exp.benchmarks.beam.compare.compare_runs`). Each pair's ``compare.md``
    and ``compare.json`` (every ability too) are written to ``vs_baseline/<job>/``.

    Args:
        rows: the completed rows other than the baseline's (modified: ``vs_baseline`` =
            ``{"beam": {profile: {"n_pairs", "unpaired", "chats", "difference", "ci",
            "pvalue"}}}`` or ``{"error": ...}``, and ``vs_baseline_warnings``: the pair's
            NOT COMPARABLE reasons).
        base: the completed baseline job's row.
        sweep_dir: the sweep directory.

    Returns:
        The method, in words.
    """
    defaults = CompareConfig()
    base_error = ""
    try:
        base_run = read_run(Path(base["output_dir"]))
    except (ValueError, OSError) as error:
        base_run, base_error = None, str(error)
    for row in rows:
        try:
            if base_run is None:
                raise ValueError(base_error)
            result = compare_runs(read_run(Path(row["output_dir"])), base_run,
                                  samples=defaults.bootstrap_samples,
                                  permutations=defaults.permutation_samples, seed=defaults.seed)
        except (ValueError, OSError) as error:
            row["vs_baseline"] = {"error": str(error)}
            continue
        row["vs_baseline"] = {"beam": {profile: _group_cells(result["profiles"][profile][OVERALL])
                                       for profile in PROFILES}}
        row["vs_baseline_warnings"] = [f"NOT COMPARABLE: {why}" for why in result["not_comparable"]]
        out = sweep_dir / "vs_baseline" / str(row["job"])
        out.mkdir(parents=True, exist_ok=True)
        _, md = render(result, (f"job {row['job']}", f"job {base['job']}"))
        atomic_write_text(out / "compare.md", md + "\n")
        atomic_write_text(out / "compare.json", json.dumps(result, indent=2) + "\n")
    return (
        "as mode=compare of the two runs: questions paired by question_id, mean question score "
        f"(0-1), 95% percentile cluster bootstrap over chats ({defaults.bootstrap_samples} "
        f"resamples, seed {defaults.seed}), paired sign-flip test (exact up to "
        f"{defaults.permutation_samples} sign patterns, else that many draws)"
    )


def _cell(value: Any, fmt: str = ".3f") -> str:
    return "—" if value is None else format(value, fmt)


def _official_cell(beam: Mapping[str, Any]) -> str:
    if beam.get("official_mean") is not None:
        return _cell(beam["official_mean"])
    if beam.get("official_measured") is not None and beam.get("official_abilities"):
        return f"not measured ({beam['official_measured']}/{beam['official_abilities']} abilities)"
    return "—"


def _vs_cells(found: Mapping[str, Any] | None) -> list[str]:
    cells = []
    for profile in PROFILES:
        group = (found or {}).get(profile) or {}
        if group.get("difference") is None:
            cells += ["—", "—", "—"]
            continue
        low, high = group["ci"]
        cells += [f"{group['difference']:+.3f}", f"[{low:+.3f}, {high:+.3f}]",
                  _cell(group["pvalue"], ".4f")]
    return cells


def beam_table(summary: Mapping[str, Any],
               spending: Callable[[dict[str, Any]], tuple[str, list[str], str]]) -> list[str]:
    """The lines of a BEAM sweep's table (after the summary's opening lines).

    Args:
        summary: the sweep summary (``rows``, ``swept_keys``, ``baseline``).
        spending: a row's status, token and cost cells (as a LoCoMo sweep shows them).

    Returns:
        A legend line, the vs-baseline line when compared, then the table: per job its
        verdicts, beam-nugget pass rate (percent) with its 95% interval and average score,
        beam-official mean of abilities, the overall differences from the baseline job of
        both profiles with intervals and p, the trust columns (corrected accept rate with
        its interval, the audit's rates, or "not measured"), judge counts, tokens, cost and
        wall time.
    """
    rows, keys = summary["rows"], summary["swept_keys"]
    base = summary.get("baseline") or {}
    lines = [
        "- BEAM figures of the verdicts each job's headline names: beam-nugget pass rate in "
        "percent (95% cluster bootstrap over chats) and average score (0-1); beam-official "
        "mean of the ability figures (0-1; not the authors' figure, they report none)",
        TRUST_LEGEND.replace("audit controls", "audit controls, per rubric item"),
    ]
    compared = base.get("label") is not None
    if base.get("error"):
        lines.append(f"- vs baseline: not compared ({base['error']})")
    elif compared:
        lines.append(f"- vs baseline: overall mean question score of each job minus job "
                     f"{base['job']} ({base['label']}), per profile; {base['method']}")
    vs_header = [f"{name} {col}" for name in ("Δ nugget", "Δ official")
                 for col in ("vs base", "95% CI", "p")]
    header = ["job", *keys, "status", "verdicts", "pass rate %", "pass rate 95% CI",
              "avg score", "official mean", *(vs_header if compared else []), *TRUST_HEADER,
              "parse failures", "API errors", "input tokens", "output tokens", "cost $", "wall s"]
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        beam = r.get("beam") or {}
        ci = beam.get("pass_rate_ci")
        vs: list[str] = []
        if compared:
            if r["job"] == base.get("job"):
                vs = ["baseline", "", "", "baseline", "", ""]
            else:
                vs = _vs_cells((r.get("vs_baseline") or {}).get("beam"))
        status, tokens, cost = spending(r)
        cells = [str(r["job"]), *(str(r["swept"].get(k, "—")).replace("|", "\\|") for k in keys),
                 status, str(beam.get("verdicts") or "—").replace("|", "\\|"),
                 _cell(beam.get("pass_rate"), ".2f"),
                 f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "—", _cell(beam.get("avg_score")),
                 _official_cell(beam), *vs, *trust_sweep_cells(r),
                 _cell(r.get("parse_failures"), "d"),
                 _cell(r.get("api_errors"), "d"), *tokens, cost,
                 _cell(r.get("wall_time_s"), ".1f")]
        lines.append("| " + " | ".join(cells) + " |")
    errors = [(r["job"], r["vs_baseline"]["error"]) for r in rows
              if (r.get("vs_baseline") or {}).get("error")]
    lines += [f"- job {job}: — vs baseline: the comparison was refused: {e}" for job, e in errors]
    warned = [(r["job"], w) for r in rows for w in r.get("vs_baseline_warnings") or ()]
    if warned:
        lines += ["", "Warnings of the comparisons with the baseline job (as `mode=compare` "
                  "prints them; vs_baseline/<job>/compare.md):", ""]
        lines += [f"- job {job}: ⚠ {warning}" for job, warning in warned]
    return lines


__all__ = ["beam_row_fields", "beam_table", "beam_vs_baseline", "is_beam_summary"]
