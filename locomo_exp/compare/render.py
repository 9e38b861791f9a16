"""Outputs of a comparison: ``compare.md``, ``compare.json``, forest plots (PNG)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from locomo_exp.compare.engine import CompareRow, interval_method
from locomo_exp.compare.metrics import COMPARED_BY_NAME
from locomo_exp.compare.result import CompareResult, stored_field
from locomo_exp.results.checks_read import run_warnings, warning_head
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS

logger = logging.getLogger(__name__)

_GROUP_LABELS = {"overall_1_4": "overall 1-4", "overall": "overall"}


def group_label(group: str, names: dict[str, str] | None = None) -> str:
    """Display label of a group: ``"1 multi_hop"``, ``"overall 1-4"``..."""
    if group in _GROUP_LABELS:
        return _GROUP_LABELS[group]
    name = (names or {}).get(group)
    return f"{group} {name}" if name else group


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _ci(interval: list[float]) -> str:
    if any(bound != bound for bound in interval):  # NaN: not computable (one conversation)
        return "n/a"
    return f"[{interval[0]:+.2f}, {interval[1]:+.2f}]"


def row_label(row: CompareRow, names: dict[str, str] | None = None) -> str:
    """A row's group, with the categories it covers when a run lacks some of them.

    ``"overall 1-4 (covers 1, 2 only)"`` for runs judged on categories 1 and 2: the
    row's mean is not the runs' J over categories 1-4.
    """
    label = group_label(row.group, names)
    if row.categories:
        label += " (covers " + ", ".join(str(c) for c in row.categories) + " only)"
    return label


SAME_AS_1_4 = (
    "overall is not shown: no compared question is in category 5, so it is overall 1-4 "
    "(compare.json and MLflow keep both)"
)
"""The line under a table whose ``overall`` row was left out as a copy of ``overall 1-4``."""


def without_copies(rows: list[CompareRow]) -> list[CompareRow]:
    """The rows to show: an ``overall`` row that repeats its ``overall_1_4`` row is left out.

    Without category-5 questions both groups hold the same questions (``overall`` holds
    ``overall_1_4``'s and more, so the same ``n`` means the same questions) and the same
    numbers; two rows would suggest category 5 was compared.

    Args:
        rows: comparison rows (any pairs and metrics).

    Returns:
        ``rows`` in order, less those copies.
    """
    n_1_4 = {(r.run_a, r.run_b, r.metric): r.n for r in rows if r.group == "overall_1_4"}
    return [
        r for r in rows
        if r.group != "overall" or n_1_4.get((r.run_a, r.run_b, r.metric)) != r.n
    ]


def pair_table(rows: list[CompareRow], names: dict[str, str] | None = None) -> str:
    """Markdown table of one pair's rows (all metrics), values in points.

    Args:
        rows: rows of one pair.
        names: category display names keyed by ``"1"``..``"5"``.

    Returns:
        The table text; a marked row ends with its marks. An ``overall`` row that repeats
        ``overall 1-4`` is left out, with one line saying so (:func:`without_copies`).
    """
    shown = without_copies(rows)
    lines = [
        "| metric | group | n | conv | mean A | mean B | A - B | 95% CI (conversations) "
        "| 95% CI (questions) | test | p | p Holm | MDE | verdict |",
        "|---|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---|",
    ]
    for row in shown:
        verdict = row.verdict + (" (question-level)" if row.note else "")
        verdict += " ⚠ " + "; ".join(row.marks) if row.marks else ""
        lines.append(
            f"| {COMPARED_BY_NAME[row.metric].label} | {row_label(row, names)} | {row.n} "
            f"| {row.n_conversations} | {row.mean_a:.2f} | {row.mean_b:.2f} | {row.diff:+.2f} "
            f"| {_ci(row.cluster_ci)} | {_ci(row.question_ci)} | {row.test} | {_p(row.p)} "
            f"| {_p(row.p_holm)} | {_num(row.mde)} | {verdict} |"
        )
    notes = list(dict.fromkeys(row.note for row in shown if row.note))
    if len(shown) < len(rows):
        notes.append(SAME_AS_1_4)
    lines += [f"\n- {note}." for note in notes]
    return "\n".join(lines)


def _stored_field(run: Any) -> str:
    """The input field a run's stored verdicts came from (``llm_score``, ``grade``, ...)."""
    field = stored_field(run)
    return f"yes (`{field}`)" if field else "yes"


def render_markdown(result: CompareResult) -> str:
    """The ``compare.md`` text of a comparison."""
    names = result.category_names
    out = [
        "# Comparison",
        "",
        "| run | path | question set | F1 variant | judge | judge checks | stored J |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in result.runs:
        card = run.card
        judge = card.get("judge") or {}
        f1 = (card.get("f1") or {}).get("variant")
        judge_text = f"{judge.get('model')} ({judge.get('protocol')})" if judge else "-"
        heads = list(dict.fromkeys(warning_head(w) for w in run_warnings(run.summary)))
        checks = f"⚠ WARNING: {'; '.join(heads)}" if heads else ("no warning" if judge else "-")
        out.append(
            f"| {run.name} | {run.path} | {card.get('question_set')} | {f1 or '-'} | {judge_text} "
            f"| {checks} | {_stored_field(run) if 'stored_j' in run.values else 'no'} |"
        )
    warnings = result.warnings
    if warnings:  # the list the console prints, one line each
        out += ["", "## Warnings", "", *(f"- ⚠ {line}" for line in warnings)]
    settings = result.settings
    out += [
        "",
        "Differences are A - B in points (0-100). Intervals: 95% percentile bootstrap, resampling "
        "conversations (clustered; read this one) and questions (treats questions as independent). "
        "Tests: exact McNemar for 0/100 verdicts, paired sign-flip permutation otherwise; p Holm: "
        "Holm-adjusted per metric over categories (and over pairs). MDE: smallest difference "
        "detectable with 80% power at alpha 0.05, (z_0.975 + z_0.8) x sd(diff) / sqrt(n). "
        "Verdict: A or B higher "
        f"when p Holm < {result.alpha:g} and the headline interval excludes 0: the conversation "
        f"interval when the row has at least {MIN_RUN_CLUSTERS} conversations, else the "
        "question-level one (the row's verdict says so).",
    ]
    if "bootstrap_samples" in settings and "seed" in settings:
        out += ["", "Method: " + interval_method(settings["bootstrap_samples"], settings["seed"])]
    for pair in result.pairs:
        out += ["", f"## {pair.run_a} (A) vs {pair.run_b} (B)", ""]
        counts = pair.counts
        out.append(
            f"- Questions: {counts['shared']} shared, {counts['only_a']} only in A, "
            f"{counts['only_b']} only in B "
            f"(overlap {100 * counts['overlap']:.1f}%, matched by {counts['matched_by']})"
        )
        rows = [r for r in result.rows if r.run_a == pair.run_a and r.run_b == pair.run_b]
        out += ["", pair_table(rows, names) if rows else "No metric is carried by both runs."]
        if pair.forest_plot:
            out += ["", f"![forest plot]({pair.forest_plot})"]
    return "\n".join(out) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "run"


def forest_plot(
    rows: list[CompareRow], path: Path, title: str, names: dict[str, str] | None = None
) -> Path:
    """Forest plot of one pair: one panel per metric, one line per group.

    The thick bar is the conversation-cluster 95% interval, the thin bar the
    question-level one, the dot the difference (A - B, points).

    Args:
        rows: rows of one pair.
        path: PNG to write.
        title: figure title.
        names: category display names.

    Returns:
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(r.metric for r in rows))
    fig, axes = plt.subplots(
        1,
        len(metrics),
        figsize=(3.2 * len(metrics) + 1.5, 0.45 * max(4, len({r.group for r in rows})) + 2.3),
        squeeze=False,
    )
    for ax, metric in zip(axes[0], metrics, strict=True):
        mine = [r for r in rows if r.metric == metric]
        ys = list(range(len(mine)))[::-1]
        for y, row in zip(ys, mine, strict=True):
            color = (
                "tab:blue"
                if row.verdict == "A higher"
                else "tab:red"
                if row.verdict == "B higher"
                else "grey"
            )
            ax.plot(row.question_ci, [y, y], color=color, linewidth=1)
            ax.plot(row.cluster_ci, [y, y], color=color, linewidth=4, alpha=0.6)
            ax.plot([row.diff], [y], "o", color=color)
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels([row_label(r, names) for r in mine])
        ax.set_title(COMPARED_BY_NAME[metric].label)
        ax.set_xlabel("A - B (points)")
    from matplotlib.lines import Line2D

    legend = [
        Line2D([], [], color="grey", linewidth=4, alpha=0.6, label="95% CI, conversations"),
        Line2D([], [], color="grey", linewidth=1, label="95% CI, questions"),
        Line2D([], [], color="grey", marker="o", linestyle="", label="A - B"),
        Line2D([], [], color="tab:blue", linewidth=4, label="A higher"),
        Line2D([], [], color="tab:red", linewidth=4, label="B higher"),
        Line2D([], [], color="grey", linewidth=4, label="not distinguishable"),
    ]
    fig.legend(handles=legend, loc="lower center", ncol=3, fontsize="small", frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_outputs(result: CompareResult, output_dir: Path, plots: bool = True) -> dict[str, Path]:
    """Write ``compare.json``, ``compare.md`` and one forest plot per pair.

    Args:
        result: the comparison (its pairs get their ``forest_plot`` file names).
        output_dir: directory to write to (created).
        plots: whether to draw the forest plots.

    Returns:
        ``{"json": ..., "markdown": ..., "forest_<k>": ...}`` paths.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    if plots:
        for k, pair in enumerate(result.pairs):
            rows = [r for r in result.rows if r.run_a == pair.run_a and r.run_b == pair.run_b]
            if not rows:
                continue
            name = (
                "compare_forest.png"
                if len(result.pairs) == 1
                else f"compare_forest_{k + 1}_{_slug(pair.run_b)}.png"
            )
            forest_plot(
                rows,
                output_dir / name,
                f"{pair.run_a} (A) vs {pair.run_b} (B)",
                result.category_names,
            )
            pair.forest_plot = name
            paths[f"forest_{k + 1}"] = output_dir / name
    json_path = output_dir / "compare.json"
    json_path.write_text(
        json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    md_path = output_dir / "compare.md"
    md_path.write_text(render_markdown(result), encoding="utf-8")
    paths["json"], paths["markdown"] = json_path, md_path
    logger.info("comparison written to %s", md_path)
    return paths
