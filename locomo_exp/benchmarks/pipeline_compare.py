"""``mode=compare`` and sweep rows for a pipeline benchmark that has none of its own.

A benchmark whose hooks give :meth:`~locomo_exp.benchmarks.steps.JobSteps.paired_scores`
(each ``scores.jsonl`` row's key, group and score on 0-1) gets, from here, the comparison
of two of its runs (per group and overall: the paired mean difference in points, its
question-level bootstrap interval, the sign-flip p, Holm over the groups) and a sweep's
rows (its MLflow metrics as the row's figures and the parent's headlines), each job against
the baseline job, and the table. A plug-in may keep its own (in its package).

Formulas: the bootstrap is :func:`locomo_exp.stats.bootstrap.question_bootstrap_mean_diff`
(percentile interval, Efron & Tibshirani 1993 ch. 13), the test
:func:`locomo_exp.stats.paired.sign_flip_test`, the correction
:func:`locomo_exp.stats.paired.holm_adjust` (Holm 1979).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from locomo_exp.benchmarks.plugin import Spending
    from locomo_exp.benchmarks.steps import JobSteps
    from locomo_exp.config import CompareConfig

OVERALL = "overall"
"""The group of every paired question."""
COMPARE_FILES = ("compare.json", "compare.md")
"""What a comparison writes."""
PERCENT = 100.0


def read_scores(steps: JobSteps[Any, Any], run_dir: Path) -> dict[str, tuple[str, float | None]]:
    """A run's paired scores: key -> (group, score 0-1 or ``None`` unscored).

    Raises:
        ValueError: the run has no ``scores.jsonl`` (one line naming it).
    """
    path = run_dir / "scores.jsonl"
    if not path.is_file():
        raise ValueError(f"{run_dir}: no scores.jsonl; is it a finished {steps.title} run?")
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return steps.paired_scores(rows)


def _group(a: list[float], b: list[float], unpaired: int, cfg: CompareConfig
           ) -> dict[str, Any]:
    """One group's paired difference ``mean(b - a)`` in points, interval and p."""
    from locomo_exp.stats.bootstrap import question_bootstrap_mean_diff
    from locomo_exp.stats.paired import sign_flip_test

    if not a:
        return {"n": 0, "unpaired": unpaired, "diff": None, "ci": None, "pvalue": None}
    interval = question_bootstrap_mean_diff(b, a, n_resamples=cfg.bootstrap_samples,
                                            seed=cfg.seed)
    test = sign_flip_test(b, a, n_resamples=cfg.permutation_samples, seed=cfg.seed)
    return {"n": len(a), "unpaired": unpaired,
            "diff": round(interval.estimate * PERCENT, 2),
            "ci": [round(interval.low * PERCENT, 2), round(interval.high * PERCENT, 2)],
            "pvalue": test.pvalue}


def compare_scores(base: Mapping[str, tuple[str, float | None]],
                   other: Mapping[str, tuple[str, float | None]], cfg: CompareConfig
                   ) -> dict[str, dict[str, Any]]:
    """Each group's (and overall) paired difference of ``other`` minus ``base``.

    Args:
        base: the baseline run's paired scores (:func:`read_scores`).
        other: the compared run's.
        cfg: ``compare.*`` (resamples, permutations, seed).

    Returns:
        ``{group: {"n", "unpaired", "diff", "ci", "pvalue", "pvalue_holm"}}``: points
        (0-100) for ``diff`` and ``ci``; ``None`` where no pair exists (not measured).
    """
    from locomo_exp.stats.paired import holm_adjust

    groups = sorted({g for g, _ in base.values()} | {g for g, _ in other.values()})
    out: dict[str, dict[str, Any]] = {}
    for name in [OVERALL, *groups]:
        keys = {k for k, (g, _) in {**base, **other}.items() if name in (OVERALL, g)}
        pairs = [(x, y) for k in sorted(keys) if k in base and k in other
                 for x, y in [(base[k][1], other[k][1])] if x is not None and y is not None]
        out[name] = _group([x for x, _ in pairs], [y for _, y in pairs],
                           len(keys) - len(pairs), cfg)
    out[OVERALL]["pvalue_holm"] = out[OVERALL]["pvalue"]  # one test: nothing to adjust
    adjusted = holm_adjust([out[name]["pvalue"] for name in groups])  # over the groups
    for name, holm in zip(groups, adjusted, strict=True):
        out[name]["pvalue_holm"] = holm
    return out


def compare_lines(title: str, labels: tuple[str, str], groups: Mapping[str, Any]) -> list[str]:
    """The comparison in words and a table (markdown; also the console)."""
    lines = [f"# {title}: {labels[1]} minus {labels[0]}", "",
             "Paired by question; difference in points (0-100), 95% question-level bootstrap "
             "interval, sign-flip p, Holm over the groups.", "",
             "| group | n | unpaired | diff | 95% CI | p | Holm p |",
             "|---|---|---|---|---|---|---|"]
    for name, g in groups.items():
        ci = f"[{g['ci'][0]:+.2f}, {g['ci'][1]:+.2f}]" if g["ci"] else "not measured"
        diff = f"{g['diff']:+.2f}" if g["diff"] is not None else "not measured"
        p = f"{g['pvalue']:.4f}" if g["pvalue"] is not None else "—"
        holm = f"{g['pvalue_holm']:.4f}" if g.get("pvalue_holm") is not None else "—"
        lines.append(f"| {name} | {g['n']} | {g['unpaired']} | {diff} | {ci} | {p} | {holm} |")
    return lines


