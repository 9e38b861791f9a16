"""A LongMemEval run's ``report.md`` and console table: pure text from its ``summary.json``.

Accuracies are shown in percent with two decimals (LongMemEval's own scripts print 0-1 with
four, so 0.7275 reads 72.75), with their correct/n counts and 95% intervals (Wilson; the
task average's is a stratified bootstrap, see :mod:`locomo_exp.benchmarks.longmemeval.scoring`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.benchmarks.longmemeval.summary import dry_run_of
from locomo_exp.report.card import stored_judge_line
from locomo_exp.report.console import dry_run_lines
from locomo_exp.report.format import MISSING
from locomo_exp.report.judge import cost_text, in_all_tokens_text, paid_words
from locomo_exp.report.judge_match import published_judge_match
from locomo_exp.report.provenance import provenance_lines
from locomo_exp.results.words import counted

NOT_MEASURED = "not measured"


def _pct(value: float | None) -> str:
    return MISSING if value is None else f"{value * 100:.2f}"


def figure_rows(figures: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(label, figure)`` in report order: overall, task-averaged, abstention, each type."""
    rows: list[tuple[str, Mapping[str, Any]]] = [
        ("overall", figures["overall"]),
        ("task-averaged", figures["task_avg"]),
        ("abstention (_abs)", figures["abstention"]),
    ]
    rows += [(name, fig) for name, fig in figures["per_type"].items()]
    return rows


def task_avg_missing(figure: Mapping[str, Any]) -> str | None:
    """Why a task-averaged figure is not LongMemEval's task average, or ``None`` when it is.

    LongMemEval's task-averaged accuracy is the mean of its 6 question types' accuracies;
    with fewer types present the mean is over the types present and is not that figure.

    Args:
        figure: the ``task_avg`` figure (its ``types``: the types averaged).

    Returns:
        ``"not measured (1 of 6 question types present)"``, or ``None`` with every type.
    """
    present = len(figure.get("types") or ())
    total = len(lme.QUESTION_TYPES)
    if present >= total:
        return None
    return f"{NOT_MEASURED} ({present} of {total} question types present)"


def _accuracy(label: str, fig: Mapping[str, Any]) -> str:
    """A figure's accuracy in percent; a task average over fewer than 6 types says why not."""
    missing = task_avg_missing(fig) if label == "task-averaged" else None
    return missing or _pct(fig["accuracy"])


def subset_line(summary: Mapping[str, Any]) -> str | None:
    """The warning for answers covering only part of the reference's questions.

    Args:
        summary: the run's ``summary.json`` content (``input.counts``).

    Returns:
        ``"Subset: 5 of 500 reference questions scored (495 without an answer row): not
        comparable with full-benchmark figures (the published ones included)"``, or
        ``None`` when every reference question was answered.
    """
    counts = summary["input"]["counts"]
    missing = int(counts.get("unanswered") or 0)
    if not missing:
        return None
    scored = int(counts["matched"])
    return (
        f"Subset: {scored} of {scored + missing} reference questions scored ({missing} without "
        "an answer row): not comparable with full-benchmark figures (the published ones "
        "included)"
    )


def _count(figure: Mapping[str, Any]) -> str:
    if "correct" in figure:
        return f"{figure['correct']}/{figure['n']}"
    return f"mean of {len(figure.get('types', []))} types"


def _interval(fig: Mapping[str, Any], *, method: bool) -> str:
    """``low–high`` in percent, with the interval's method in brackets when ``method``."""
    if fig.get("ci_low") is None:
        return MISSING
    bounds = f"{_pct(fig['ci_low'])}–{_pct(fig['ci_high'])}"
    return f"{bounds} ({fig['interval']})" if method else bounds


