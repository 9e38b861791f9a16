"""A LongMemEval sweep's rows, their difference from the baseline job, the summary table.

Each job's LongMemEval figures, its difference from the baseline job (as ``mode=compare`` of
the two runs gives it) and the summary's table.

A LongMemEval job's ``summary.json`` has no F1 and no LoCoMo J: its figures are LongMemEval's
accuracies (overall, task-averaged, abstention; 0-1 in ``summary.json``, percent here) of the
verdicts its headline names (this project's judge, else the answer file's stored labels).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from locomo_exp.report.run_dir import atomic_write_text

logger = logging.getLogger(__name__)

PERCENT = 100.0


def _pct(value: Any) -> float | None:
    return float(value) * PERCENT if isinstance(value, (int, float)) else None


def is_lme_summary(summary: Mapping[str, Any] | None) -> bool:
    """Whether a job's ``summary.json`` is a LongMemEval run's."""
    return bool(summary) and (summary or {}).get("benchmark") == "longmemeval"


def lme_row_fields(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A LongMemEval job's cells of the sweep summary row.

    Args:
        summary: the job's ``summary.json``.

    Returns:
        ``lme``: ``{"verdicts", "overall", "overall_ci", "task_avg", "abstention",
        "questions"}`` (percent; ``verdicts`` names whose: ``judge (...)`` or ``stored
        (...)``; ``None`` values when not measured, e.g. a dry run), ``n_questions``,
        ``j_overall`` (this project's judge, percent) or ``stored_j_overall`` (the file's
        stored verdicts). The headlines and the judge's counts, tokens and cost are the run
        log's (:mod:`locomo_exp.sweep.log_rows`).
    """
    headline = summary.get("headline") or {}
    figures = headline.get("figures") or {}
    overall = figures.get("overall") or {}
    low, high = _pct(overall.get("ci_low")), _pct(overall.get("ci_high"))
    lme = {
        "verdicts": f"{headline['source']} ({headline['judge_model']})" if headline else None,
        "overall": _pct(overall.get("accuracy")),
        "overall_ci": [low, high] if low is not None and high is not None else None,
        "task_avg": _pct((figures.get("task_avg") or {}).get("accuracy")),
        "abstention": _pct((figures.get("abstention") or {}).get("accuracy")),
        "questions": overall.get("n"),
    }
    out: dict[str, Any] = {"lme": lme, "n_questions": overall.get("n")}
    key = "j_overall" if headline.get("source") == "judge" else "stored_j_overall"
    out[key] = lme["overall"]
    return out


def lme_vs_baseline(
    rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path
) -> str:
    """Each completed LongMemEval job against the baseline job, as ``mode=compare`` does.

    Pairs by ``question_id``; the overall accuracy's difference (job - baseline, points)
    with its paired bootstrap interval and exact McNemar p at ``mode=compare``'s defaults
    (:func:`locomo_exp.benchmarks.longmemeval.compare.compare_lme_runs`); each pair's
    ``compare.md`` is written to ``vs_baseline/<job>/``. The sweep chooses the baseline
    (``sweep.baseline``, :func:`locomo_exp.sweep.vs_baseline.plugin_vs_baseline`).

    Args:
        rows: the completed rows other than the baseline's (modified: ``vs_baseline`` =
            ``{"lme": {"n", "diff", "ci", "mcnemar_p"}}`` or ``{"error": ...}``, and
            ``vs_baseline_warnings``).
        base: the completed baseline job's row.
        sweep_dir: the sweep directory.

    Returns:
        The method, in words.
    """
    from locomo_exp.benchmarks.longmemeval.compare import compare_lme_runs
    from locomo_exp.benchmarks.longmemeval.compare_report import render_lme_compare
    from locomo_exp.compare.run_dirs import CompareError
    from locomo_exp.config import CompareConfig

    defaults = CompareConfig()
    for row in rows:
        labels = [f"job {row['job']}", f"job {base['job']}"]
        try:
            (pair,) = compare_lme_runs(
                [Path(row["output_dir"]), Path(base["output_dir"])],
                bootstrap_samples=defaults.bootstrap_samples, seed=defaults.seed, labels=labels,
            )
        except CompareError as error:
            row["vs_baseline"] = {"error": str(error)}
            continue
        overall = pair.rows[0]
        row["vs_baseline"] = {"lme": {"n": overall.n, "diff": overall.diff,
                                      "ci": list(overall.ci), "mcnemar_p": overall.mcnemar_p}}
        row["vs_baseline_warnings"] = list(pair.warnings)
        out = sweep_dir / "vs_baseline" / str(row["job"])
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "compare.md", render_lme_compare([pair.to_json()]))
        body = json.dumps({"benchmark": "longmemeval", "pairs": [pair.to_json()]}, indent=2)
        atomic_write_text(out / "compare.json", body + "\n")
    return (
        "as mode=compare of the two runs: questions paired by question_id, paired "
        f"percentile bootstrap ({defaults.bootstrap_samples} resamples, seed "
        f"{defaults.seed}), exact McNemar test"
    )


