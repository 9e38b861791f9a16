"""Comparing LongMemEval runs: questions paired by ``question_id``, verdicts on 0-1.

LongMemEval's questions are not nested in a few conversations as LoCoMo's are, so the unit of
resampling is the question: each figure's difference (A - B, percentage points) has a paired
question-level percentile bootstrap interval (:func:`locomo_exp.stats.bootstrap.
question_bootstrap_mean_diff`; for the task average, a paired bootstrap stratified by type), and
each accuracy an exact McNemar test (:func:`locomo_exp.stats.paired.mcnemar_exact`). The six
per-type tests are one family: their p-values are Holm-adjusted (Holm 1979); overall, task
average and abstention are reported with their raw p-values.

A run's verdict per question is this project's judge when it ran (``j_mean`` / 100: the mean of
its runs' yes/no verdicts, 0.5 for one yes and one no, as the run's own accuracies count it),
else the answer file's stored ``autoeval_label`` (0 or 1). The accuracies and their differences
are means of these; McNemar's test takes a question as a yes when at least half its runs said
yes (``j_mean`` >= 50).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from locomo_exp.benchmarks.longmemeval import facts as lme
from locomo_exp.compare.run_dirs import CompareError, display_names, unique_names
from locomo_exp.results.checks_read import run_warnings
from locomo_exp.results.run_log import check_version
from locomo_exp.stats.bootstrap import question_bootstrap_mean_diff
from locomo_exp.stats.paired import holm_adjust, mcnemar_exact


@dataclass
class LmeRun:
    """One LongMemEval run directory, as compared.

    Attributes:
        path: the run directory.
        name: its display name (the directory's name when loaded; the comparison names it
            by its answer file, :func:`compare_lme_runs`).
        summary: its ``summary.json``.
        verdicts: question id -> verdict on 0-1 (a mean of judge runs, or 0/1).
        types: question id -> ``question_type``.
        source: ``judge`` or ``stored``, with the judge model.
    """

    path: Path
    name: str
    summary: dict[str, Any]
    verdicts: dict[str, float]
    types: dict[str, str]
    source: str


def is_lme_run(run_dir: Path) -> bool:
    """Whether a run directory holds a LongMemEval run (its summary names the benchmark)."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and summary.get("benchmark") == lme.NAME