def figures_table(figures: Mapping[str, Any]) -> str:
    """The markdown table of one set of figures."""
    lines = [
        "| figure | accuracy (%) | correct / n | 95% interval (%) |",
        "|---|---:|---:|---|",
    ]
    for label, fig in figure_rows(figures):
        missing = label == "task-averaged" and task_avg_missing(fig)
        interval = MISSING if missing else _interval(fig, method=True)
        lines.append(f"| {label} | {_accuracy(label, fig)} | {_count(fig)} | {interval} |")
    return "\n".join(lines)


def console_table(summary: Mapping[str, Any]) -> str:
    """Plain-text table of the headline figures for the terminal (percent, 2 decimals).

    The judge's checks (``summary["warnings"]``, :mod:`.checks`) follow
    it as ``WARNING:`` lines.
    """
    warnings = [f"WARNING: {w}" for w in summary.get("warnings") or ()]
    return "\n".join([_console_table(summary), *warnings])


def _console_table(summary: Mapping[str, Any]) -> str:
    headline = summary.get("headline")
    found = dry_run_of(summary)
    dry_run = dry_run_lines(*found) if found is not None else []
    if not headline:
        status = str(summary["status"]["j"])
        if dry_run:
            status = "judge dry run: nothing judged"
        why = status if status.startswith(NOT_MEASURED) else f"{NOT_MEASURED} ({status})"
        return "\n".join([*dry_run, f"J: {why}"])
    header = f"{'figure':<28}{'n':>6}{'acc %':>9}   95% interval"
    lines = [
        *dry_run,
        f"Verdicts: {headline['source']} ({headline['judge_model']})",
        header,
        "-" * len(header),
    ]
    for label, fig in figure_rows(headline["figures"]):
        n = fig.get("n", len(fig.get("types", [])))
        missing = task_avg_missing(fig) if label == "task-averaged" else None
        if missing:  # a mean over fewer types is not LongMemEval's task average
            lines.append(f"{label:<28}{n:>6}   {missing}")
            continue
        interval = _interval(fig, method=False)
        lines.append(f"{label:<28}{n:>6}{_pct(fig['accuracy']):>9}   {interval}")
    subset = subset_line(summary)
    if subset:
        lines.append(subset)
    return "\n".join(lines)


def _card_lines(card: Mapping[str, Any]) -> list[str]:
    ref = card["reference"]
    lines = [
        "## How this was measured",
        "",
        *provenance_lines(card),
        f"- benchmark: {card['benchmark']} (Wu et al., ICLR 2025)",
        f"- dataset variant: {lme.variant_label(str(ref['variant']))} "
        f"({ref['mean_sessions_per_question']} haystack sessions per question in the "
        "reference file)",
        f"- reference: `{ref['path']}`, sha256 `{ref['sha256']}`",
        f"- answers: `{card['input']['path']}`, sha256 `{card['input']['sha256']}`",
        f"- verdicts: {card['verdicts']}",
    ]
    source = card.get("stored_judge_source")
    if source:
        lines.append(stored_judge_line(source))
    lines += [
        f"- metrics: {card['metric_version']}; lexical F1: {card['lexical']}; accuracies "
        "in percent here, on 0-1 in summary.json (`scales`)",
    ]
    judge = card.get("judge")
    if judge:
        lines.append(
            f"- judge: {judge['model']}, protocol {judge['protocol']} ({judge['prompt_version']}),"
            f" temperature {judge['temperature']}, max_tokens {judge['max_tokens']}, "
            f"{judge['runs']} run(s)"
        )
        if judge.get("provider"):  # absent in runs made before it was recorded
            lines.append(
                f"- judge API: {judge['provider']}, {judge.get('endpoint_kind')} endpoint "
                f"`{judge.get('endpoint')}`"
            )
    return lines


def _rate_text(rate: Mapping[str, Any]) -> str:
    if not rate["n"]:
        return "not measured (no control)"
    return (
        f"{rate['count']}/{rate['n']} = {_pct(rate['rate'])}% "
        f"({_pct(rate['ci_low'])}–{_pct(rate['ci_high'])})"
    )