def _cell(value: Any, fmt: str = ".2f") -> str:
    return "—" if value is None else format(value, fmt)


def lme_table(
    summary: Mapping[str, Any],
    spending: Callable[[dict[str, Any]], tuple[str, list[str], str]],
) -> list[str]:
    """The lines of a LongMemEval sweep's table (after the summary's opening lines).

    Args:
        summary: the sweep summary (``rows``, ``swept_keys``, ``baseline``).
        spending: a row's status, token and cost cells (as a LoCoMo sweep shows them).

    Returns:
        A legend line, the vs-baseline line when compared, then the table: per job its
        verdicts, overall accuracy with its 95% Wilson interval, task-averaged and
        abstention accuracy (percent), the overall difference from the baseline job with
        its interval and McNemar p, judge counts, tokens, cost and wall time.
    """
    rows, keys = summary["rows"], summary["swept_keys"]
    base = summary.get("baseline") or {}
    lines = [
        "- LongMemEval accuracies in percent (overall with its 95% Wilson interval, "
        "task-averaged, abstention), of the verdicts each job's headline names",
    ]
    compared = base.get("label") is not None
    if base.get("error"):
        lines.append(f"- vs baseline: not compared ({base['error']})")
    elif compared:
        lines.append(f"- vs baseline: overall accuracy of each job minus job {base['job']} "
                     f"({base['label']}), points; {base['method']}")
    header = ["job", *keys, "status", "verdicts", "overall", "overall 95% CI", "task avg",
              "abstention", *(["Δ overall vs base", "Δ 95% CI", "McNemar p"] if compared else []),
              "parse failures", "API errors", "input tokens", "output tokens", "cost $", "wall s"]
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lme = r.get("lme") or {}
        ci = lme.get("overall_ci")
        vs: list[str] = []
        if compared:
            found = (r.get("vs_baseline") or {}).get("lme")
            if r["job"] == base.get("job"):
                vs = ["baseline", "", ""]
            elif found:
                vs = [f"{found['diff']:+.2f}", f"[{found['ci'][0]:+.2f}, {found['ci'][1]:+.2f}]",
                      _cell(found["mcnemar_p"], ".4f")]
            else:
                vs = ["—", "—", "—"]
        status, tokens, cost = spending(r)
        cells = [str(r["job"]), *(str(r["swept"].get(k, "—")).replace("|", "\\|") for k in keys),
                 status, str(lme.get("verdicts") or "—").replace("|", "\\|"),
                 _cell(lme.get("overall")), f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "—",
                 _cell(lme.get("task_avg")), _cell(lme.get("abstention")), *vs,
                 _cell(r.get("parse_failures"), "d"), _cell(r.get("api_errors"), "d"), *tokens,
                 cost, _cell(r.get("wall_time_s"), ".1f")]
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


__all__ = ["is_lme_summary", "lme_row_fields", "lme_table", "lme_vs_baseline"]
