"""``run_compare``: the entry point the CLI's ``mode=compare`` calls."""

from __future__ import annotations

import logging
from itertools import combinations
from pathlib import Path

from locomo_exp.compare.engine import CompareRow, apply_holm, compare_pair
from locomo_exp.compare.metrics import COMPARED_BY_NAME, F1_VARIANT_METRICS
from locomo_exp.compare.result import CompareResult, PairInfo
from locomo_exp.compare.run_dirs import (
    CompareError,
    RunData,
    display_names,
    load_run,
    unique_names,
)
from locomo_exp.config.compare import CompareConfig
from locomo_exp.data.match import Matching, match_questions
from locomo_exp.report.card import card_differences, card_mismatches
from locomo_exp.results.checks_read import run_warnings, warning_head

logger = logging.getLogger(__name__)


def _pairs(cfg: CompareConfig, runs: list[RunData]) -> list[tuple[int, int]]:
    if cfg.baseline is None:
        return list(combinations(range(len(runs)), 2))
    base: int | None = None
    text = str(cfg.baseline)
    for i, (given, run) in enumerate(zip(cfg.runs, runs, strict=True)):
        if text in (str(given), run.name, str(run.path)):
            base = i
            break
    if base is None and text.isdigit() and int(text) < len(runs):
        base = int(text)
    if base is None:
        raise CompareError(
            f"compare.baseline={text}: not one of compare.runs ({', '.join(map(str, cfg.runs))})"
        )
    return [(base, j) for j in range(len(runs)) if j != base]


def _refuse_repeated(cfg: CompareConfig, paths: list[Path]) -> None:
    """Refuse a run given twice, and labels that do not name each run once."""
    seen: dict[Path, str] = {}
    for given, path in zip(cfg.runs, paths, strict=True):
        key = path.resolve()
        if key in seen:
            raise CompareError(
                f"compare.runs names {given} twice (as {seen[key]} and {given}): a run compared "
                "with itself measures nothing; give two different runs"
            )
        seen[key] = str(given)
    if cfg.labels is not None:
        labels = [str(label).strip() for label in cfg.labels]
        if len(labels) != len(cfg.runs) or "" in labels or len(set(labels)) != len(labels):
            raise CompareError(
                f"compare.labels: give {len(cfg.runs)} distinct non-empty names, one per run "
                f"in compare.runs (got {list(cfg.labels)})"
            )


def run_names(cfg: CompareConfig, runs: list[RunData]) -> list[str]:
    """Display names: ``compare.labels``, else each run's input file name.

    Input files with the same name get their run directory's name added
    (``answers.json (13-35-16)``); a run without an input path keeps its directory name.
    """
    return display_names(cfg.labels, [r.name for r in runs], [r.summary for r in runs])


def _dropped(cfg: CompareConfig, a: RunData, b: RunData, metrics: list[str]) -> list[str]:
    """Metrics asked for (or, by default, carried by one run) that this pair cannot compare."""
    out = []
    for metric in metrics:
        missing = [run.name for run in (a, b) if metric not in run.values]
        if len(missing) == 1 or (missing and cfg.metrics):
            out.append(f"{metric} not compared: {' and '.join(missing)} has no {metric} values")
    return out


def _marks(mismatches: list[str]) -> dict[str, list[str]]:
    marks: dict[str, list[str]] = {}
    for line in mismatches:
        affected = F1_VARIANT_METRICS if line.startswith("f1.variant") else tuple(COMPARED_BY_NAME)
        for metric in affected:
            marks.setdefault(metric, []).append(line)
    return marks


def flagged_marks(a: RunData, b: RunData) -> list[str]:
    """Marks of a pair's J rows: each run whose own judge checks flagged its J.

    Args:
        a: run A.
        b: run B.

    Returns:
        ``["A's J flagged by its judge checks: J inflated", ...]``; ``[]`` when neither
        run's report has a warning (:func:`~locomo_exp.results.checks_read.run_warnings`).
    """
    out = []
    for role, run in (("A", a), ("B", b)):
        heads = list(dict.fromkeys(warning_head(w) for w in run_warnings(run.summary)))
        if heads:
            out.append(f"{role}'s J flagged by its judge checks: {', '.join(heads)}")
    return out


