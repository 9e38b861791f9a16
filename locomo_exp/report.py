"""Markdown report: a pure function from a run summary to text."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from locomo_exp.baselines import label_for, values_by_category
from locomo_exp.config import BaselineMetric, BaselineSet
from locomo_exp.report_input import input_header_lines, render_stored_judge_detail
from locomo_exp.records import CATEGORY_GROUPS, CATEGORY_IDS, FULL_BENCHMARK_QUESTIONS

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
    for key in CATEGORY_GROUPS:
        cells = [fmt_pct(metrics[m][key]["mean"]) for m in columns]
        label = _category_label(key, names)
        if not key.isdigit():
            label = f"**{label}**"
        rows.append(f"| {label} | {summary['counts'][key]} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def judge_overall_label(judge: dict[str, Any]) -> str:
    """Label of the judge's pooled overall, naming the categories it covers."""
    categories = judge.get("categories")
    if not categories:
        return "overall"
    return "overall (" + ", ".join(str(c) for c in sorted(categories)) + ")"


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

            label = _category_label(key, names) if key != "overall" else judge_overall_label(judge)
            lines.append(
                f"| {label} | {agg.get('count', 0)} | {_num(agg.get('mean'))} "
                f"| {_num(agg.get('std_across_runs'))} | {_num(agg.get('pooled_within_std'))} |"
            )
        lines.append("")
    counts = judge.get("counts") or {}
    if counts:
        lines.append(
            "Runs: "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
            + ". Parse failures and API errors are not averaged into J."
        )
    estimate = judge.get("dry_run_estimate")
    if estimate:
        lines.append(
            "**Dry run: no judge call was made; J is empty.** Estimate: "
            + ", ".join(f"{k} {v}" for k, v in estimate.items())
            + "."
        )
    tokens = judge.get("tokens") or {}
    if tokens and not estimate:
        cost = judge.get("estimated_cost_usd")
        cost_text = "n/a" if cost is None else f"${cost:.2f}"
        lines.append(
            f"Tokens: {tokens.get('input', 0)} in, {tokens.get('output', 0)} out; "
            f"estimated cost {cost_text}."
        )
    return "\n".join(lines)