def _corrected_text(corrected: Mapping[str, Any] | None, *, source: str, fallback: str) -> str:
    """The overall accuracy corrected by Rogan–Gladen, or why it is not measured.

    Args:
        corrected: ``corrected_overall`` (``accuracy``, ``ci_low``, ``ci_high`` in 0-1, or a
            ``reason``), or ``None``.
        source: words after "Rogan–Gladen" naming where the error rates come from.
        fallback: the reason when ``corrected`` gives none.

    Returns:
        Lower-case text without a final stop, percent with 2 decimals.
    """
    if corrected and corrected.get("accuracy") is not None:
        return (
            f"overall accuracy corrected for these error rates (Rogan–Gladen{source}): "
            f"{_pct(corrected['accuracy'])}% ({_interval(corrected, method=False)})"
        )
    reason = (corrected or {}).get("reason") or fallback
    return f"corrected accuracy: {NOT_MEASURED} ({reason})"


def _judge_calls_lines(judge: Mapping[str, Any] | None) -> list[str]:
    """This run's judge calls, tokens and cost, and the same work in all, as a LoCoMo run says.

    Args:
        judge: ``summary.json``'s ``judge`` (its ``settings`` hold ``counts``, ``tokens``,
            ``estimated_cost_usd`` and ``estimated_cost_usd_including_cached``).

    Returns:
        One line and a blank, or nothing when the judge made no call (a dry run, stored
        verdicts only).
    """
    settings = (judge or {}).get("settings") or {}
    counts, tokens = settings.get("counts"), settings.get("tokens")
    if not counts or not tokens or (judge or {}).get("figures") is None:
        return []
    paid = settings.get("estimated_cost_usd")
    if tokens.get("unknown_usage_calls"):  # the replies carried no token usage
        return [
            f"Judge calls: {counts.get('calls_made', 0)} made, {counts.get('cache_hits', 0)} "
            f"from the cache. Tokens: unknown, cost: unknown ({counts.get('calls_made', 0)} "
            "calls made)",
            "",
        ]
    return [
        f"Judge calls: {counts.get('calls_made', 0)} made, {counts.get('cache_hits', 0)} from "
        f"the cache. Tokens: {tokens.get('input', 0)} in, {tokens.get('output', 0)} out (this "
        f"run){in_all_tokens_text(tokens, counts)}; "
        + cost_text(
            [("answers", paid)], paid, settings.get("estimated_cost_usd_including_cached"),
            paid_words(settings.get("endpoint_kind")),
        ),
        "",
    ]


def _audit_lines(audit: Mapping[str, Any] | None) -> list[str]:
    """The judge audit: controls by kind, sensitivity/specificity, the corrected accuracy."""
    if not audit:
        return []
    head = ["## Judge audit (controls with a known verdict)", ""]
    sizing = f"Audit size: {audit['sizing']}." if audit.get("sizing") else None
    if not audit["kinds"]:
        return [*head, f"No control was judged: {audit.get('sizing')}; "
                "judge.audit.max_share=null (or a larger share) judges the controls.", ""]
    lines = [
        *head,
        "Controls are the run's own questions with a response whose verdict is known (gold as "
        "answer: yes; another question's gold of the same type: no; a non-answer: no, and yes "
        "for abstention questions). They are judged like the answers and never counted in the "
        "accuracies. Rates with 95% Wilson intervals.",
        *([sizing] if sizing else []),
        "",
        "| control | n | expected yes | agreed with expected | false accept | false reject |",
        "|---|---:|---:|---|---|---|",
    ]
    for kind, row in audit["kinds"].items():
        lines.append(
            f"| {kind} | {row['n']} | {row['expected_yes']} | {_rate_text(row['agreed'])} "
            f"| {_rate_text(row['false_accept'])} | {_rate_text(row['false_reject'])} |"
        )
    lines += [
        "",
        f"Sensitivity (yes when yes is expected): {_rate_text(audit['sensitivity'])}; "
        f"specificity (no when no is expected): {_rate_text(audit['specificity'])}.",
    ]
    checks = audit.get("checks") or {}
    lines += [
        f"Check of {name.replace('_', ' ')}s (is J {head}?): {checks[name]}."
        for name, head in (("false_accept", "inflated"), ("false_reject", "deflated"))
        if name in checks
    ]
    corrected = _corrected_text(
        audit.get("corrected_overall"),
        source=", from controls, not human labels",
        fallback="controls of both kinds needed",
    )
    return [*lines, f"{corrected[0].upper()}{corrected[1:]}.", ""]


