"""A LoCoMo-Plus sweep's rows, their difference from the baseline job, the summary table.

A LoCoMo-Plus job's ``summary.json`` has no F1 and no LoCoMo J: its figures are the headline
reading's (``judge.parser``: ``ours`` or ``authors``) overall, Cognitive, both factual
averages and the gap (0-1 in ``summary.json``, percent here), of the verdicts it names (the
stored run's own judge, or this project's judge with ``scorer=judge``). Each job is compared
with the baseline job as ``mode=compare`` of the two runs does it (:mod:`.compare`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.locomo_plus.compare import (
    GROUPS,
    compare_markdown,
    compare_runs,
    read_run,
    render_lines,
)
from locomo_exp.benchmarks.locomo_plus.facts import NAME
from locomo_exp.benchmarks.plugin import Spending
from locomo_exp.benchmarks.plugin_trust import TRUST_HEADER, TRUST_LEGEND, trust_sweep_cells
from locomo_exp.report.run_dir import atomic_write_text

PERCENT = 100.0

FIGURES = ("overall", "cognitive", "factual_unweighted", "factual_item_weighted",
           "gap_unweighted")
"""The headline reading's figures a row keeps (percent)."""


def _pct(value: Any) -> float | None:
    return round(float(value) * PERCENT, 2) if isinstance(value, (int, float)) else None


def _interval(pair: Any) -> list[float | None] | None:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or None in pair:
        return None
    return [_pct(pair[0]), _pct(pair[1])]


def is_plus_summary(summary: Mapping[str, Any] | None) -> bool:
    """Whether a job's ``summary.json`` is a LoCoMo-Plus run's."""
    return bool(summary) and (summary or {}).get("benchmark") == NAME


