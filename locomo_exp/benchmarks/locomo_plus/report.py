"""LoCoMo-Plus's ``report.md`` and console lines, rendered from ``summary.json`` (pure)."""

from __future__ import annotations

from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import COGNITIVE, FACTUAL
from locomo_exp.benchmarks.locomo_plus.parsing import AUTHORS
from locomo_exp.benchmarks.locomo_plus.protocol import LOCOMO_PLUS
from locomo_exp.benchmarks.plugin_trust import trust_report_sections

NOT_MEASURED = "not measured"


def fig(value: float | None) -> str:
    """A 0-1 figure as ``0.9327 (93.3%)``; ``not measured`` for ``None``."""
    return NOT_MEASURED if value is None else f"{value:.4f} ({value * 100:.1f}%)"


def _ci(interval: list[float] | None) -> str:
    if not interval:
        return ""
    return f", 95% CI {interval[0] * 100:.1f}-{interval[1] * 100:.1f}% (by conversation)"


def _reading_title(summary: dict[str, Any], name: str) -> str:
    if name == AUTHORS:
        return "the authors' reading (judge.parser=authors: stored labels at face value)"
    return "our reading (judge.parser=ours: a failed call is not a verdict)"


def headline_lines(summary: dict[str, Any], name: str) -> list[str]:
    """The figures of one reading, one line each (console and report share them).

    Args:
        summary: the run's ``summary.json``.
        name: ``ours`` or ``authors``.

    Returns:
        Lines: status or overall, Cognitive with its relation types, the factual averages
        with their definitions, the gap.
    """
    f = summary["readings"][name]
    if f["status"] != "measured":
        return [f["status"]]
    lines = [f"Caveat: this {f['caveat']}"] if f.get("caveat") else []
    lines.append(f"Overall: {fig(f['overall'])} over {f['n_scored']:,} items"
                 f"{_ci(f['overall_ci'])}")
    if f["n_unscored"]:
        lines.append(f"  ({f['n_unscored']:,} of {f['n_items']:,} items unscored: "
                     + "; ".join(f"{n:,} {why}" for why, n in f["unscored_reasons"].items())
                     + ")")
    for cat in (*FACTUAL, COGNITIVE):
        group = f["by_category"].get(cat)
        if group:
            lines.append(f"  {cat}: {fig(group['mean'])} (n={group['n_scored']})")
    for rel, group in f["by_relation"].items():
        lines.append(f"    Cognitive/{rel}: {fig(group['mean'])} (n={group['n_scored']})")
    if f["cognitive"] is not None and f["cognitive_ci"]:
        lines.append(f"  Cognitive{_ci(f['cognitive_ci'])}")
    fact, gap = f["factual"], f["gap"]
    if fact["item_weighted"] is None:
        lines.append(f"Factual average: {NOT_MEASURED} (no LoCoMo items in the file)")
    else:
        for key in ("unweighted", "item_weighted"):
            lines.append(f"Factual average, {key.replace('_', '-')}: {fig(fact[key])} "
                         f"[{fact['definitions'][key]}]; gap (factual - Cognitive): "
                         f"{NOT_MEASURED if gap[key] is None else f'{gap[key]:+.4f}'}")
    return lines


def parser_lines(summary: dict[str, Any]) -> list[str]:
    """What ``judge.parser=authors`` derived from non-verdicts (empty for ours)."""
    p = summary["parser"]
    if p["name"] != AUTHORS:
        return []
    no_label = ("how many came from replies that held no label is not recorded in a stored "
                "file" if p["derived_from_no_label"] is None
                else f"{p['derived_from_no_label']:,} from replies that held no label")
    return [f"judge.parser=authors: {p['derived_from_api_errors']:,} verdicts derived from API "
            f"errors; {no_label}"]


