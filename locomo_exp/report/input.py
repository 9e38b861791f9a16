"""Report lines about the input that the data side adds.

Question set, where the records and verdicts were found, the file's own aggregates, the
dataset check, samples, and stored J as the file's authors compute it (mean, majority vote,
per run).
"""

from __future__ import annotations

from typing import Any

from locomo_exp.results.words import counted


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def input_header_lines(info: dict[str, Any], question_set_line: bool = True) -> list[str]:
    """Bullet lines for the report header from ``summary["input"]``.

    Args:
        info: ``summary["input"]`` (see :func:`locomo_exp.data.info.input_info`).
        question_set_line: include the question set (``False`` when the card above
            already states it).

    Returns:
        Markdown bullet lines (possibly none): question set, records key and verdict
        field, the file's own aggregates (as given), pooled files, ``data.reference``
        counts, ``data.limit`` sample.
    """
    lines: list[str] = []
    question_set = info.get("question_set")
    if question_set and question_set_line:
        sampled = " of the input file, before the data.limit sample" if info.get("subset") else ""
        lines.append(f"- Question set{sampled}: {question_set['description']}")
    if info.get("records_key"):
        lines.append(
            f"- Records read from `{info['records_key']}` inside the file's top-level object"
        )
    partitions = info.get("records_partitions") or []
    if partitions:
        lines.append(
            f"- {len(partitions)} other list(s) in the file hold only records of "
            f"`{info['records_key']}` (a breakdown of the same records), not read again: "
            + ", ".join(f"`{key}`" for key in partitions)
        )
    setting = info.get("setting")
    if setting:
        others = [s for s in setting["settings"] if s != setting["setting"]]
        lines.append(
            f"- Setting `{setting['setting']}` of `{setting['field']}`"
            + (f" (the file also has: {', '.join(others)})" if others else "")
            + f"; {setting['n_failed']} failed answer(s) or verdict(s) (empty or ERROR), "
            "each scored 0"
        )
    if info.get("judge_field"):
        lines.append(f"- Stored judge verdicts read from `{info['judge_field']}`")
    aggregates = info.get("file_aggregates") or {}
    if aggregates:
        shown = ", ".join(f"`{key}` = {value}" for key, value in aggregates.items())
        lines.append(f"- The file's own aggregates (as given, not recomputed): {shown}")
    sources = info.get("sources") or []
    if len(sources) > 1:
        lines.append(
            f"- Pooled from {len(sources)} files: "
            + ", ".join(f"`{s['path'].rsplit('/', 1)[-1]}`" for s in sources)
        )
    reference = info.get("reference")
    if reference:
        lines.append(
            f"- Checked against `{reference['path'].rsplit('/', 1)[-1]}`: "
            f"{reference['matched']} matched, {reference['unmatched']} unmatched, "
            f"{reference['category_differs']} with another category, "
            f"{reference['categories_from_reference']} categories taken from it"
            + _without_5(reference.get("categories_without_5", 0))
        )
    subset = info.get("subset")
    if subset:
        lines.append(
            f"- Sample: data.limit={subset['limit']} (seed {subset['seed']}) of "
            f"{counted(subset['from'], 'question')}, per-category shares kept"
        )
    numbers = numbers_line(info)
    if numbers:
        lines.append(f"- {numbers} (docs/formats.md)")
    return lines


def numbers_line(info: dict[str, Any]) -> str | None:
    """``"2 gold answers and 1 prediction were numbers, read as text: 12.0 -> 12, 2019"``.

    ``None`` when no gold or prediction was a number.

    The report's header and the console say it once (``summary.json`` -> ``input`` ->
    ``numeric_answers``, :func:`locomo_exp.data.info.input_info`).
    """
    numbers = info.get("numeric_answers")
    if not numbers or not numbers.get("n"):
        return None
    n = int(numbers["n"])
    examples = ", ".join(numbers.get("examples") or ())
    if "n_gold" not in numbers:  # a summary written before golds and predictions were told apart
        verb = "answer was a number" if n == 1 else "answers were numbers"
        return f"{n} {verb}, read as text: {examples}"
    parts = [
        counted(int(numbers[key]), noun)
        for key, noun in (("n_gold", "gold answer"), ("n_prediction", "prediction"))
        if numbers.get(key)
    ]
    verb = "was a number" if n == 1 else "were numbers"
    return f"{' and '.join(parts)} {verb}, read as text: {examples}"


def render_stored_judge_detail(detail: dict[str, Any] | None, label: Any) -> str:
    """Mean / majority / per-run stored J table, when the file has several verdicts or runs.

    Args:
        detail: ``summary["stored_judge_detail"]`` or ``None``.
        label: ``fn(key) -> str`` naming an aggregate key for display.

    Returns:
        Markdown (empty when there is one verdict per question and no runs).
    """
    if not detail:
        return ""
    lines: list[str] = []
    if (detail.get("n_judgments") or 0) > 1:
        n = detail["n_judgments"]
        lines += [
            f"Several stored verdicts per question (`{detail.get('field')}`, {n} each): mean "
            "over verdicts, majority vote, and J of each judgment as a run (mean ± sample std "
            "across runs).",
            "",
            "| category | n | mean | majority | "
            + " | ".join(f"run {i + 1}" for i in range(n))
            + " | runs mean ± std |",
            "|---|---:|---:|---:|" + "---:|" * n + "---:|",
        ]
        for key, group in detail["groups"].items():
            if group["count"]:
                runs = " | ".join(_pct(v) for v in group["per_run"]) + " |" * (
                    n - len(group["per_run"])
                )
                lines.append(
                    f"| {label(key)} | {group['count']} | {_pct(group['mean'])} | "
                    f"{_pct(group['majority'])} | {runs} | "
                    f"{_pct(group['runs_mean'])} ± {_pct(group['runs_std'])} |"
                )
    across = detail.get("across_runs")
    if across:
        n_runs = max(len(v["per_run"]) for v in across.values())
        lines += [
            *([""] if lines else []),
            f"Stored J of each of the {n_runs} runs (run files of data.runs, or settings of "
            "one file), mean ± sample std across runs:",
            "",
            "| category | " + " | ".join(f"run {i + 1}" for i in range(n_runs)) + " | mean ± std |",
            "|---|" + "---:|" * n_runs + "---:|",
        ]
        for key, row in across.items():
            if row["mean"] is not None:
                lines.append(
                    f"| {label(key)} | "
                    + " | ".join(_pct(v) for v in row["per_run"])
                    + f" | {_pct(row['mean'])} ± {_pct(row['std'])} |"
                )
    return "\n".join(lines)


def _without_5(count: int) -> str:
    """The note on questions the dataset holds under category 5 and another (empty when none)."""
    if not count:
        return ""
    questions = "question is" if count == 1 else "questions are"
    return (
        f" ({count} {questions} in it under category 5 and another with the same gold answer: "
        "given the other, as the file has no category-5 question)"
    )
