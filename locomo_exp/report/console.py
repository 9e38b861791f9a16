"""The per-category table printed on the terminal after a run (the CLI prints it).

It shows the numbers the docs tell a user to check: our F1 (``f1.variant``), the F1 of the
variant the file's own per-question metrics match when that is another one (or LoCoMo's
official aggregate of rounded scores when the file rounds them as LoCoMo's scorer does),
BLEU-1, the stored J of the file's own judge, and our J.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from locomo_exp.benchmark.locomo import overall_group_for
from locomo_exp.report.format import MISSING
from locomo_exp.results import ByCategory, JudgeSummary, RunSummary
from locomo_exp.results.money import round_money
from locomo_exp.results.words import counted

Column = tuple[str, Callable[[str], float | None], float]


def _mean_of(groups: ByCategory) -> Callable[[str], float | None]:
    """``key -> groups[key].mean`` (a category key's mean), ``None`` for a missing key."""
    return lambda key: groups[key].mean if key in groups else None


def file_variant_column(results: RunSummary) -> tuple[Column, str] | None:
    """The F1 the file's own per-question metrics identify, when it differs from ours.

    A stored field (``f1_score``, ``<name>_f1``) whose best-matching metric equals it on
    every question names a variant. When that is the reported variant and the file rounds
    its values (LoCoMo's own output: 3 decimals) and the variant has an official aggregate
    of rounded scores, that aggregate is shown instead (LoCoMo's 12.25, not 12.24).

    Args:
        results: the run summary.

    Returns:
        ``((title, getter, scale), note)``, or ``None`` when the file identifies nothing new.
    """
    reported = str(results.versions.get("f1", "")).split(" ")[0]  # "f1_locomo (f1.variant=...)"
    for field, found in sorted((results.stored_vs_recomputed or {}).items()):
        best = found.get("best")
        if not best or not str(best).startswith("f1_") or found.get("equal") != found.get("n"):
            continue
        official = f"{best}_official"
        agreement = f"`{field}` = {best} on {found['equal']}/{counted(found['n'], 'question')}"
        if best != reported and best in results.metrics:
            title = f"F1 {best.removeprefix('f1_')}"
            return (title, _mean_of(results.metrics[best]), 100.0), (
                f"{title}: the variant the file's own {agreement}"
            )
        if best == reported and found.get("decimals") and official in results.metrics:
            return ("F1 official", _mean_of(results.metrics[official]), 100.0), (
                f"F1 official: the mean of per-question scores rounded as the file's "
                f"({found['decimals']} decimals), as LoCoMo's aggregation computes it; {agreement}"
            )
    return None


def console_table(summary: RunSummary | Mapping[str, Any]) -> str:
    """A short per-category table of the headline metrics (percent), for the terminal.

    Args:
        summary: the run's results, or their ``summary.json`` layout.

    Returns:
        Plain text: one row per category key with its question count, then F1, the file's
        own F1 variant or official aggregate (:func:`file_variant_column`), BLEU-1 (0-1
        means shown as percent), stored J and J (0-100) when present; ``n/a`` for no
        value; a line under the table for each extra column (J: which judge produced it
        and what its calls cost, :func:`judge_lines`). J's overall is shown only on the
        row matching the judged categories.
    """
    results = summary if isinstance(summary, RunSummary) else RunSummary.from_json(summary)
    columns: list[Column] = []
    notes: list[str] = []
    if "f1" in results.metrics:
        columns.append(("F1", _mean_of(results.metrics["f1"]), 100.0))
        extra = file_variant_column(results)
        if extra is not None:
            columns.append(extra[0])
            notes.append(extra[1])
    if "bleu1" in results.metrics:
        columns.append(("BLEU-1", _mean_of(results.metrics["bleu1"]), 100.0))
    if results.stored_judge is not None:
        columns.append(("stored J", _mean_of(results.stored_judge), 1.0))
        field = results.input.to_json().get("judge_field")
        notes.append(f"stored J: the file's own judge verdicts (`{field or 'stored'}`)")
    judge = results.judge
    if judge is not None and judge.j:
        j = judge.j
        overall_key = overall_group_for(list(judge.categories))

        def j_mean(key: str) -> float | None:
            # the judge pools its overall over the judged categories only
            if key.startswith("overall"):
                group = j.get("overall") if key == overall_key else None
            else:
                group = j.get(key)
            return group.mean if group is not None else None

        columns.append(("J", j_mean, 1.0))
    widths = [max(10, len(title) + 2) for title, _, _ in columns]
    header = f"{'category':<18}{'n':>6}" + "".join(
        f"{title:>{width}}" for (title, _, _), width in zip(columns, widths, strict=True)
    )
    lines = [header, "-" * len(header)]
    for key in results.shown_groups:
        label = f"{key} {results.category_names.get(key, '')}" if key.isdigit() else key
        cells = ""
        for (_, getter, scale), width in zip(columns, widths, strict=True):
            value = getter(key)
            cells += f"{MISSING if value is None else format(value * scale, '.2f'):>{width}}"
        lines.append(f"{label:<18}{results.counts[key]:>6}{cells}")
    lines += notes
    if results.overall_note:
        lines.append(results.overall_note)
    if judge is not None and judge.j:  # which judge produced J, and what it cost
        lines += judge_lines(judge)
    return "\n".join(lines)


def judge_lines(judge: JudgeSummary) -> list[str]:
    """The lines under the console table saying which judge produced J and its cost.

    Args:
        judge: the run's judge summary.

    Returns:
        ``J: judge anthropic claude-sonnet-4-6, protocol rubric (prompt rubric-v1),
        temperature 0.5, 3 run(s) per question[, endpoint <url> (custom)]`` (a template
        run names the template, its version and sha256 prefix; the snapshot the API
        answered with when it differs from the model asked for), then ``Judge cost $...``
        (:func:`~locomo_exp.report.judge.cost_line`: this run, answers + audit + panel,
        and in all with the cached calls; a custom endpoint's cost is a list-price
        estimate).
    """
    from locomo_exp.report.judge import cost_line

    model = judge.model or MISSING
    if judge.model_snapshot and judge.model_snapshot != judge.model:
        model += f" (answered as {judge.model_snapshot})"
    template = judge.template
    if isinstance(template, Mapping):
        protocol = (
            f"template {template.get('name')}@{template.get('version')} "
            f"(sha256 {str(template.get('sha256') or MISSING)[:12]})"
        )
    else:
        protocol = f"{judge.protocol or MISSING} (prompt {judge.prompt_version or MISSING})"
    temperature = MISSING if judge.temperature is None else f"{judge.temperature:g}"
    line = (
        f"J: judge {judge.provider or MISSING} {model}, protocol {protocol}, temperature "
        f"{temperature}, {judge.runs if judge.runs is not None else MISSING} run(s) per question"
    )
    if judge.endpoint_kind == "custom":
        line += f", endpoint {judge.endpoint} (custom)"
    return [line, "Judge " + cost_line(judge)]


__all__ = ["console_table", "file_variant_column", "judge_lines"]


JUDGE_NAMED = ("provider", "model", "endpoint", "endpoint_kind")
"""What the dry-run block names of the judge it counted for (a JudgeRunResult summary's keys)."""


def dry_run_lines(estimate: Mapping[str, Any], judge: Mapping[str, Any] | None) -> list[str]:
    """The console block of a judge dry run: the judge it counted for, then its estimate.

    Args:
        estimate: the dry run's estimate (``calls_to_make``, tokens, cost in USD, ...).
        judge: the judge's provider and model (:data:`JUDGE_NAMED`); the endpoint is named
            when it is not the provider's default (``endpoint_kind == "custom"``).

    Returns:
        ``Judge dry run (no call made):``, ``  judge: <provider> <model>``, the endpoint
        line when custom, then one ``  key: value`` line per estimate item.
    """
    judge = judge or {}
    named = [f"  judge: {judge.get('provider', MISSING)} {judge.get('model', MISSING)}"]
    if judge.get("endpoint_kind") == "custom":
        named.append(f"  endpoint: {judge.get('endpoint')}")
    return [
        "Judge dry run (no call made):",
        *named,
        *(f"  {key}: {value}" for key, value in round_money(dict(estimate)).items()),
    ]


def input_notes(summary: Mapping[str, Any], answer_key: Mapping[str, Any] | None = None
                ) -> list[str]:
    """Lines the console prints under "Scored N questions": what the report's header says.

    Args:
        summary: the run's summary (:meth:`~locomo_exp.results.RunSummary.to_json`).
        answer_key: the run's ``answer_key`` section (``data.errata``), which the typed
            summary does not hold, or ``None`` (then ``summary["answer_key"]`` if present).

    Returns:
        The answers that were numbers, read as text
        (:func:`locomo_exp.report.input.numbers_line`); the ``data.limit`` sample
        (``"subset: 100 of 1,986 questions (data.limit=100, seed 0); not comparable with
        full-benchmark baselines"``); the errata scored beside the original answer key
        (``"answer key: 12 errata applied from errata.json ..."``). Possibly none.
    """
    from locomo_exp.report.input import numbers_line

    info = dict(summary["input"])
    lines = []
    numbers = numbers_line(info)
    if numbers:
        lines.append(numbers)
    subset = info.get("subset")
    if subset:
        questions = counted(int(subset["from"]), "question", thousands=True)
        lines.append(
            f"subset: {int(subset['limit']):,} of {questions} (data.limit={subset['limit']}, "
            f"seed {subset['seed']}); not comparable with full-benchmark baselines"
        )
    key = answer_key if answer_key is not None else summary.get("answer_key")
    if key:
        name = str(key.get("path", "")).rsplit("/", 1)[-1]
        lines.append(
            f"answer key: {counted(int(key.get('n_matched') or 0), 'erratum', 'errata')} "
            f"applied from {name} ({key.get('n_score_changing', 0)} change a score); the "
            "corrected key is scored beside the original one ('Answer key: original vs "
            "corrected' in the report), headline numbers use the original"
        )
    return lines
