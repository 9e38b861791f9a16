"""The LLM-as-a-Judge section: J per category (0-100), its spreads, outcomes, tokens, cost."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.report.format import MISSING, fmt_num
from locomo_exp.report.trust import render_trust_sections
from locomo_exp.results import JudgeSummary, RunSummary
from locomo_exp.results.template_note import template_note


def render_judge_section(summary: RunSummary) -> str:
    """J-score table (0-100) with across-run and within-question spreads and outcome counts.

    Args:
        summary: a run summary whose ``judge`` is set.

    Returns:
        Markdown; ``""`` when the judge did not run. A dry run says that no call was made
        and shows the estimate instead of tokens.
    """
    judge = summary.judge
    if judge is None:
        return ""
    lines = [
        "## LLM-as-a-Judge J",
        "",
        f"Judge: `{judge.model}`, protocol `{judge.protocol}` "
        f"(prompt `{judge.prompt_version}`), temperature {judge.temperature}, "
        f"{judge.runs} run(s) per question, mode {judge.mode}.",
        "",
    ]
    if judge.provider:
        answered = f"; answered by `{judge.model_snapshot}`" if judge.model_snapshot else ""
        lines[-1:-1] = [
            "",
            f"Judge API: `{judge.provider}`, {judge.endpoint_kind} endpoint "
            f"`{judge.endpoint}`{answered}.",
        ]
    note = template_note(judge.to_json())
    if note:
        lines[-1:-1] = ["", f"Judge prompt: {note}."]
    if judge.j:
        lines += [
            "| category | n | J | ± across runs | pooled within-question std |",
            "|---|---:|---:|---:|---:|",
        ]
        for key, group in judge.j.items():
            label = summary.category_label(key) if key != "overall" else judge.overall_label
            lines.append(
                f"| {label} | {group.count} | {fmt_num(group.mean)} "
                f"| {fmt_num(group.std_across_runs)} | {fmt_num(group.pooled_within_std)} |"
            )
        lines.append("")
    if judge.counts:
        lines.append(
            "Runs: "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in judge.counts.items())
            + (
                ". Parse failures (replies that could not be read) and API errors are not "
                "averaged into J"
                + (
                    ", except those scored by the template's on_unparsed ("
                    f"{judge.counts['unparsed_scored']}, counted in both parse failure and "
                    "unparsed scored)."
                    if judge.counts.get("unparsed_scored")
                    else "."
                )
            )
        )
    estimate = judge.dry_run_estimate
    if estimate:
        lines.append(
            "**Dry run: no judge call was made; J is empty.** Estimate: "
            + ", ".join(f"{k} {v}" for k, v in estimate.items())
            + "."
        )
    if judge.tokens.get("unknown_usage_calls") and not estimate:  # no usage in the replies
        lines.append(
            f"Tokens: unknown, cost: unknown ({judge.counts.get('calls_made', 0)} calls made; "
            f"{judge.tokens['unknown_usage_calls']} replies carried no token usage)"
        )
    elif judge.tokens and not estimate:
        lines.append(
            f"Tokens: {judge.tokens.get('input', 0)} in, {judge.tokens.get('output', 0)} out "
            "(this run)" + in_all_tokens(judge) + "; " + cost_line(judge)
        )
    # judge trust sections (audit right under J; labels, corrected J, panel when present)
    if judge.trust is not None:
        names = {int(k): v for k, v in summary.category_names.items() if k.isdigit()}
        for section in render_trust_sections(judge.trust, names):
            lines += ["", section]
    return "\n".join(lines)


def _usd(value: Any) -> str:
    return MISSING if value is None else f"${float(value):.4f}"


CUSTOM_PRICE_NOTE = (
    "list-price estimate of the calls made (custom endpoint judge.base_url: the model's list "
    "price may not apply)"
)
"""How a cost reads when the calls went to a custom endpoint (a proxy, a local server)."""


def paid_words(endpoint_kind: str | None) -> str:
    """What a cost figure is: calls actually paid, or a list-price estimate.

    Args:
        endpoint_kind: the judge's ``endpoint_kind`` (``default`` or ``custom``).

    Returns:
        Against a custom endpoint :data:`CUSTOM_PRICE_NOTE` (the list price of the model
        named, which nobody may have billed); else ``calls actually paid, at the model's
        list price``.
    """
    if endpoint_kind == "custom":
        return CUSTOM_PRICE_NOTE
    return "calls actually paid, at the model's list price"


def cost_line(judge: JudgeSummary) -> str:
    """The run's judge cost: calls actually paid, answers + audit + panel; cached calls free.

    Args:
        judge: the judge's part of the run summary (its ``trust`` gives the audit's and
            the panel's cost).

    Returns:
        ``"cost $0.0123 (answers $0.0100, audit $0.0023): calls actually paid, at the
        model's list price; cached calls are free."`` (:func:`paid_words`: a custom
        endpoint's cost is a list-price estimate); ``n/a`` where no price is known.
    """
    trust = judge.trust
    parts = [("answers", judge.estimated_cost_usd)]
    if trust is not None and trust.audit is not None:
        parts.append(("audit", trust.audit.estimated_cost_usd))
    if trust is not None and trust.panel is not None:
        parts.append(("panel", trust.panel.estimated_cost_usd))
    in_all = (
        trust.total_cost_including_cached_usd
        if trust is not None
        else judge.other.get("estimated_cost_usd_including_cached")
    )
    return cost_text(parts, judge.total_cost_usd, in_all, paid_words(judge.endpoint_kind))


def cost_text(
    parts: Sequence[tuple[str, float | None]],
    total: float | None,
    in_all: float | None,
    paid: str = "calls actually paid",
) -> str:
    """A judge cost in words: what this run paid, by part, and the same work in all.

    Args:
        parts: ``(name, USD)`` of each part's calls paid (``None``: no price known).
        total: USD paid by this run in all parts.
        in_all: USD of the same calls counting those answered from the judge cache, at the
            usage the cache stored with their replies (``None``: not known).
        paid: what the cost is (:func:`paid_words`: a custom endpoint's is a list-price
            estimate).

    Returns:
        ``"cost $0.0123 (answers $0.0100, audit $0.0023): calls actually paid; cached calls
        are free."``, and, when ``in_all`` differs from ``total``, ``" In all, with the calls
        answered from the cache (at the usage stored with their replies): $0.0246."``.
    """
    detail = ", ".join(f"{name} {_usd(value)}" for name, value in parts)
    line = f"cost {_usd(total)} ({detail}): {paid}; cached calls are free."
    if in_all is not None and total is not None and round(in_all, 6) != round(total, 6):
        line += (
            f" In all, with the calls answered from the cache (at the usage stored with "
            f"their replies): {_usd(in_all)}."
        )
    return line


def in_all_tokens(judge: JudgeSummary) -> str:
    """``"; in all, with 898 cached calls: 140000 in, 6000 out"``, or ``""`` without cached calls.

    The answers' tokens counting those answered from the judge cache at the usage the cache
    stored with their replies (``tokens.cached_input`` / ``cached_output``).
    """
    return in_all_tokens_text(judge.tokens, judge.counts or {})


def in_all_tokens_text(tokens: Mapping[str, Any], counts: Mapping[str, Any]) -> str:
    """:func:`in_all_tokens` of a judge summary's ``tokens`` and ``counts`` (any benchmark).

    Args:
        tokens: ``input``, ``output`` (this run's calls) and ``cached_input``,
            ``cached_output`` (the cached calls' stored usage), in tokens.
        counts: the judge's counts (``cache_hits``).

    Returns:
        ``"; in all, with 4 cached call(s): 3360 in, 192 out"``, or ``""`` without cached
        calls.
    """
    cached_in = int(tokens.get("cached_input", 0))
    cached_out = int(tokens.get("cached_output", 0))
    if not cached_in and not cached_out:
        return ""
    hits = int(counts.get("cache_hits", 0))
    return (
        f"; in all, with {hits} cached call(s): {tokens.get('input', 0) + cached_in} in, "
        f"{tokens.get('output', 0) + cached_out} out"
    )