def _num(value: Optional[float], digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _our_category_keys(covers: str, summary: dict[str, Any]) -> tuple[str, str]:
    """Our overall key matching a baseline's coverage, and how to describe it."""
    present = [str(c) for c in CATEGORY_IDS if summary["counts"][str(c)]]
    ours = f"overall over the categories in the input ({', '.join(present)})"
    if covers == "1-4":
        return "overall_1_4", "overall over categories 1-4"
    if covers in ("1-5", "all"):
        return "overall", ours
    return "overall", f"{ours}; the source does not say which categories its overall covers"


def render_f1_comparison(summary: dict[str, Any], baseline: BaselineSet) -> str:
    """This run vs one F1 baseline set, our F1 computed the way that baseline computed it.

    Args:
        summary: run summary (lexical means 0-1; shown as percent).
        baseline: an F1 baseline set (percent).

    Returns:
        A markdown section.
    """
    variant = baseline.f1_variant.value if baseline.f1_variant else "locomo"
    metric = summary["metrics"].get(f"f1_{variant}")
    if metric is None:
        return ""
    names = summary["category_names"]
    categories = sorted(set(baseline.label_to_category.values()))
    overall_key, overall_text = _our_category_keys(baseline.overall_covers, summary)
    header = ["system"] + [
        f"{c} {names.get(str(c), '?')} (their label: {label_for(baseline, c)})" for c in categories
    ] + ["overall"]
    lines = [
        f"### vs {baseline.title}",
        "",
        f"Source: {baseline.source}. Their F1 variant: `{variant}`; ours below is computed with "
        f"the same variant (`f1_{variant}`), in percent. Our overall is the {overall_text}.",
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    ours = [_num(metric[str(c)]["mean"] * 100 if metric[str(c)]["mean"] is not None else None) for c in categories]
    our_overall = metric[overall_key]["mean"]
    lines.append(
        f"| **this run (f1_{variant})** | "
        + " | ".join(ours + [_num(our_overall * 100 if our_overall is not None else None)])
        + " |"
    )
    if baseline.overall_covers == "unstated" and metric["overall_1_4"]["count"] != metric["overall"]["count"]:
        # category 5's phrase rule scores refusals as 1, which lifts an all-category mean
        partial = metric["overall_1_4"]["mean"]
        lines.append(
            f"| this run (f1_{variant}), categories 1-4 only | "
            + " | ".join(["—"] * len(categories) + [_num(partial * 100 if partial is not None else None)])
            + " |"
        )
    for system in baseline.systems:
        by_id = values_by_category(baseline, system)
        cells = [_num(by_id.get(c)) for c in categories] + [_num(system.overall) if system.overall is not None else "—"]
        lines.append(f"| {system.name} | " + " | ".join(cells) + " |")
    lines += [f"\n{note}" for note in baseline.notes]
    return "\n".join(lines)


def render_j_comparison(summary: dict[str, Any], baseline: BaselineSet) -> str:
    """This run's J (± std across runs) vs a J baseline set, with both protocols named.

    Args:
        summary: run summary with a ``judge`` section (J 0-100).
        baseline: a J baseline set (percent CORRECT for binary protocols).

    Returns:
        A markdown section; empty when the judge did not run.
    """
    judge = summary.get("judge") or {}
    j = judge.get("j") or {}
    if not j:
        return ""
    names = summary["category_names"]
    categories = sorted(set(baseline.label_to_category.values()))
    overall_key = "overall"
    judged = sorted(judge.get("categories") or [])
    overall_text = f"mean over the questions of the judged categories {judged}"
    if baseline.overall_covers not in ("unstated", "-".join(str(c) for c in (judged[:1] + judged[-1:]))):
        overall_text += f" (the baseline's overall covers categories {baseline.overall_covers})"
    ours_protocol = judge.get("protocol")
    theirs_protocol = baseline.j_protocol.value if baseline.j_protocol else "unstated"
    same = ours_protocol == theirs_protocol
    lines = [
        f"### vs {baseline.title}",
        "",
        f"Source: {baseline.source}.",
        f"- this run: protocol `{ours_protocol}`, judge `{judge.get('model')}`, "
        f"{judge.get('runs')} run(s); ± is the std across runs of the run-level J.",
        f"- baseline: protocol `{theirs_protocol}`, judge `{baseline.judge_model or 'unstated'}`.",
    ]
    if not same or judge.get("model") != baseline.judge_model:
        lines.append(
            "- **Indicative only: the protocols or judge models differ, so the numbers measure "
            "different things.**"
        )
    header = ["system"] + [
        f"{c} {names.get(str(c), '?')} (their label: {label_for(baseline, c)})" for c in categories
    ] + ["overall"]
    lines += ["", "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]

    def ours(key: str) -> str:
        agg = j.get(key) or {}
        if agg.get("mean") is None:
            return "n/a"
        spread = agg.get("std_across_runs")
        return _num(agg["mean"]) + (f" ± {spread:.2f}" if spread is not None else "")

    lines.append(
        "| **this run** | " + " | ".join([ours(str(c)) for c in categories] + [ours(overall_key)]) + " |"
    )
    for system in baseline.systems:
        by_id = values_by_category(baseline, system)
        overall = _num(system.overall) + (f" ± {system.std:.2f}" if system.std is not None else "")
        lines.append(
            f"| {system.name} | "
            + " | ".join([_num(by_id.get(c)) if c in by_id else "—" for c in categories] + [overall])
            + " |"
        )
    lines.append(f"\nOur overall is the {overall_text}.")
    lines += [f"\n{note}" for note in baseline.notes]
    return "\n".join(lines)


_LATENCY_ROWS = (
    ("search latency p50 (s)", "search_latency_s", "p50", "search_latency_s_p50"),
    ("search latency p95 (s)", "search_latency_s", "p95", "search_latency_s_p95"),
    ("total latency p50 (s)", "total_latency_s", "p50", "total_latency_s_p50"),
    ("total latency p95 (s)", "total_latency_s", "p95", "total_latency_s_p95"),
    ("context tokens (mean)", "context_tokens", "mean", "context_tokens_mean"),
)


def render_latency_comparison(summary: dict[str, Any], baselines: Sequence[BaselineSet]) -> str:
    """Latency (seconds) and context tokens of this run vs latency baselines.

    Args:
        summary: run summary (``latency`` section).
        baselines: latency baseline sets.

    Returns:
        A markdown section ("not in input" where the input lacks a field).
    """
    latency = summary.get("latency") or {}
    systems = [(b, s) for b in baselines for s in b.systems]
    header = ["measure", "this run"] + [f"{s.name} ({b.source.split(',')[0]})" for b, s in systems]
    lines = [
        "## Latency and context tokens",
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    for title, field_name, stat, baseline_key in _LATENCY_ROWS:
        value = (latency.get(field_name) or {}).get(stat)
        ours = "not in input" if value is None else (f"{value:.0f}" if field_name == "context_tokens" else f"{value:.3f}")
        digits = 0 if field_name == "context_tokens" else 3
        theirs = [_num(s.values.get(baseline_key), digits) if baseline_key in s.values else "—" for _, s in systems]
        lines.append(f"| {title} | {ours} | " + " | ".join(theirs) + " |")
    lines.append(
        "\nPercentiles: numpy `linear` method (the default), over the questions that have the field."
    )
    return "\n".join(lines)


def render_uncertainty(summary: dict[str, Any]) -> str:
    """Bootstrap 95% confidence intervals of F1 (percent) and J (0-100) per category."""
    analysis = summary.get("analysis") or {}
    boot = analysis.get("bootstrap") or {}
    if not boot:
        return ""
    names = summary["category_names"]
    metrics = [(m, "F1" if m == "f1" else "J", 100.0 if m == "f1" else 1.0) for m in boot]
    lines = [
        "## Uncertainty",
        "",
        f"{int(analysis['confidence'] * 100)}% percentile-bootstrap intervals over questions "
        f"({analysis['bootstrap_samples']} resamples, seed {analysis['seed']}).",
        "",
        "| category | " + " | ".join(f"{title} 95% CI" for _, title, _ in metrics) + " |",
        "|---|" + "---:|" * len(metrics),
    ]
    for key in CATEGORY_GROUPS:
        cells = []
        for metric, _, scale in metrics:
            interval = boot[metric].get(key)
            cells.append("n/a" if not interval else f"{interval[0] * scale:.2f} – {interval[1] * scale:.2f}")
        lines.append(f"| {_category_label(key, names)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_reliability(summary: dict[str, Any]) -> str:
    """Judge agreement between runs and outcome counts."""
    reliability = (summary.get("analysis") or {}).get("reliability")
    if not reliability:
        return ""
    judge = summary.get("judge") or {}
    counts = judge.get("counts") or {}
    share = reliability.get("unanimous_share")
    too_long = judge.get("prompt_too_long_questions") or []
    return "\n".join(
        [
            "## Judge reliability",
            "",
            f"- Krippendorff's alpha between runs ({reliability['level']} level): "
            f"{_num(reliability.get('krippendorff_alpha'), 3)}",
            f"- Questions whose valid runs all agree: "
            f"{'n/a' if share is None else f'{share * 100:.1f}%'} of {reliability['questions']}",
            f"- Parse failures: {counts.get('parse_failure', 0)}; API errors: {counts.get('api_error', 0)}",
        ]
        + ([f"- Replies without a verdict (empty, cut, refused; not cached): {counts['no_verdict']}"]
           if counts.get("no_verdict") else [])
        + ([f"- Prompt too long for the API (J n/a): {', '.join(too_long)}"] if too_long else [])
    )


def _cell(text: Any, limit: int = 80) -> str:
    text = "" if text is None else str(text)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_error_analysis(summary: dict[str, Any]) -> str:
    """Top/bottom questions by F1 and by J, and where F1 and J disagree most."""
    analysis = summary.get("analysis") or {}
    extremes = analysis.get("extremes") or {}
    if not extremes:
        return ""
    lines = [
        "## Error analysis",
        "",
        "For category 5 (adversarial) the ground truth column holds the *trap* answer: LoCoMo's "
        "scorer gives 1 only when the prediction says \"no information available\" or \"not "
        "mentioned\", so repeating the trap answer scores 0.",
    ]
    titles = {"f1": "F1", "j_mean": "J"}
    for metric, ends in extremes.items():
        for end in ("bottom", "top"):
            lines += [
                "",
                f"### {'Lowest' if end == 'bottom' else 'Highest'} 5 by {titles.get(metric, metric)}",
                "",
                "| id | cat | question | ground truth | prediction | F1 | J |",
                "|---|---:|---|---|---|---:|---:|",
            ]
            for row in ends[end]:
                f1 = row.get("f1")
                lines.append(
                    f"| {_cell(row['question_id'], 20)} | {row['category']} | {_cell(row['question'])} "
                    f"| {_cell(row['ground_truth'], 50)} | {_cell(row['prediction'], 60)} "
                    f"| {_num(f1 * 100 if f1 is not None else None)} | {_num(row.get('j_mean'))} |"
                )
    disagreements = analysis.get("disagreements") or []
    if disagreements:
        lines += [
            "",
            "### Largest F1-J disagreements (J - 100·F1)",
            "",
            "| id | cat | question | ground truth | prediction | F1 | J | gap |",
            "|---|---:|---|---|---|---:|---:|---:|",
        ]
        for row in disagreements:
            lines.append(
                f"| {_cell(row['question_id'], 20)} | {row['category']} | {_cell(row['question'])} "
                f"| {_cell(row['ground_truth'], 50)} | {_cell(row['prediction'], 60)} "
                f"| {_num(row['f1'] * 100)} | {_num(row['j_mean'])} | {row['gap']:+.1f} |"
            )
    return "\n".join(lines)


def render_status(summary: dict[str, Any]) -> str:
    """The block at the top of the report when a part of the run did not finish.

    Args:
        summary: a run summary; ``summary["status"]`` maps a part (``f1``, ``judge``) to
            ``"ok"`` or what happened (``"failed: <message>"``, ``"interrupted"``,
            ``"pending: ..."``, ``"running: ..."``).

    Returns:
        Markdown, or ``""`` when every part is ``ok`` (or there is no status).
    """
    status = summary.get("status") or {}
    if all(value == "ok" for value in status.values()):
        return ""
    lines = ["## Run status: INCOMPLETE", ""]
    lines += [f"- {part}: {'done' if value == 'ok' else value}" for part, value in status.items()]
    lines += ["", "Results of the parts that did not finish are missing from this report."]
    return "\n".join(lines)


def render_report(
    summary: dict[str, Any],
    baselines: Optional[Mapping[str, BaselineSet]] = None,
    plots: Sequence[str] = (),
) -> str:
    """Render ``report.md`` from a run summary.

    Args:
        summary: output of :func:`locomo_exp.summary.build_summary`, with an ``analysis``
            section from :func:`locomo_exp.analysis.analyse` when available.
        baselines: selected baseline sets (``conf/baselines/``).
        plots: PNG file names (relative to the report) to embed.

    Returns:
        Markdown text. Scores are shown as percentages (0-100).
    """
    info = summary["input"]
    names = summary["category_names"]
    versions = summary["versions"]
    total = summary["counts"]["overall"]
    conversations = summary["conversations"]["overall"]
    status_block = render_status(summary)
    lines = [
        "# LoCoMo evaluation report",
        "",
        *([status_block, ""] if status_block else []),
        f"- Input: `{info['path']}` (format `{info['format']}`"
        + (f", prediction key `{info['prediction_key']}`" if info.get("prediction_key") else "")
        + ")",
        f"- sha256: `{info['sha256']}`",
        f"- Questions: {total} from {conversations} conversation(s); per category: "
        + ", ".join(
            f"{c} {names.get(str(c), '?')} {summary['counts'][str(c)]}"
            f" ({summary['conversations'][str(c)]} conv.)"
            for c in CATEGORY_IDS
        ),
    ]
    lines += input_header_lines(info)  # question set, records key, verdict field, reference...
    if info.get("n_skipped_records"):
        lines.append(
            f"- Skipped invalid records: {info['n_skipped_records']} (data.on_invalid=skip; "
            "listed at the end)"
        )
    if info.get("n_missing_predictions"):
        lines.append(
            f"- Missing predictions (null, NaN or Infinity in the file), each scored 0: "
            f"{info['n_missing_predictions']} (listed in summary.json)"
        )
    if info.get("n_excluded_no_gold"):
        lines.append(
            f"- Excluded for having no gold answer (null, empty or blank): "
            f"{info['n_excluded_no_gold']} (not scored; listed in summary.json)"
        )
    if total < FULL_BENCHMARK_QUESTIONS["overall"] and (
        summary["counts"]["overall_1_4"] < FULL_BENCHMARK_QUESTIONS["overall_1_4"]
    ):
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
    baselines = baselines or {}
    f1_sets = [b for b in baselines.values() if b.metric == BaselineMetric.f1]
    if lexical and f1_sets:
        lines += ["", "## F1 vs published baselines"]
        lines += ["", *[render_f1_comparison(summary, b) + "\n" for b in f1_sets]]
    stored = summary.get("stored_judge")
    if stored:
        lines += [
            "",
            "## Judge verdicts stored in the input (not this run's judge)",
            "",
            "The input file carries another judge's verdicts (e.g. the Mem0 harness's binary "
            "gpt-4o-mini `llm_score`, Zep's `grade`); their mean, in percent, is what the "
            "file's authors published as J.",
            "",
            "| category | n | stored J |",
            "|---|---:|---:|",
        ]
        for key, agg in stored.items():
            if agg["count"]:
                lines.append(f"| {_category_label(key, names)} | {agg['count']} | {_num(agg['mean'])} |")
    detail = render_stored_judge_detail(summary.get("stored_judge_detail"), lambda k: _category_label(k, names))
    if detail:
        lines += ["", detail]
    if "judge" in summary:
        lines += ["", render_judge_section(summary["judge"], names)]
        j_sets = [b for b in baselines.values() if b.metric == BaselineMetric.j]
        if j_sets and (summary["judge"].get("j") or {}):
            lines += ["", "## J vs published baselines"]
            lines += ["", *[render_j_comparison(summary, b) + "\n" for b in j_sets]]
    latency_sets = [b for b in baselines.values() if b.metric == BaselineMetric.latency]
    lines += ["", render_latency_comparison(summary, latency_sets)]
    for section in (render_uncertainty(summary), render_reliability(summary), render_error_analysis(summary)):
        if section:
            lines += ["", section]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{name}]({name})" for name in plots]
    skipped = info.get("skipped") or []
    if skipped:
        lines += ["", "## Skipped records", ""] + [f"- {text}" for text in skipped]
    return "\n".join(lines) + "\n"
