"""The report's opening: run status, input file, question counts, metric versions."""

from __future__ import annotations

from locomo_exp.benchmark.locomo import CATEGORY_IDS, FULL_BENCHMARK_QUESTIONS
from locomo_exp.report.input import input_header_lines
from locomo_exp.results import RunSummary
from locomo_exp.results.words import counted


def render_status(summary: RunSummary) -> str:
    """The block at the top of the report when a part of the run did not finish.

    Args:
        summary: a run summary; ``summary.status`` maps a part (``f1``, ``judge``) to
            ``"ok"`` or what happened (``"failed: <message>"``, ``"interrupted"``,
            ``"pending: ..."``, ``"running: ..."``).

    Returns:
        Markdown: a JUDGE DRY RUN block for ``judge.dry_run=true``; or ``""`` when every
        part is ``ok`` (or there is no status) and there is no warning
        (:attr:`RunSummary.warnings`, e.g. J inflated by a lenient judge).
    """
    warnings = [f"- **Warning: {text}.**" for text in summary.warnings]
    if summary.judge_dry_run and not summary.incomplete:
        return "\n".join([
            "## Run status: JUDGE DRY RUN", "",
            "- judge: dry run, nothing judged (judge.dry_run=true: no judge call was made, J is "
            "not measured; the estimate of a real run's calls and cost is under J)",
            *warnings,
        ])
    if not summary.incomplete:
        return "\n".join(["## Run status: WARNING", "", *warnings]) if warnings else ""
    lines = ["## Run status: INCOMPLETE", ""]
    lines += [
        f"- {part}: {'done' if value == 'ok' else value}" for part, value in summary.status.items()
    ]
    lines += warnings
    lines += ["", "Results of the parts that did not finish are missing from this report."]
    return "\n".join(lines)


def render_header(summary: RunSummary, card_shown: bool = False) -> str:
    """Title, status block, input file, counts, data caveats and metric versions.

    Args:
        summary: the run summary.
        card_shown: the card block ("How this was measured") is in the report: its input
            and sha256 are not listed again.

    Returns:
        Markdown (no trailing newline). A run with fewer questions than the full
        benchmark (:data:`~locomo_exp.benchmark.locomo.FULL_BENCHMARK_QUESTIONS`) is marked as a
        subset not comparable with full-benchmark baselines.
    """
    info = summary.input
    total = summary.counts["overall"]
    conversations = summary.conversations["overall"]
    status_block = render_status(summary)
    lines = [
        "# LoCoMo evaluation report",
        "",
        *([status_block, ""] if status_block else []),
        *(
            []
            if card_shown
            else [
                f"- Input: `{info.path}` (format `{info.format}`"
                + (f", prediction key `{info.prediction_key}`" if info.prediction_key else "")
                + ")",
                f"- sha256: `{info.sha256}`",
            ]
        ),
        *(
            [f"- Prediction key: `{info.prediction_key}`"]
            if card_shown and info.prediction_key
            else []
        ),
        f"- Questions: {total} from {counted(conversations, 'conversation')}; per category: "
        + ", ".join(
            f"{c} {summary.category_name(c)} {summary.counts[str(c)]}"
            f" ({summary.conversations[str(c)]} conv.)"
            for c in CATEGORY_IDS
        ),
    ]
    # question set, records key, verdict field... (the card states the question set)
    lines += input_header_lines(info.to_json(), question_set_line=not card_shown)
    if info.n_skipped_records:
        lines.append(
            f"- Skipped invalid records: {info.n_skipped_records} (data.on_invalid=skip; "
            "listed at the end)"
        )
    if info.n_missing_predictions:
        lines.append(
            f"- Missing predictions (null, NaN or Infinity in the file), each scored 0: "
            f"{info.n_missing_predictions} (listed in summary.json)"
        )
    if info.n_excluded_no_gold:
        lines.append(
            f"- Excluded for having no gold answer (null, empty or blank): "
            f"{info.n_excluded_no_gold} (not scored; listed in summary.json)"
        )
    if total < FULL_BENCHMARK_QUESTIONS["overall"] and (
        summary.counts["overall_1_4"] < FULL_BENCHMARK_QUESTIONS["overall_1_4"]
    ):
        lines.append(
            f"- **Subset: {counted(total, 'question')} from "
            f"{counted(conversations, 'conversation')} — not comparable with full-benchmark "
            "baselines.**"
        )
    lines += ["", "Metric versions:", ""]
    lines += [f"- `{name}`: {version}" for name, version in summary.versions.items()]
    return "\n".join(lines)


def render_skipped(summary: RunSummary) -> str:
    """The list of skipped invalid records at the end of the report (``""`` when none)."""
    if not summary.input.skipped:
        return ""
    return "\n".join(["## Skipped records", ""] + [f"- {text}" for text in summary.input.skipped])
