"""A BEAM run's ``report.md`` and console text: pure functions of ``summary.json``.

Figures print at mem0's precision (pass rate in percent with 1 decimal, averages with 3),
with Python's formatting as mem0 prints them, so they compare with published figures digit
for digit. Every table names its profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from locomo_exp.benchmarks.beam import profiles as p
from locomo_exp.benchmarks.beam.abilities import ABILITIES, TITLE, ability_title
from locomo_exp.benchmarks.beam.baselines import BEAM_BASELINES, BeamBaseline
from locomo_exp.benchmarks.beam.trust import category_names
from locomo_exp.benchmarks.plugin_trust import trust_report_sections
from locomo_exp.report.provenance import provenance_lines
from locomo_exp.results.words import counted

PROFILE_TITLES = {
    p.NUGGET: "mem0 memory-benchmarks: items 0/0.5/1, question score = item mean rounded to 4 "
              "decimals, PASS at 0.5",
    p.OFFICIAL: "the BEAM authors' compute_metrics.py: int() of each item verdict (0.5 counts "
                "0), ability = mean over chats of per-chat means, no overall figure",
}
"""One line per profile: what it does."""


def _avg(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _ci(ci: list[float] | None, pct: bool = False) -> str:
    if not ci:
        return "[not measured]"
    if pct:
        return f"[{ci[0]:.1f}, {ci[1]:.1f}]"
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def nugget_table(fig: Mapping[str, Any]) -> list[str]:
    """beam-nugget's markdown table: each ability, then overall."""
    lines = [
        "| ability | questions | average score [95% CI] | passes | pass rate [95% CI] |",
        "|---|---:|---|---:|---|",
    ]
    blocks = [(ability_title(a), fig["abilities"][a]) for a in ABILITIES if a in fig["abilities"]]
    blocks.append(("**overall**", fig["overall"]))
    for label, b in blocks:
        lines.append(
            f"| {label} | {b['n']} | {_avg(b['avg_score'])} {_ci(b['avg_score_ci'])} | "
            f"{b['passes']}/{b['n']} | {_pct(b['pass_rate'])} {_ci(b['pass_rate_ci'], True)} |"
        )
    return lines


def official_table(fig: Mapping[str, Any]) -> list[str]:
    """beam-official's markdown table: each ability, then the labelled mean."""
    lines = ["| ability | chats | score [95% CI] |", "|---|---:|---|"]
    for ability in ABILITIES:
        b = fig["abilities"].get(ability)
        if b is None:
            continue
        cell = (f"{_avg(b['score'])} {_ci(b['ci'])}" if b["score"] is not None
                else b["reason"] or "not measured")
        lines.append(f"| {ability_title(ability)} | {b['chats']} | {cell} |")
    ten = fig["mean_of_abilities"]
    lines.append(f"| *{fig['mean_label']}* | | "
                 + (_avg(ten) if ten is not None else
                    f"not measured ({fig['measured']} of 10 abilities measured; mean of those: "
                    f"{_avg(fig['mean_of_measured'])})")
                 + " |")
    return lines


def _baseline_lines(summary: Mapping[str, Any], b: BeamBaseline, entry: Mapping[str, Any]
                    ) -> list[str]:
    lines = [f"**{b.name}** ({b.profile}, judge {b.judge}; {b.source})", ""]
    for profile, why in entry["not_comparable"].items():
        lines.append(
            f"- this run's {profile} figures: "
            + (f"NOT COMPARABLE ({why})" if why else "comparable (same profile and judge)"))
    fig = summary["figures"].get(b.profile)
    if fig is None:
        return lines
    lines += ["", f"| ability | published | this run ({b.profile}) |", "|---|---|---|"]
    for ability, (avg, passes, n) in b.abilities.items():
        mine = fig["abilities"].get(ability)
        here = f"{_avg(mine['avg_score'])}, {mine['passes']}/{mine['n']}" if mine else "n/a"
        lines.append(f"| {ability_title(ability)} | {avg:.3f}, {passes}/{n} | {here} |")
    o = fig["overall"]
    lines.append(
        f"| **overall** | {b.pass_rate:.1f}% ({b.passes}/{b.n}), {b.avg_score:.3f} | "
        f"{_pct(o['pass_rate'])} ({o['passes']}/{o['n']}), {_avg(o['avg_score'])} |")
    return lines