def load_lme_run(run_dir: Path) -> LmeRun:
    """Read a LongMemEval run directory (``summary.json``, ``scores.jsonl``).

    Raises:
        CompareError: one line naming the directory when a file is missing or has no verdicts.
    """
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        lines = (run_dir / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as error:
        raise CompareError(f"{run_dir}: not a readable LongMemEval run ({error})") from None
    try:
        check_version(summary, str(run_dir / "summary.json"))  # a newer layout: one line
    except ValueError as error:
        raise CompareError(str(error)) from None
    headline = summary.get("headline")
    if not headline:
        raise CompareError(f"{run_dir}: has no verdicts (J not measured); nothing to compare")
    verdicts: dict[str, float] = {}
    types: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        qid = str(row["question_id"])
        types[qid] = str(row["question_type"])
        if headline["source"] == "judge":
            if row.get("j_mean") is not None:
                verdicts[qid] = float(row["j_mean"]) / 100.0
        elif row.get("stored_label") is not None:
            verdicts[qid] = float(bool(row["stored_label"]))
    source = f"{headline['source']} ({headline['judge_model']})"
    return LmeRun(run_dir, run_dir.name, summary, verdicts, types, source)


@dataclass
class LmeCompareRow:
    """One figure of one pair.

    Attributes:
        figure: ``overall``, ``task_avg``, ``abstention`` or a question type.
        n: paired questions in it.
        a: accuracy of run A (0-1); b: of run B.
        diff: A - B in points (0-100).
        ci: the bootstrap interval of ``diff`` (points).
        mcnemar_p: exact McNemar p-value (``None`` for the task average).
        discordant: (only A correct, only B correct).
        holm_p: Holm-adjusted p over the six types (types only).
    """

    figure: str
    n: int
    a: float
    b: float
    diff: float
    ci: tuple[float, float]
    mcnemar_p: float | None
    discordant: tuple[int, int] | None
    holm_p: float | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields."""
        out = dict(self.__dict__)
        out["ci"] = list(self.ci)
        out["discordant"] = list(self.discordant) if self.discordant else None
        return out


@dataclass
class LmePairComparison:
    """Run A against run B.

    Attributes:
        a: run A's name; b: run B's.
        paired: question ids both runs judged.
        only_a: ids judged in A only; only_b: in B only.
        rows: one :class:`LmeCompareRow` per figure.
        warnings: what makes the difference harder to read (different judges, datasets).
    """

    a: str
    b: str
    paired: int
    only_a: int
    only_b: int
    rows: list[LmeCompareRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields."""
        out = dict(self.__dict__)
        out["rows"] = [r.to_json() for r in self.rows]
        return out


def _row(figure: str, a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> LmeCompareRow:
    interval = question_bootstrap_mean_diff(a * 100.0, b * 100.0, n_resamples=samples, seed=seed)
    yes = lme.ACCEPT_AT / 100.0  # McNemar's outcomes are yes/no: at least half the runs
    test = mcnemar_exact(a >= yes, b >= yes)
    return LmeCompareRow(
        figure, int(a.size), float(a.mean()), float(b.mean()), interval.estimate,
        (interval.low, interval.high), test.pvalue, test.discordant,
    )


def task_avg_row(
    a: np.ndarray, b: np.ndarray, types: list[str], samples: int, seed: int
) -> LmeCompareRow:
    """The task average's difference with a paired bootstrap stratified by type.

    Each resample draws every type's questions with replacement (pairs kept together) and
    averages the per-type mean differences over the types present.
    """
    labels = np.asarray(types)
    groups = [np.flatnonzero(labels == name) for name in lme.QUESTION_TYPES]
    groups = [g for g in groups if g.size]
    diff = (a - b) * 100.0
    estimate = float(np.mean([diff[g].mean() for g in groups]))
    rng = np.random.default_rng(seed)
    draws = np.zeros(samples)
    for g in groups:
        idx = rng.integers(0, g.size, size=(samples, g.size))
        draws += diff[g][idx].mean(axis=1)
    draws /= len(groups)
    low, high = np.quantile(draws, [0.025, 0.975])
    acc_a = float(np.mean([a[g].mean() for g in groups]))
    acc_b = float(np.mean([b[g].mean() for g in groups]))
    return LmeCompareRow(
        "task_avg", int(a.size), acc_a, acc_b, estimate, (float(low), float(high)), None, None
    )


JUDGE_FIELDS = (
    "provider", "endpoint", "model", "model_snapshot", "protocol", "prompt_version",
    "template_sha256", "temperature", "max_tokens", "runs",
)
"""The recorded judge settings two judged runs are compared on (``summary.json``'s
``judge.settings``; ``template_sha256`` is the template file's hash, protocol ``template``)."""


def judge_record(run: LmeRun) -> dict[str, Any] | None:
    """What a run records of the judge behind its verdicts, or ``None`` when it records nothing.

    Args:
        run: a loaded run.

    Returns:
        :data:`JUDGE_FIELDS` -> value (``None`` when absent) from ``summary.json``'s
        ``judge.settings`` when the verdicts are this project's judge's; ``None`` for the
        answer file's stored verdicts (only a model name is stored, not the prompt).
    """
    judge = run.summary.get("judge") or {}
    if not str(run.source).startswith("judge") or not isinstance(judge.get("settings"), dict):
        return None
    settings = dict(judge["settings"])
    template = settings.get("template")
    settings["template_sha256"] = template.get("sha256") if isinstance(template, dict) else None
    return {key: settings.get(key) for key in JUDGE_FIELDS}


def judge_warning(run_a: LmeRun, run_b: LmeRun) -> str | None:
    """One line saying what is known of the two runs' judges, or ``None`` when nothing differs.

    Where both runs record their judge (this project's judge ran), the recorded settings
    (:data:`JUDGE_FIELDS`) are compared and the line names each that differs. Where a run's
    verdicts are the answer file's stored labels, only the model name it stores is known:
    the line says so and that the prompts/models may differ, not verified.

    Args:
        run_a: run A.
        run_b: run B.

    Returns:
        The warning, or ``None`` when both records agree on every field (or both runs'
        stored verdicts name the same model).
    """
    mix = (
        "a difference may mix the systems with their judges: re-judge both with one judge "
        "(scorer=judge, the same settings) for a like-for-like comparison"
    )
    rec_a, rec_b = judge_record(run_a), judge_record(run_b)
    if rec_a is not None and rec_b is not None:
        differ = [
            f"{key} {rec_a[key]} vs {rec_b[key]}"
            for key in JUDGE_FIELDS
            if rec_a[key] != rec_b[key]
        ]
        if not differ:
            return None
        return f"the recorded judges differ: {'; '.join(differ)}: {mix}"
    if run_a.source == run_b.source:  # both stored, the same model named
        return None
    return (
        f"{run_a.name}'s verdicts are {_who(run_a)}, {run_b.name}'s {_who(run_b)}: the "
        f"judges' prompts/models may differ; not verified (stored labels record only a model "
        f"name); {mix}"
    )


def _who(run: LmeRun) -> str:
    """``this project's judge (<model>, protocol <p>)`` or ``stored labels naming <model>``."""
    headline = run.summary.get("headline") or {}
    model = headline.get("judge_model")
    if headline.get("source") == "judge":
        return f"this project's judge ({model})"
    return f"stored labels naming {model}"


def _warnings(run_a: LmeRun, run_b: LmeRun) -> list[str]:
    out = []
    judges = judge_warning(run_a, run_b)
    if judges:
        out.append(judges)
    for role, run in (("A", run_a), ("B", run_b)):  # what each run's own report opens with
        out += [
            f"{role} ({run.name}): its verdicts are flagged by its own judge checks (a "
            f"difference with this run is not trustworthy): {warning}"
            for warning in run_warnings(run.summary)
        ]
    ref_a = run_a.summary["input"]["reference"]
    ref_b = run_b.summary["input"]["reference"]
    if ref_a["sha256"] != ref_b["sha256"]:
        out.append(
            f"different dataset files (variant {lme.variant_label(ref_a['variant'])} vs "
            f"{lme.variant_label(ref_b['variant'])}, "
            f"sha256 {ref_a['sha256'][:12]} vs {ref_b['sha256'][:12]})"
        )
    return out


def compare_lme_pair(
    run_a: LmeRun, run_b: LmeRun, *, bootstrap_samples: int = 2000, seed: int = 0
) -> LmePairComparison:
    """Compare two LongMemEval runs on the questions both judged.

    Args:
        run_a: run A.
        run_b: run B.
        bootstrap_samples: resamples of each interval.
        seed: seed of every resampling (each figure gets its own offset).

    Returns:
        :class:`LmePairComparison` (differences in points, A - B).

    Raises:
        CompareError: when the runs share no judged question.
    """
    shared = [qid for qid in run_a.verdicts if qid in run_b.verdicts]
    if not shared:
        raise CompareError(f"{run_a.name} and {run_b.name} share no judged question_id")
    a = np.array([run_a.verdicts[q] for q in shared], dtype=float)
    b = np.array([run_b.verdicts[q] for q in shared], dtype=float)
    types = [run_a.types[q] for q in shared]
    result = LmePairComparison(
        run_a.name, run_b.name, len(shared),
        len(set(run_a.verdicts) - set(run_b.verdicts)),
        len(set(run_b.verdicts) - set(run_a.verdicts)),
        warnings=_warnings(run_a, run_b),
    )
    result.rows.append(_row("overall", a, b, bootstrap_samples, seed))
    result.rows.append(task_avg_row(a, b, types, bootstrap_samples, seed + 1))
    abstention = np.array([lme.is_abstention(q) for q in shared])
    if abstention.any():
        result.rows.append(_row("abstention", a[abstention], b[abstention],
                                bootstrap_samples, seed + 2))
    type_rows = []
    labels = np.asarray(types)
    for offset, name in enumerate(lme.QUESTION_TYPES):
        mask = labels == name
        if mask.any():
            type_rows.append(_row(name, a[mask], b[mask], bootstrap_samples, seed + 3 + offset))
    for row, adjusted in zip(
        type_rows, holm_adjust([r.mcnemar_p for r in type_rows]), strict=True
    ):
        row.holm_p = adjusted
    result.rows += type_rows
    return result


def compare_lme_runs(
    run_dirs: list[Path],
    *,
    bootstrap_samples: int = 2000,
    seed: int = 0,
    labels: Sequence[Any] | None = None,
) -> list[LmePairComparison]:
    """Compare the first run with every other (or the two given).

    Runs are named as LoCoMo comparisons name them (:func:`~.run_dirs.display_names`):
    ``compare.labels`` when given, else each run's answer file name (with the run
    directory's name added when two files share a name).

    Args:
        run_dirs: the run directories, the first compared with each other one.
        bootstrap_samples: resamples of each interval.
        seed: seed of every resampling.
        labels: ``compare.labels``, one distinct name per run, or ``None``.

    Raises:
        CompareError: fewer than two runs, a run that is not a LongMemEval run, or labels
            that are not one distinct name per run.
    """
    if len(run_dirs) < 2:
        raise CompareError("compare.runs needs at least two LongMemEval run directories")
    for path in run_dirs:
        if not is_lme_run(path):
            raise CompareError(
                f"{path}: not a LongMemEval run (its summary.json does not name benchmark "
                "longmemeval); LongMemEval and LoCoMo runs are not compared with each other"
            )
    if labels is not None and (
        len(labels) != len(run_dirs) or len({str(x).strip() for x in labels} - {""}) != len(labels)
    ):
        raise CompareError(
            f"compare.labels: give {len(run_dirs)} distinct non-empty names, one per run in "
            f"compare.runs (got {list(labels)})"
        )
    runs = [load_lme_run(p) for p in run_dirs]
    names = display_names(
        labels, unique_names(list(run_dirs)), [run.summary for run in runs]
    )
    runs = [replace(run, name=name) for run, name in zip(runs, names, strict=True)]
    return [
        compare_lme_pair(runs[0], other, bootstrap_samples=bootstrap_samples, seed=seed)
        for other in runs[1:]
    ]


__all__ = [
    "LmeCompareRow",
    "LmePairComparison",
    "JUDGE_FIELDS",
    "LmeRun",
    "compare_lme_pair",
    "compare_lme_runs",
    "is_lme_run",
    "judge_record",
    "judge_warning",
    "load_lme_run",
    "task_avg_row",
]