def plus_row_fields(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A LoCoMo-Plus job's cells of the sweep summary row.

    Args:
        summary: the job's ``summary.json`` (:mod:`.summary`).

    Returns:
        ``plus``: ``{"verdicts", "reading", "items", "scored", "overall", "overall_ci",
        "cognitive", "cognitive_ci", "factual_unweighted", "factual_item_weighted",
        "gap_unweighted", "gap_item_weighted"}`` of the headline reading (percent, 2
        decimals, as the job's MLflow metrics; ``None`` when not measured: no LoCoMo item,
        a dry run), with ``f1_variant``, ``f1_factual_item_weighted`` and
        ``f1_factual_unweighted`` (``scorer=both``: the factual items' token F1, percent;
        ``None`` without F1); ``n_questions`` (items); ``j_overall`` (this project's judge) or
        ``stored_j_overall`` (the run's stored verdicts), percent. The headlines and the
        judge's counts, tokens and cost are the run log's (:mod:`locomo_exp.sweep.log_rows`).
    """
    reading = str(summary.get("headline") or "ours")
    head = (summary.get("readings") or {}).get(reading) or {}
    factual, gap = head.get("factual") or {}, head.get("gap") or {}
    verdicts = summary.get("verdicts") or {}
    plus = {
        "verdicts": verdicts.get("label"),
        "reading": reading,
        "items": head.get("n_items"),
        "scored": head.get("n_scored"),
        "overall": _pct(head.get("overall")),
        "overall_ci": _interval(head.get("overall_ci")),
        "cognitive": _pct(head.get("cognitive")),
        "cognitive_ci": _interval(head.get("cognitive_ci")),
        "factual_unweighted": _pct(factual.get("unweighted")),
        "factual_item_weighted": _pct(factual.get("item_weighted")),
        "gap_unweighted": _pct(gap.get("unweighted")),
        "gap_item_weighted": _pct(gap.get("item_weighted")),
    }
    f1 = summary.get("f1") or {}  # scorer=both: the factual items' token F1
    plus["f1_variant"] = f1.get("variant")
    plus["f1_factual_item_weighted"] = _pct((f1.get("factual") or {}).get("item_weighted"))
    plus["f1_factual_unweighted"] = _pct((f1.get("factual") or {}).get("unweighted"))
    out: dict[str, Any] = {"plus": plus, "n_questions": head.get("n_items")}
    judged = verdicts.get("source") in ("judged", "dry run")
    out["j_overall" if judged else "stored_j_overall"] = plus["overall"]
    return out


def plus_vs_baseline(rows: list[dict[str, Any]], base: dict[str, Any], sweep_dir: Path) -> str:
    """Each completed LoCoMo-Plus job against the baseline job, as ``mode=compare`` does.

    Items paired by ``item_id``, each run's headline reading; the Cognitive group and the
    factual one (the five LoCoMo categories), each with the paired difference (job -
    baseline, points), its 95% cluster-bootstrap interval (by conversation) and the paired
    sign-flip test's p, Holm-adjusted over the two groups, at ``mode=compare``'s defaults
    (:func:`locomo_exp.benchmarks.locomo_plus.compare.compare_runs`). Each pair's
    ``compare.json`` and ``compare.md`` are written to ``vs_baseline/<job>/``.

    Args:
        rows: the completed rows other than the baseline's (modified: ``vs_baseline`` =
            ``{"plus": {group: {"n", "unpaired", "diff", "ci", "pvalue", "pvalue_holm"}}}``
            (points; ``None`` figures for a group with no pair) or ``{"error": ...}``).
        base: the completed baseline job's row.
        sweep_dir: the sweep directory.

    Returns:
        The method, in words.
    """
    from locomo_exp.config import CompareConfig

    defaults = CompareConfig()
    try:
        baseline = read_run(Path(base["output_dir"]))
    except (ValueError, OSError) as error:
        for row in rows:
            row["vs_baseline"] = {"error": f"job {base['job']}: {error}"}
        return "not compared"
    for row in rows:
        try:
            run = read_run(Path(row["output_dir"]))
        except (ValueError, OSError) as error:
            row["vs_baseline"] = {"error": str(error)}
            continue
        result = compare_runs(run, baseline, samples=defaults.bootstrap_samples,
                              permutations=defaults.permutation_samples, seed=defaults.seed)
        row["vs_baseline"] = {"plus": {
            name: {"n": g["n_pairs"], "unpaired": g["unpaired"],
                   "diff": _pct(g["difference"]), "ci": _interval(g["ci"]),
                   "pvalue": g["pvalue"], "pvalue_holm": g["pvalue_holm"]}
            for name, g in result["groups"].items()}}
        out = sweep_dir / "vs_baseline" / str(row["job"])
        out.mkdir(parents=True, exist_ok=True)
        lines = render_lines(result, (f"job {row['job']}", f"job {base['job']}"))
        atomic_write_text(out / "compare.json", json.dumps(result, indent=2) + "\n")
        atomic_write_text(out / "compare.md", compare_markdown(lines))
    return (
        "as mode=compare of the two runs: items paired by item_id (each run's headline "
        "reading), Cognitive and factual groups apart; cluster bootstrap by conversation "
        f"({defaults.bootstrap_samples} resamples, seed {defaults.seed}), paired sign-flip "
        "test, Holm-adjusted over the two groups"
    )


def _cell(value: Any, fmt: str = ".2f") -> str:
    return "—" if value is None else format(value, fmt)


def _f1_cell(plus: Mapping[str, Any]) -> str:
    """The F1 column: item-weighted factual F1 (percent) and its variant, or not measured."""
    value = plus.get("f1_factual_item_weighted")
    if value is None:
        return "not measured"
    return f"{value:.2f} ({plus.get('f1_variant')})"


def _vs_cells(row: Mapping[str, Any], base_job: Any) -> list[str]:
    """The Δ, interval and Holm p cells of each group (``baseline`` on the baseline's row)."""
    if row["job"] == base_job:
        return ["baseline", "", ""] * len(GROUPS)
    found = (row.get("vs_baseline") or {}).get("plus") or {}
    cells: list[str] = []
    for name in GROUPS:
        group = found.get(name) or {}
        ci = group.get("ci")
        cells += [_cell(group.get("diff"), "+.2f"),
                  f"[{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "—",
                  _cell(group.get("pvalue_holm"), ".4f")]
    return cells


def plus_table(summary: Mapping[str, Any], spending: Spending) -> list[str]:
    """The lines of a LoCoMo-Plus sweep's table (after the summary's opening lines).

    Args:
        summary: the sweep summary (``rows``, ``swept_keys``, ``baseline``).
        spending: a row's status, token and cost cells (as a LoCoMo sweep shows them).

    Returns:
        A legend line, the vs-baseline line when compared, then the table: per job its
        verdicts, reading, items, overall with its 95% interval, Cognitive, both factual
        averages and the gap (percent), the factual F1 (``scorer=both``), each group's
        difference from the baseline job with its interval and Holm-adjusted p, the trust
        columns (corrected accept rate with its interval, the audit's rates, or "not
        measured"), judge counts, tokens, cost and wall time.
    """
    rows, keys = summary["rows"], summary["swept_keys"]
    base = summary.get("baseline") or {}
    lines = [
        "- LoCoMo-Plus figures in percent, of each job's headline reading (judge.parser) "
        "of the verdicts it names: overall with its 95% interval, Cognitive, factual "
        "averages (unweighted: each LoCoMo category once; item-weighted) and the gap "
        "(factual unweighted minus Cognitive)",
        "- F1: the factual items' token F1 (scorer=both; item-weighted over the five LoCoMo "
        "categories, percent; variant in brackets), \"not measured\" for a job that scored "
        "no F1 (the Cognitive items have no gold answer)",
        TRUST_LEGEND,
    ]
    compared = base.get("label") is not None
    if base.get("error"):
        lines.append(f"- vs baseline: not compared ({base['error']})")
    elif compared:
        lines.append(f"- vs baseline: each group's mean of each job minus job {base['job']} "
                     f"({base['label']}), points; {base['method']}")
    vs_header = [cell for name in GROUPS for cell in
                 (f"Δ {name}", f"Δ {name} 95% CI", f"{name} Holm p")] if compared else []
    header = ["job", *keys, "status", "verdicts", "reading", "items", "overall",
              "overall 95% CI", "Cognitive", "factual", "factual item-weighted", "gap",
              "F1 factual", *vs_header, *TRUST_HEADER, "parse failures", "API errors",
              "input tokens", "output tokens", "cost $", "wall s"]
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        plus = r.get("plus") or {}
        ci = plus.get("overall_ci")
        status, tokens, cost = spending(r)
        cells = [str(r["job"]), *(str(r["swept"].get(k, "—")).replace("|", "\\|") for k in keys),
                 status, str(plus.get("verdicts") or "—").replace("|", "\\|"),
                 str(plus.get("reading") or "—"), _cell(plus.get("items"), "d"),
                 _cell(plus.get("overall")), f"{ci[0]:.2f}–{ci[1]:.2f}" if ci else "—",
                 _cell(plus.get("cognitive")), _cell(plus.get("factual_unweighted")),
                 _cell(plus.get("factual_item_weighted")), _cell(plus.get("gap_unweighted")),
                 _f1_cell(plus),
                 *(_vs_cells(r, base.get("job")) if compared else []),
                 *trust_sweep_cells(r), _cell(r.get("parse_failures"), "d"),
                 _cell(r.get("api_errors"), "d"), *tokens, cost, _cell(r.get("wall_time_s"), ".1f")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"- job {r['job']}: — vs baseline: the comparison was refused: "
              f"{r['vs_baseline']['error']}" for r in rows
              if (r.get("vs_baseline") or {}).get("error")]
    return lines


__all__ = ["is_plus_summary", "plus_row_fields", "plus_table", "plus_vs_baseline"]