def _heading(summary: Mapping[str, Any]) -> str:
    inp = summary["input"]
    setting = f", cutoff {inp['setting']}" if inp["setting"] else ""
    verdicts = summary["verdicts"]
    judged = summary.get("judge")
    if verdicts["source"] == "stored":
        judge = (f"item verdicts stored by the run (judge {verdicts['judge_model'] or 'not named'}"
                 "); no judge called")
    elif judged:
        judge = judge_words(judged)
    else:
        judge = "no item verdicts"
    items = counted(inp["rubric_items"], "rubric item")
    return (f"{TITLE}: {counted(inp['questions'], 'question')} in "
            f"{counted(inp['chats'], 'chat')}, {items} ({inp['layout']} layout{setting}); "
            f"{judge}")


def judge_words(judged: Mapping[str, Any]) -> str:
    """What a judged run's judge did, in one clause: profile, model, calls, cache, cost."""
    strict = " strict" if judged.get("strict") else ""
    where = f"judged under the {judged['profile']}{strict} prompt by {judged.get('model')}"
    estimate = judged.get("dry_run_estimate")
    if estimate is not None:
        cost = estimate.get("estimated_cost_usd")
        audit = estimate.get("audit_calls_to_make")
        if audit:
            cost = estimate.get("total_estimated_cost_usd")
        return (f"{where}: DRY RUN, {estimate['calls_total']} calls would be made "
                f"({estimate['rubric_items']} rubric items, {estimate['alignment_calls']} "
                f"alignment calls; {estimate['calls_cached']} cached)"
                + (f" + {audit} audit control calls" if audit else "")
                + ", estimated cost " + ("unknown" if cost is None else f"{cost:.4f} USD"))
    counts = judged.get("counts") or {}
    align = (judged.get("alignment") or {}).get("counts") or {}
    made = counts.get("calls_made", 0) + align.get("calls_made", 0)
    hits = counts.get("cache_hits", 0) + align.get("cache_hits", 0)
    cost = judged.get("estimated_cost_usd")
    return (f"{where}: {counts.get('runs_total', 0)} rubric items"
            + (f" + {align.get('runs_total', 0)} alignment calls" if align else "")
            + f"; {made} calls made, {hits} cache hits"
            + ("" if cost is None else f", cost {cost:.4f} USD"))


def _rate(r: Mapping[str, Any]) -> str:
    if r["rate"] is None:
        return "not measured (no verdict)"
    return (f"{100 * r['rate']:.1f}% [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}] "
            f"({r['count']}/{r['n']})")


def audit_lines(audit: Mapping[str, Any] | None, *, markdown: bool) -> list[str]:
    """The judge audit of a judged run: error rates per control kind and pooled.

    Args:
        audit: the ``judge.audit`` block of ``summary.json`` (:func:`.audit.audit_section`),
            or ``None`` (no audit: nothing printed).
        markdown: ``report.md``'s section (a table) rather than the console's lines.
    """
    if not audit:
        return []
    if not audit["kinds"]:
        return [f"Judge audit: no control judged: {audit['sizing']}; judge.audit.max_share="
                "null (or a larger share) judges the controls."]
    pooled = (f"false-accept rate {_rate(audit['false_accept'])}, false-reject rate "
              f"{_rate(audit['false_reject'])}")
    gate = audit["gate"]
    gate_words = f"; gate {gate['state']}" + (f": {gate['message']}" if gate["message"] else "")
    if not markdown:
        return [f"Judge audit ({sum(k['n'] for k in audit['kinds'].values())} rubric-item "
                f"controls, 95% Wilson intervals): {pooled}{gate_words}"]
    lines = [
        "## Judge audit (controls with a known verdict)", "",
        "Controls are rubric items of this run's questions judged against a response whose "
        "verdict is known (the item's own content: it must score 1; another ability's rubric "
        "item, or a non-answer: it must score 0), by the run's judge and prompt, one call per "
        f"item. They are never counted in the figures. Rule: {audit['rule']}. Rates with 95% "
        f"Wilson intervals. Audit size: {audit['sizing']}.", "",
        "| control | must score | n | unscored | error rate [95% CI] |",
        "|---|---:|---:|---:|---|",
    ]
    for kind, row in audit["kinds"].items():
        lines.append(f"| {kind} | {row['expected']} | {row['n']} | {row['unscored']} | "
                     f"{'false reject' if row['expected'] else 'false accept'} {_rate(row)} |")
    return [*lines, "", f"Pooled: {pooled}{gate_words}.", ""]


