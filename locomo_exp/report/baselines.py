"""This run next to published baselines (``conf/baselines/``): F1 (same variant), J, latency.

Published tables label LoCoMo's categories inconsistently (docs/field_notes.md §3): the Mem0 paper's
"single-hop" column holds category 1, "temporal" 2, "multi-hop" 3 and "open-domain" 4.
Each :class:`~locomo_exp.config.BaselineSet` therefore carries its own
``label_to_category`` and everything here works by category id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from locomo_exp.benchmark.locomo import CATEGORY_IDS, LOCOMO10_CATEGORY_SIZES
from locomo_exp.config import BaselineSet, BaselineSystem
from locomo_exp.report.format import MISSING, fmt_num
from locomo_exp.report.judge_match import binary_template
from locomo_exp.results import RunSummary
from locomo_exp.results.model_ids import DIFFERENT, SAME_FAMILY, model_match


def values_by_category(baseline: BaselineSet, system: BaselineSystem) -> dict[int, float]:
    """A system's per-category numbers keyed by LoCoMo category id.

    Args:
        baseline: the set (gives ``label_to_category``).
        system: one of its systems.

    Returns:
        ``{category id: value}`` (same unit as the source, percent for F1 and J).

    Raises:
        KeyError: if a label of the system has no mapping in the set.
    """
    mapped: dict[int, float] = {}
    for label, value in system.categories.items():
        if label not in baseline.label_to_category:
            raise KeyError(
                f"baseline '{baseline.title}', system '{system.name}': column label {label!r} "
                "has no entry in label_to_category (available: "
                f"{', '.join(baseline.label_to_category)})"
            )
        mapped[baseline.label_to_category[label]] = value
    return mapped


def weighted_overall(
    by_category: Mapping[int, float], sizes: Mapping[int, int] = LOCOMO10_CATEGORY_SIZES
) -> float | None:
    """Question-weighted mean of per-category values: sum(v_c * n_c) / sum(n_c).

    This is how the Mem0 paper's overall J is pooled over questions (docs/field_notes.md §2).

    Args:
        by_category: value per category id.
        sizes: questions per category id (default: LoCoMo-10's).

    Returns:
        The weighted mean, or ``None`` for no categories.
    """
    total = sum(sizes[c] for c in by_category)
    if not total:
        return None
    return sum(value * sizes[c] for c, value in by_category.items()) / total


def label_for(baseline: BaselineSet, category: int) -> str | None:
    """The source's own column label for a category id, if the set has one."""
    for label, cid in baseline.label_to_category.items():
        if cid == category:
            return label
    return None


def _percent(value: float | None) -> str:
    return fmt_num(value * 100 if value is not None else None)


def _our_category_keys(covers: str, summary: RunSummary) -> tuple[str, str]:
    """Our overall key matching a baseline's coverage, and how to describe it."""
    present = [str(c) for c in CATEGORY_IDS if summary.counts[str(c)]]
    ours = f"overall over the categories in the input ({', '.join(present)})"
    if covers == "1-4":
        return "overall_1_4", "overall over categories 1-4"
    if covers in ("1-5", "all"):
        return "overall", ours
    return "overall", f"{ours}; the source does not say which categories its overall covers"


def _header(summary: RunSummary, baseline: BaselineSet, categories: list[int]) -> list[str]:
    return (
        ["system"]
        + [
            f"{c} {summary.category_name(c)} (their label: {label_for(baseline, c)})"
            for c in categories
        ]
        + ["overall"]
    )


def render_f1_comparison(summary: RunSummary, baseline: BaselineSet) -> str:
    """This run vs one F1 baseline set, our F1 computed the way that baseline computed it.

    Args:
        summary: run summary (lexical means 0-1; shown as percent).
        baseline: an F1 baseline set (percent).

    Returns:
        A markdown section; ``""`` when this run lacks the baseline's F1 variant.
    """
    variant = baseline.f1_variant.value if baseline.f1_variant else "locomo"
    metric = summary.metrics.get(f"f1_{variant}")
    if metric is None:
        return ""
    categories = sorted(set(baseline.label_to_category.values()))
    overall_key, overall_text = _our_category_keys(baseline.overall_covers, summary)
    header = _header(summary, baseline, categories)
    lines = [
        f"### vs {baseline.title}",
        "",
        f"Source: {baseline.source}. Their F1 variant: `{variant}`; ours below is computed with "
        f"the same variant (`f1_{variant}`), in percent. Our overall is the {overall_text}.",
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    ours = [_percent(metric[str(c)].mean) for c in categories]
    lines.append(
        f"| **this run (f1_{variant})** | "
        + " | ".join(ours + [_percent(metric[overall_key].mean)])
        + " |"
    )
    if (
        baseline.overall_covers == "unstated"
        and metric["overall_1_4"].count != metric["overall"].count
    ):
        # category 5's phrase rule scores refusals as 1, which lifts an all-category mean
        lines.append(
            f"| this run (f1_{variant}), categories 1-4 only | "
            + " | ".join(["—"] * len(categories) + [_percent(metric["overall_1_4"].mean)])
            + " |"
        )
    for system in baseline.systems:
        by_id = values_by_category(baseline, system)
        overall = fmt_num(system.overall) if system.overall is not None else "—"
        cells = [fmt_num(by_id.get(c)) for c in categories] + [overall]
        lines.append(f"| {system.name} | " + " | ".join(cells) + " |")
    lines += [f"\n{note}" for note in baseline.notes]
    return "\n".join(lines)


def render_j_comparison(summary: RunSummary, baseline: BaselineSet) -> str:
    """This run's J (± std across runs) vs a J baseline set, with both protocols named.

    Args:
        summary: run summary with a ``judge`` (J 0-100).
        baseline: a J baseline set (percent CORRECT for binary protocols).

    Returns:
        A markdown section; empty when the judge did not run or produced no J.
    """
    judge = summary.judge
    if judge is None or not judge.j:
        return ""
    j = judge.j
    categories = sorted(set(baseline.label_to_category.values()))
    judged = sorted(judge.categories)
    overall_text = f"mean over the questions of the judged categories {judged}"
    if baseline.overall_covers not in (
        "unstated",
        "-".join(str(c) for c in (judged[:1] + judged[-1:])),
    ):
        overall_text += f" (the baseline's overall covers categories {baseline.overall_covers})"
    theirs_protocol = baseline.j_protocol or "unstated"
    answered = judge.model_snapshot or judge.model
    lines = [
        f"### vs {baseline.title}",
        "",
        f"Source: {baseline.source}.",
        f"- this run: protocol `{judge.protocol}`, judge `{judge.model}`"
        + (f" (answered as `{answered}`)" if answered != judge.model else "")
        + f", {judge.runs} run(s); ± is the std across runs of the run-level J.",
        f"- baseline: protocol `{theirs_protocol}`, judge `{baseline.judge_model or 'unstated'}`.",
    ]
    same_protocol = judge.protocol == theirs_protocol or (
        theirs_protocol == "binary" and binary_template({"template": judge.template}) is not None
    )  # a template giving only 0/100 gives a binary protocol's verdicts (prompt unverified)
    models = model_match(answered, baseline.judge_model)  # the judge that answered
    if not same_protocol or models in (None, DIFFERENT):
        lines.append(
            "- **Indicative only: the protocols or judge models differ, so the numbers measure "
            "different things.**"
        )
    elif models == SAME_FAMILY:
        lines.append(
            f"- same judge model ({answered} is a snapshot of {baseline.judge_model}; the "
            "publication's snapshot is not stated) and protocol"
            + (" (a binary template: its prompt text is not verifiable against the "
               "publication's)" if judge.protocol == "template" else "")
        )
    header = _header(summary, baseline, categories)
    lines += ["", "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]

    def ours(key: str) -> str:
        group = j.get(key)
        if group is None or group.mean is None:
            return MISSING
        spread = group.std_across_runs
        return fmt_num(group.mean) + (f" ± {spread:.2f}" if spread is not None else "")

    lines.append(
        "| **this run** | "
        + " | ".join([ours(str(c)) for c in categories] + [ours("overall")])
        + " |"
    )
    for system in baseline.systems:
        by_id = values_by_category(baseline, system)
        overall = fmt_num(system.overall) + (
            f" ± {system.std:.2f}" if system.std is not None else ""
        )
        lines.append(
            f"| {system.name} | "
            + " | ".join(
                [fmt_num(by_id.get(c)) if c in by_id else "—" for c in categories] + [overall]
            )
            + " |"
        )
    lines.append(f"\nOur overall is the {overall_text}.")
    lines += [f"\n{note}" for note in baseline.notes]
    return "\n".join(lines)


LATENCY_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("search latency p50 (s)", "search_latency_s", "p50", "search_latency_s_p50"),
    ("search latency p95 (s)", "search_latency_s", "p95", "search_latency_s_p95"),
    ("total latency p50 (s)", "total_latency_s", "p50", "total_latency_s_p50"),
    ("total latency p95 (s)", "total_latency_s", "p95", "total_latency_s_p95"),
    ("search latency mean (s)", "search_latency_s", "mean", "search_latency_s_mean"),
    ("total latency mean (s)", "total_latency_s", "mean", "total_latency_s_mean"),
    ("context tokens (mean)", "context_tokens", "mean", "context_tokens_mean"),
)
"""Rows of the latency table: (title, input field, statistic, baseline value key)."""


def _latency_value(summary: RunSummary, field_name: str, stat: str) -> float | None:
    """One statistic of one latency field of the run, or ``None`` when the input lacks it."""
    stats = summary.latency.get(field_name)
    value = getattr(stats, stat) if stats is not None else None
    return None if value is None else float(value)


def render_latency_comparison(summary: RunSummary, baselines: Sequence[BaselineSet]) -> str:
    """Latency (seconds) and context tokens of this run vs latency baselines.

    Args:
        summary: run summary (``latency``).
        baselines: latency baseline sets.

    Returns:
        A markdown section ("not in input" where the input lacks a field); when the input
        has none of the fields, no table but one line saying so (a table whose every row
        reads "not in input" compares nothing).
    """
    systems = [(b, s) for b in baselines for s in b.systems]
    fields = list(dict.fromkeys(field_name for _, field_name, _, _ in LATENCY_ROWS))
    values = [_latency_value(summary, field_name, stat) for _, field_name, stat, _ in LATENCY_ROWS]
    if all(value is None for value in values):
        against = ", ".join(f"{s.name} ({b.source.split(',')[0]})" for b, s in systems)
        return (
            "Latency and context tokens: not in input (no question has "
            + ", ".join(f"`{name}`" for name in fields)
            + ")"
            + (f", so nothing is compared with {against}." if against else ".")
        )
    header = ["measure", "this run"] + [f"{s.name} ({b.source.split(',')[0]})" for b, s in systems]
    lines = [
        "## Latency and context tokens",
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
    ]
    for (title, field_name, _, baseline_key), value in zip(LATENCY_ROWS, values, strict=True):
        digits = 0 if field_name == "context_tokens" else 3
        ours = "not in input" if value is None else f"{value:.{digits}f}"
        theirs = [
            fmt_num(s.values.get(baseline_key), digits) if baseline_key in s.values else "—"
            for _, s in systems
        ]
        lines.append(f"| {title} | {ours} | " + " | ".join(theirs) + " |")
    lines.append(
        "\nPercentiles: numpy `linear` method (the default), over the questions that have the "
        "field."
    )
    return "\n".join(lines)