def aggregate_lines(summary: dict[str, Any]) -> list[str]:
    """The authors' own aggregate, labelled as theirs and with what it rests on."""
    agg = summary.get("authors_aggregate")
    if not agg:
        return []
    line = f"The authors' aggregate: overall_avg {agg['overall_avg']} ({agg['source']})"
    if agg["resting_on_api_errors"]:
        line += (f", resting on {agg['resting_on_api_errors']:,} API errors of "
                 f"{agg['n']:,} stored verdicts (each scored 'correct' by their parser): "
                 "not a measurement")
    return [line]


def f1_rows(summary: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    """F1 beside J per category (``scorer=both``'s table); empty without an ``f1`` section.

    Args:
        summary: the run's ``summary.json``.

    Returns:
        ``(category, items, J of the headline reading, F1)`` per category of the run, then the
        factual averages (unweighted, item-weighted); figures as :func:`fig`, F1 ``no gold
        answer`` on the Cognitive row.
    """
    f1 = summary.get("f1")
    if not f1:
        return []
    head = summary["readings"][summary["headline"]]
    counts = summary["input"]["per_category"]
    out = []
    for cat in (*FACTUAL, COGNITIVE):
        if cat not in counts:
            continue
        group = head["by_category"].get(cat) or {}
        score = (f1["by_category"].get(cat) or {}).get("mean")
        out.append((cat, counts[cat], fig(group.get("mean")),
                    "no gold answer" if cat == COGNITIVE else fig(score)))
    n_factual = sum(n for cat, n in counts.items() if cat != COGNITIVE)
    if n_factual:
        for key in ("unweighted", "item_weighted"):
            out.append((f"factual, {key.replace('_', '-')}", n_factual,
                        fig(head["factual"][key]), fig(f1["factual"][key])))
    return out


def f1_lines(summary: dict[str, Any]) -> list[str]:
    """The console's F1-beside-J lines (``scorer=both``); empty without an ``f1`` section."""
    f1 = summary.get("f1")
    if not f1:
        return []
    lines = [f"F1 beside J ({f1['title']}, {f1['version']}; factual items only):"]
    lines += [f"  {cat}: J {j}, F1 {score} (n={n})" for cat, n, j, score in f1_rows(summary)]
    return lines + [f"  {f1['cognitive']}"]


def judge_lines(summary: dict[str, Any]) -> list[str]:
    """What the judge did (calls, cache, cost) or, for a dry run, would do; empty when stored."""
    judge = summary.get("judge")
    if not judge:
        return []
    estimate = judge.get("dry_run")
    if estimate is not None:
        line = (f"Dry run: {estimate['calls_total']:,} judge calls ({estimate['calls_cached']:,}"
                f" cached, {estimate['calls_to_make']:,} to make), estimated cost "
                f"${estimate['estimated_cost_usd']:.4f} (at most "
                f"${estimate['cost_upper_bound_usd']:.4f}); no call made")
        if "total_calls_to_make" in estimate:  # the audit's and the panel's calls too
            total = estimate.get("total_estimated_cost_usd")
            line += (f"; with {estimate.get('audit_calls_to_make', 0):,} audit control and "
                     f"{estimate.get('panel_calls_to_make', 0):,} panel calls: "
                     f"{estimate['total_calls_to_make']:,} to make, estimated "
                     + ("cost not known" if total is None else f"${total:.4f}"))
        return [line]
    counts = judge.get("counts", {})
    cost = judge.get("estimated_cost_usd")
    return [f"Judge: {counts.get('calls_made', 0):,} calls made, {counts.get('cache_hits', 0):,}"
            f" answered from the cache, {counts.get('api_error', 0):,} failed; cost "
            + ("not known" if cost is None else f"${cost:.4f}") + " (list price)"]


def render_console(summary: dict[str, Any]) -> list[str]:
    """The lines the command line prints for a run."""
    inp = summary["input"]
    head = summary["headline"]
    lines = [f"{summary['title']} · {inp['layout_title']} · {inp['rows']:,} items · "
             f"{summary['verdicts']['label']}",
             f"Figures, {_reading_title(summary, head)}:"]
    lines += [f"  {line}" for line in headline_lines(summary, head)]
    if head == AUTHORS and "ours" in summary["readings"]:
        lines += ["Our reading: " + headline_lines(summary, "ours")[0]]
    lines += f1_lines(summary)
    lines += parser_lines(summary) + aggregate_lines(summary) + judge_lines(summary)
    return lines


def render_report(summary: dict[str, Any], card: dict[str, Any]) -> str:
    """``report.md`` of a LoCoMo-Plus run.

    Args:
        summary: the run's ``summary.json``.
        card: its ``card.json`` (provenance).

    Returns:
        Markdown: the input, the verdicts' source, each reading's figures, the judge's
        trust checks when they ran, the authors' aggregate (labelled as theirs), the
        definitions, how it was measured.
    """
    inp = summary["input"]
    out = [f"# {summary['title']}: {inp['layout_title']}", ""]
    for warning in summary["warnings"]:
        out += [f"> **Warning:** {warning}.", ""]
    out += ["## Input", "",
            f"- File: `{inp['path']}` (sha256 `{inp['sha256'][:16]}`), {inp['rows']:,} items",
            "- Per category: " + ", ".join(f"{c} {n:,}" for c, n in inp["per_category"].items()),
            f"- Answering model: {', '.join(inp['answer_models']) or 'not recorded'}",
            f"- Verdicts: {summary['verdicts']['label']}"
            + ("" if summary.get("judge") else "; no judge was called"),
            *[f"- {line}" for line in judge_lines(summary)], ""]
    for name in summary["readings"]:
        marker = " (headline)" if name == summary["headline"] else ""
        out += [f"## Figures: {_reading_title(summary, name)}{marker}", ""]
        out += [f"- {line.strip()}" for line in headline_lines(summary, name)] + [""]
    f1 = summary.get("f1")
    if f1:
        out += [f"## F1 beside J (`scorer=both`, {f1['title']})", "",
                f"J is the {summary['headline']} reading's mean label score; F1 is "
                f"`f1_{f1['variant']}` ({f1['version']}; {f1['source']}), {f1['scale']}. "
                f"{f1['cognitive']}.", "",
                "| category | items | J | F1 |", "|---|---:|---:|---:|"]
        out += [f"| {cat} | {n:,} | {j} | {score} |" for cat, n, j, score in f1_rows(summary)]
        out += [""]
    trust = (summary.get("judge") or {}).get("trust")
    for section in trust_report_sections(trust, LOCOMO_PLUS.kind_ids, unit="item",
                                         headline="mean label score"):
        out += [section, ""]  # audit, labels, corrected accuracy, panel: LoCoMo's sections
    extra = parser_lines(summary) + aggregate_lines(summary)
    if extra:
        out += ["## The authors' scoring", ""] + [f"- {line}" for line in extra] + [""]
    out += ["## Definitions", "",
            "- Label map (the authors'): correct 1, partial 0.5, wrong 0; overall is the mean "
            "over items, rounded to 4 decimals.",
            "- Factual average, unweighted: " + summary["readings"]["ours"]["factual"][
                "definitions"]["unweighted"] + ".",
            "- Factual average, item-weighted: " + summary["readings"]["ours"]["factual"][
                "definitions"]["item_weighted"] + ".",
            "- Gap: factual average minus the Cognitive mean.",
            "- Intervals: 95% percentile cluster bootstrap over LoCoMo conversations, only "
            "where every item's conversation is recorded.", "",
            "## How this was measured", "",
            f"- locomo_exp {card.get('tool', {}).get('version') or 'unknown'}, "
            f"metric version {summary['versions']['metrics']}, {card.get('date')}",
            f"- Command: `{card.get('command_line')}`", ""]
    return "\n".join(out)