def _labels_lines(labels: Mapping[str, Any] | None) -> list[str]:
    """The verdicts against human correctness labels (``judge.labels``)."""
    if labels is None:
        return []
    lines = ["## Against human labels", ""]
    if not labels["n"]:
        return [*lines, f"{NOT_MEASURED}: no label matched a scored question "
                f"({labels['n_unmatched']} unmatched, {labels['n_ambiguous']} ambiguous).", ""]
    kappa = labels["kappa"]
    lines += [
        f"Verdicts {labels['verdicts']} against {labels['n']} labelled questions "
        f"({labels['n_ambiguous']} ambiguous and {labels['n_unmatched']} unmatched labels left "
        "out):",
        "",
        f"- agreement: {_rate_text(labels['agreement'])}; Cohen's κ "
        f"{MISSING if kappa is None else f'{kappa:.3f}'}",
        f"- sensitivity (yes on correct answers): {_rate_text(labels['sensitivity'])}",
        f"- specificity (no on wrong answers): {_rate_text(labels['specificity'])}",
    ]
    corrected = _corrected_text(
        labels.get("corrected_overall"), source="", fallback="labels of both verdicts needed"
    )
    return [*lines, f"- {corrected}", ""]


def _panel_lines(panel: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """Each panel judge's figures and its agreement with the run's judge."""
    if not panel:
        return []
    lines = [
        "## Judge panel (same protocol, other models)",
        "",
        "| preset | model | overall (%) | task-averaged (%) | abstention (%) "
        "| agreement with this run's judge | Cohen's κ |",
        "|---|---|---:|---:|---:|---|---:|",
    ]
    for member in panel:
        fig = member["figures"]
        agreement = member["agreement_with_judge"]
        kappa = agreement["kappa"] if agreement else None
        lines.append(
            f"| {member['preset']} | {member['model']} | {_pct(fig['overall']['accuracy'])} "
            f"| {_accuracy('task-averaged', fig['task_avg'])} "
            f"| {_pct(fig['abstention']['accuracy'])} "
            f"| {_rate_text(agreement['agreement']) if agreement else NOT_MEASURED} "
            f"| {'n/a' if kappa is None else f'{kappa:.3f}'} |"
        )
    return [*lines, ""]


def _input_lines(summary: Mapping[str, Any]) -> list[str]:
    counts = summary["input"]["counts"]
    lines = [
        "## Input",
        "",
        f"- answer rows read: {counts['rows']}; scored: {counts['matched']}",
        f"- ids not in the reference (skipped, as LongMemEval's evaluate_qa.py does): "
        f"{counts['skipped_ids']}"
        + (f" (e.g. {', '.join(summary['input']['skipped_examples'])})" if counts["skipped_ids"]
           else ""),
        f"- reference questions without an answer row (not scored): {counts['unanswered']}",
        f"- null hypotheses (scored as empty answers): {counts['null_hypotheses']}",
    ]
    return lines


def _baseline_lines(
    baselines: Sequence[Mapping[str, Any]],
    variant: str,
    subset: str | None = None,
    headline: Mapping[str, Any] | None = None,
) -> list[str]:
    """Published figures, each with its judge and variant, and whether this run's matches."""
    if not baselines:
        return []
    lines = [
        "## Published LongMemEval figures",
        "",
        "Each was judged by the model named, with LongMemEval's own prompts; a difference "
        "from this run means something only with the same judge and dataset variant. "
        f"This run's dataset variant: {lme.variant_label(variant)}."
        + (f" **{subset}.**" if subset else ""),
        "",
        "| system | overall (%) | task-averaged (%) | judge | same judge as this run "
        "| dataset variant | same variant as this run | source |",
        "|---|---:|---:|---|---|---|---|---|",
    ]
    for row in baselines:
        same_judge = published_judge_match(headline, row["judge"], "LongMemEval's own prompts")
        lines.append(
            f"| {row['system']} | {_pct(row.get('overall'))} | {_pct(row.get('task_avg'))} "
            f"| {row['judge']} | {same_judge} | {lme.variant_label(row['variant'])} "
            f"| {lme.same_variant(variant, row['variant'])} | {row['source']} |"
        )
    return [*lines, ""]


def render_lme_report(
    summary: Mapping[str, Any],
    card: Mapping[str, Any],
    baselines: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The markdown report of a LongMemEval run.

    Args:
        summary: the run's ``summary.json`` content.
        card: the run's ``card.json`` content.
        baselines: published figures (:mod:`locomo_exp.benchmarks.longmemeval.baselines`), each with
            its source and judge.

    Returns:
        Markdown text.
    """
    name = summary["input"]["path"].rsplit("/", 1)[-1]
    out = [f"# LongMemEval: {name}", ""]
    warnings = [f"- **Warning: {w}.**" for w in summary.get("warnings") or ()]
    if warnings:  # the judge's checks (benchmarks/longmemeval/checks.py): J inflated or deflated
        out += ["## Run status: WARNING", "", *warnings, ""]
    subset = subset_line(summary)
    if subset:  # as LoCoMo's header says for a subset, before any figure
        out += [f"**{subset}.**", ""]
    out += _card_lines(card) + [""]
    headline = summary.get("headline")
    if headline:
        out += [
            f"## Accuracy ({headline['source']} verdicts, judge {headline['judge_model']})",
            "",
            figures_table(headline["figures"]),
            "",
        ]
        if headline["figures"]["unscored"]:
            out += [
                f"{counted(headline['figures']['unscored'], 'question')} without a verdict "
                "(unscored) are left out of every figure.",
                "",
            ]
    else:
        out += ["## Accuracy", "", f"J: {NOT_MEASURED} ({summary['status']['j']})", ""]
    out += _judge_calls_lines(summary.get("judge"))
    stored = summary.get("stored")
    if stored and headline and headline["source"] == "judge":
        out += [
            f"## The file's stored verdicts (judge {stored['judge_model']})",
            "",
            figures_table(stored["figures"]),
            "",
        ]
        agreement = headline.get("agreement_with_stored")
        if agreement:
            kappa = agreement["kappa"]
            out += [
                f"This judge agrees with the stored verdicts on {_pct(agreement['agreement'])}% "
                f"of {counted(agreement['n'], 'question')} (95% interval "
                f"{_pct(agreement['agreement_ci'][0])}–{_pct(agreement['agreement_ci'][1])}), "
                f"Cohen's κ {MISSING if kappa is None else f'{kappa:.3f}'}; stored yes / judge "
                f"no: {agreement['stored_yes_judge_no']}, stored no / judge yes: "
                f"{agreement['stored_no_judge_yes']}.",
                "",
            ]
    out += _audit_lines(summary.get("audit"))
    out += _labels_lines(summary.get("labels"))
    out += _panel_lines(summary.get("panel"))
    out += _baseline_lines(baselines, str(card["reference"]["variant"]), subset, headline)
    out += _input_lines(summary) + [""]
    return "\n".join(out)


__all__ = [
    "console_table",
    "figure_rows",
    "figures_table",
    "render_lme_report",
    "subset_line",
    "task_avg_missing",
]