def render_console(summary: Mapping[str, Any]) -> list[str]:
    """The figures as the command line prints them (the tables, baselines, warnings)."""
    lines = [_heading(summary), ""]
    figures = summary["figures"]
    if not figures:
        lines.append(f"Scores: {summary['status']['scoring']}")
    for profile, table in ((p.NUGGET, nugget_table), (p.OFFICIAL, official_table)):
        if profile in figures:
            lines += [f"Profile {profile} ({PROFILE_TITLES[profile]})", *table(figures[profile]),
                      ""]
    if figures:
        lines.append(f"Intervals: {summary['intervals']['method']}")
        for b, entry in zip(BEAM_BASELINES, summary["baselines"], strict=True):
            lines += ["", *_baseline_lines(summary, b, entry)]
    audit = audit_lines((summary.get("judge") or {}).get("audit"), markdown=False)
    if audit:
        lines += ["", *audit]
    if summary["warnings"]:
        lines += ["", *[f"WARNING: {w}" for w in summary["warnings"]]]
    return lines


def render_report(summary: Mapping[str, Any], card: Mapping[str, Any]) -> str:
    """``report.md`` of a BEAM run.

    Args:
        summary: the run's ``summary.json``.
        card: the run's ``card.json``.

    Returns:
        Markdown: the heading line, each profile's table with its definition, the published
        baselines with their comparability, the judge audit, the labels' agreement and
        corrected accept rate and the panel (LoCoMo's sections, per rubric item), the
        warnings, then "How this was measured".
    """
    inp = summary["input"]
    lines = [f"# {TITLE} run: {inp['path'].rsplit('/', 1)[-1]}", "", _heading(summary), ""]
    figures = summary["figures"]
    if not figures:
        lines += [f"Scores: {summary['status']['scoring']}", ""]
    for profile, table in ((p.NUGGET, nugget_table), (p.OFFICIAL, official_table)):
        if profile in figures:
            lines += [f"## Profile {profile}", "", PROFILE_TITLES[profile] + ".", "",
                      *table(figures[profile]), ""]
    if figures:
        lines += [f"Intervals: {summary['intervals']['method']}.", "", "## Published baselines",
                  ""]
        for b, entry in zip(BEAM_BASELINES, summary["baselines"], strict=True):
            lines += [*_baseline_lines(summary, b, entry), ""]
    judge = summary.get("judge") or {}
    lines += audit_lines(judge.get("audit"), markdown=True)
    names = category_names(template=bool(judge.get("template")))
    for section in trust_report_sections(judge.get("trust"), names, unit="rubric item",
                                         headline="profile's score"):  # labels, panel
        lines += [section, ""]
    if summary["warnings"]:
        lines += ["## Warnings", "", *[f"- WARNING: {w}" for w in summary["warnings"]], ""]
    lines += [
        "## How this was measured", "",
        f"- Input: `{inp['path']}` (sha256 {inp['sha256'][:16]}…), layout {inp['layout']}",
        f"- Verdicts: {card['verdicts']}",
        "- Profiles: " + ", ".join(f"{n} v{v['version']}" for n, v in summary["profiles"].items()),
        *provenance_lines(card), "",
    ]
    return "\n".join(lines)


__all__ = ["PROFILE_TITLES", "audit_lines", "judge_words", "nugget_table", "official_table",
           "render_console", "render_report"]
