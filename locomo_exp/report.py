"""Markdown report: a pure function from a run summary to text."""

from __future__ import annotations

from typing import Any, Optional

from locomo_exp.records import CATEGORY_IDS, FULL_BENCHMARK_QUESTIONS

_METRIC_TITLES = {
    "f1": "F1 (reported variant)",
    "f1_locomo": "F1, LoCoMo official",
    "f1_squad": "F1, SQuAD-style stemmed",
    "f1_mem0": "F1, Mem0 harness",
    "bleu1": "BLEU-1 (Mem0 harness)",
}


def fmt_pct(value: Optional[float], scale: float = 100.0, digits: int = 2) -> str:
    """Format a 0-1 score as a percentage (``0.5145 -> "51.45"``); ``None`` -> ``"n/a"``."""
    if value is None:
        return "n/a"
    return f"{value * scale:.{digits}f}"


def _category_label(key: str, names: dict[str, str]) -> str:
    if key.isdigit():
        return f"{key} {names.get(key, '?')}"
    return {"overall_1_4": "overall (1-4)", "overall": "overall (1-5)"}.get(key, key)


def render_lexical_table(summary: dict[str, Any]) -> str:
    """Per-category table of every lexical metric, as percentages (0-100).

    Args:
        summary: output of :func:`locomo_exp.summary.build_summary`.

    Returns:
        A markdown table; empty string when no lexical metric was computed.
    """
    metrics = summary["metrics"]
    if not metrics:
        return ""
    names = summary["category_names"]
    columns = [m for m in _METRIC_TITLES if m in metrics]
    header = "| category | n | " + " | ".join(_METRIC_TITLES[m] for m in columns) + " |"
    rule = "|---|---:|" + "---:|" * len(columns)
    rows = [header, rule]
    for key in [*(str(c) for c in CATEGORY_IDS), "overall_1_4", "overall"]:
        cells = [fmt_pct(metrics[m][key]["mean"]) for m in columns]
        label = _category_label(key, names)
        if not key.isdigit():
            label = f"**{label}**"
        rows.append(f"| {label} | {summary['counts'][key]} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def render_judge_section(judge: dict[str, Any], names: dict[str, str]) -> str:
    """J-score table (0-100) with across-run and within-question spreads and outcome counts."""
    lines = [
        "## LLM-as-a-Judge J",
        "",
        f"Judge: `{judge.get('model')}`, protocol `{judge.get('protocol')}` "
        f"(prompt `{judge.get('prompt_version')}`), temperature {judge.get('temperature')}, "
        f"{judge.get('runs')} run(s) per question, mode {judge.get('mode', 'realtime')}.",
        "",
    ]
    j = judge.get("j") or {}
    if j:
        lines += [
            "| category | n | J | ± across runs | pooled within-question std |",
            "|---|---:|---:|---:|---:|",
        ]
        for key, agg in j.items():

            def num(value: Any) -> str:
                return "n/a" if value is None else f"{value:.2f}"

            lines.append(
                f"| {_category_label(key, names)} | {agg.get('count', 0)} | {num(agg.get('mean'))} "
                f"| {num(agg.get('std_across_runs'))} | {num(agg.get('pooled_within_std'))} |"
            )
        lines.append("")
    counts = judge.get("counts") or {}
    if counts:
        lines.append(
            "Runs: "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
            + ". Parse failures and API errors are not averaged into J."
        )
    tokens = judge.get("tokens") or {}
    if tokens:
        cost = judge.get("estimated_cost_usd")
        cost_text = "n/a" if cost is None else f"${cost:.2f}"
        lines.append(
            f"Tokens: {tokens.get('input', 0)} in, {tokens.get('output', 0)} out; "
            f"estimated cost {cost_text}."
        )
    return "\n".join(lines)


def render_report(summary: dict[str, Any]) -> str:
    """Render ``report.md`` from a run summary.

    Args:
        summary: output of :func:`locomo_exp.summary.build_summary`.

    Returns:
        Markdown text. Scores are shown as percentages (0-100).
    """
    info = summary["input"]
    names = summary["category_names"]
    versions = summary["versions"]
    total = summary["counts"]["overall"]
    conversations = summary["conversations"]["overall"]
    lines = [
        "# LoCoMo evaluation report",
        "",
        f"- Input: `{info['path']}` (format `{info['format']}`"
        + (f", prediction key `{info['prediction_key']}`" if info.get("prediction_key") else "")
        + ")",
        f"- sha256: `{info['sha256']}`",
        f"- Questions: {total} from {conversations} conversation(s)",
    ]
    if info.get("n_skipped_records"):
        lines.append(
            f"- Skipped invalid records: {info['n_skipped_records']} (data.on_invalid=skip; "
            "listed at the end)"
        )
    if total < FULL_BENCHMARK_QUESTIONS["all"] and summary["counts"]["overall_1_4"] < FULL_BENCHMARK_QUESTIONS["1-4"]:
        lines.append(
            f"- **Subset: {total} questions from {conversations} conversation(s) — not comparable "
            "with full-benchmark baselines.**"
        )
    lines += ["", "Metric versions:", ""]
    lines += [f"- `{name}`: {version}" for name, version in versions.items()]
    lexical = render_lexical_table(summary)
    if lexical:
        lines += [
            "",
            "## Token F1 and BLEU-1 (percent)",
            "",
            "Overall is the mean over questions. Categories are LoCoMo ids; names are labels "
            "(published tables attach them differently).",
            "",
            lexical,
        ]
    if "judge" in summary:
        lines += ["", render_judge_section(summary["judge"], names)]
    latency = summary.get("latency") or {}
    if any(stats["count"] for stats in latency.values()):
        lines += [
            "",
            "## Latency and context tokens",
            "",
            "| field | n | p50 | p95 | mean |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, stats in latency.items():
            if stats["count"]:
                lines.append(
                    f"| {name} | {stats['count']} | {stats['p50']:.3f} | {stats['p95']:.3f} "
                    f"| {stats['mean']:.3f} |"
                )
            else:
                lines.append(f"| {name} | 0 | not in input | not in input | not in input |")
        lines += ["", "Percentiles: numpy `linear` method (the default)."]
    skipped = info.get("skipped") or []
    if skipped:
        lines += ["", "## Skipped records", ""] + [f"- {text}" for text in skipped]
    return "\n".join(lines) + "\n"