def run_compare(
    cfg: CompareConfig,
    output_dir: Path,
    start_dir: Path,
    plots: bool = True,
    *,
    strict_metrics: bool = True,
) -> CompareResult:
    """Compare two or more runs and write ``compare.md``, ``compare.json`` and forest plots.

    Everything that can refuse the comparison (missing or malformed runs, disjoint
    question sets, cards mixing F1 variants, question sets or answer keys without
    ``allow_mismatch``) is checked before any statistic is computed.

    Args:
        cfg: the comparison settings.
        output_dir: where the outputs go (created).
        start_dir: directory relative run paths are resolved against (the user's
            working directory when the command started).
        plots: draw the forest plots.
        strict_metrics: refuse a metric of ``compare.metrics`` that no run has (the
            user's list); ``False`` skips it (a sweep's fixed list of columns).

    Returns:
        :class:`CompareResult` with every row and the written paths.

    Raises:
        CompareError: one line naming the run (and file/field) that prevents the
            comparison.
    """
    if len(cfg.runs) < 2:
        raise CompareError(f"compare.runs: give at least two run directories, got {len(cfg.runs)}")
    unknown = [m for m in (cfg.metrics or []) if m not in COMPARED_BY_NAME]
    if unknown:
        raise CompareError(
            f"compare.metrics: unknown {', '.join(unknown)} "
            f"(choose from {', '.join(COMPARED_BY_NAME)})"
        )
    paths = [Path(p) if Path(p).is_absolute() else Path(start_dir) / p for p in cfg.runs]
    _refuse_repeated(cfg, paths)
    runs = [load_run(p, n) for p, n in zip(paths, unique_names(paths), strict=True)]
    for run, name in zip(runs, run_names(cfg, runs), strict=True):
        run.name = name
    metrics = list(cfg.metrics or COMPARED_BY_NAME)
    absent = [m for m in cfg.metrics or [] if not any(m in run.values for run in runs)]
    if absent and strict_metrics:
        raise CompareError(
            f"compare.metrics: no run has {', '.join(absent)} (the runs carry "
            f"{', '.join(sorted({m for run in runs for m in run.values})) or 'nothing'})"
        )
    prepared: list[tuple[int, int, Matching, PairInfo, dict[str, list[str]]]] = []
    for i, j in _pairs(cfg, runs):
        a, b = runs[i], runs[j]
        matching = match_questions(a.rows, b.rows)
        if not matching.pairs:
            raise CompareError(
                f"runs {a.name} and {b.name} share no question ({len(a.rows)} in {a.name}, "
                f"{len(b.rows)} in {b.name}): nothing to compare"
            )
        mismatches = card_mismatches(a.card, b.card)
        if matching.gold_mismatches:  # another answer key, whatever the cards say
            mismatches.append(
                f"ground truths differ for {matching.gold_mismatches} of {len(matching.pairs)} "
                "shared questions (another answer key)"
            )
        if mismatches and not cfg.allow_mismatch:
            raise CompareError(
                f"runs {a.name} and {b.name} are not comparable ({'; '.join(mismatches)}); "
                "set compare.allow_mismatch=true to compare anyway (rows are marked)"
            )
        info = PairInfo(
            a.name,
            b.name,
            matching.counts(),
            matching.overlap < cfg.min_overlap,
            mismatches,
            card_differences(a.card, b.card),
        )
        info.dropped = _dropped(cfg, a, b, metrics) if strict_metrics else []
        marks = _marks(mismatches)
        flagged = flagged_marks(a, b)  # a J verdict between flagged J's says so beside it
        if flagged:
            marks["j"] = [*marks.get("j", []), *flagged]
        prepared.append((i, j, matching, info, marks))
    rows: list[CompareRow] = []
    for i, j, matching, _, marks in prepared:
        rows += compare_pair(
            runs[i],
            runs[j],
            matching,
            metrics,
            bootstrap_samples=cfg.bootstrap_samples,
            permutation_samples=cfg.permutation_samples,
            seed=cfg.seed,
            alpha=cfg.alpha,
            marks=marks,
        )
    apply_holm(rows, cfg.alpha)
    names = {str(k): str(v) for k, v in (runs[0].summary.get("category_names") or {}).items()}
    settings = {
        "runs": [str(p) for p in cfg.runs],
        "allow_mismatch": cfg.allow_mismatch,
        "bootstrap_samples": cfg.bootstrap_samples,
        "permutation_samples": cfg.permutation_samples,
        "seed": cfg.seed,
        "baseline": cfg.baseline,
        "alpha": cfg.alpha,
        "min_overlap": cfg.min_overlap,
        "metrics": metrics,
        "labels": [r.name for r in runs],
        "units": "points (0-100); differences are A - B",
    }
    result = CompareResult(
        runs, [p[3] for p in prepared], rows, cfg.alpha, cfg.min_overlap, names, settings=settings
    )
    from locomo_exp.compare.render import write_outputs

    result.outputs = write_outputs(result, Path(output_dir), plots=plots)
    return result


__all__ = ["CompareResult", "PairInfo", "run_compare"]