def write_comparison(steps: JobSteps[Any, Any], runs: tuple[Path, Path], out_dir: Path,
                     cfg: CompareConfig, *, overwrite: bool
                     ) -> tuple[list[str], dict[str, Any]]:
    """Compare two runs and write ``compare.json`` and ``compare.md`` into ``out_dir``.

    An earlier comparison there is replaced only once both files are written.

    Returns:
        The lines of ``compare.md`` (the console prints them), and the object written to
        ``compare.json`` (``benchmark``, ``runs``, ``groups``: :func:`compare_scores`).

    Raises:
        ValueError: a run without ``scores.jsonl``.
        OSError: a file cannot be written.
    """
    from locomo_exp.report.run_dir import atomic_write_text
    from locomo_exp.report.run_swap import replacing_run

    groups = compare_scores(read_scores(steps, runs[0]), read_scores(steps, runs[1]), cfg)
    lines = compare_lines(steps.title, (runs[0].name, runs[1].name), groups)
    body = {"benchmark": steps.name, "runs": [str(r) for r in runs], "groups": groups}
    out_dir.mkdir(parents=True, exist_ok=True)
    active = overwrite and any((out_dir / name).exists() for name in COMPARE_FILES)
    with replacing_run(out_dir, active, files=COMPARE_FILES, noun="comparison") as swap:
        atomic_write_text(swap.write_dir / "compare.json",
                          json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        atomic_write_text(swap.write_dir / "compare.md", "\n".join(lines) + "\n")
        swap.commit()
    return lines, body


def sweep_row(steps: JobSteps[Any, Any], summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """A job's sweep cells: its MLflow metrics as figures and headlines, its judge's spend.

    Returns:
        ``None`` when ``summary`` is not this benchmark's run.
    """
    if summary.get("benchmark") != steps.name:
        return None
    figures = steps.run_metrics(dict(summary))
    judge = summary.get("judge") or {}
    counts, tokens = judge.get("counts") or {}, judge.get("tokens") or {}
    return {"pipeline": {"benchmark": steps.name, "figures": figures},
            "headlines": figures, "n_questions": summary.get("n_questions"),
            "parse_failures": counts.get("parse_failure"), "api_errors": counts.get("api_error"),
            "input_tokens": tokens.get("input"), "output_tokens": tokens.get("output"),
            "estimated_cost_usd": judge.get("estimated_cost_usd")}


def owns_rows(steps: JobSteps[Any, Any], rows: list[dict[str, Any]]) -> bool:
    """Whether any sweep row is a job of this benchmark."""
    return any((row.get("pipeline") or {}).get("benchmark") == steps.name for row in rows)


def vs_baseline(steps: JobSteps[Any, Any], rows: list[dict[str, Any]], base: dict[str, Any],
                sweep_dir: Path, cfg: CompareConfig) -> str:
    """Each completed row against the baseline row, as ``mode=compare`` pairs them.

    Each pair's files go to ``<sweep_dir>/vs_baseline/<job>/``; a row gets
    ``vs_baseline = {"pipeline": groups}`` (or ``{"error": ...}``).

    Returns:
        The method, in words.
    """
    for row in rows:
        try:
            _, body = write_comparison(steps, (Path(base["output_dir"]), Path(row["output_dir"])),
                                       sweep_dir / "vs_baseline" / str(row["job"]), cfg,
                                       overwrite=True)
            row["vs_baseline"] = {"pipeline": body["groups"]}
        except (ValueError, OSError) as error:
            row["vs_baseline"] = {"error": str(error)}
    return "paired by question as mode=compare: diff in points, 95% bootstrap interval, sign-flip p"


def table(summary: Mapping[str, Any], spending: Spending) -> list[str]:
    """A sweep's table: per job its figures (its MLflow metrics) and overall vs the baseline."""
    rows, keys = summary["rows"], summary["swept_keys"]
    names = sorted({n for r in rows for n in ((r.get("pipeline") or {}).get("figures") or {})})
    base = summary.get("baseline") or {}
    lines = ["- figures as each job's MLflow metrics (percent); Δ overall: points against the "
             f"baseline job {base.get('job', '—')}, paired by question"]
    header = ["job", *keys, "status", *names, "Δ overall", "Δ 95% CI", "input tokens",
              "output tokens", "cost $"]
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        figures = (r.get("pipeline") or {}).get("figures") or {}
        overall = ((r.get("vs_baseline") or {}).get("pipeline") or {}).get(OVERALL) or {}
        status, tokens, cost = spending(r)
        ci = overall.get("ci")
        cells = [str(r["job"]), *(str(r["swept"].get(k, "—")) for k in keys), status,
                 *(f"{figures[n]:.2f}" if n in figures else "—" for n in names),
                 f"{overall['diff']:+.2f}" if overall.get("diff") is not None else "—",
                 f"[{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "—", *tokens, cost]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


__all__ = [
    "COMPARE_FILES",
    "compare_lines",
    "compare_scores",
    "owns_rows",
    "read_scores",
    "sweep_row",
    "table",
    "vs_baseline",
    "write_comparison",
]
