"""Each sweep job against a baseline job, with the compare code (``sweep.baseline``).

For every completed job other than the baseline, :func:`locomo_exp.compare.run_compare`
compares the two run directories (A = the job, B = the baseline) on F1 (the job's
variant), J and stored J; the overall rows (difference in points, 95% conversation
bootstrap interval, Holm p, verdict) go into ``sweep_summary.json``/``.md``.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.sweep.flips import FlipStore, record_flips
from locomo_exp.sweep.job_files import COMPLETED
from locomo_exp.sweep.plan import job_label

if TYPE_CHECKING:
    from locomo_exp.benchmarks.plugin import SweepPlugin

logger = logging.getLogger(__name__)

VS_BASELINE_DIR = "vs_baseline"


def compared_columns(variant: str | None) -> dict[str, str]:
    """Summary column -> compared metric: the job's F1 variant, then the judge metrics.

    Args:
        variant: the jobs' ``f1.variant``; ``None`` (no F1 computed) takes the first
            variant of :data:`~locomo_exp.scoring.specs.F1_SPECS`.

    Returns:
        ``{"f1": "f1_<variant>", "j": "j", "stored_j": "stored_j"}``; the judge columns
        are :data:`~locomo_exp.compare.metrics.JUDGE_METRICS`. A variant the registry no
        longer has gets no ``f1`` column.
    """
    from locomo_exp.compare.metrics import JUDGE_METRICS
    from locomo_exp.scoring.specs import F1_SPECS, UnknownMetricError, f1_variant

    columns: dict[str, str] = {}
    try:
        columns["f1"] = f1_variant(variant or F1_SPECS[0].name).metric
    except UnknownMetricError:
        logger.warning("sweep.baseline: F1 variant %r is not registered; F1 not compared", variant)
    columns.update({m.name: m.name for m in JUDGE_METRICS})
    return columns


def f1_unchanged_by(keys: list[str] | tuple[str, ...]) -> str | None:
    """Why F1 cannot differ between the jobs, or ``None``.

    Every ``judge.*`` setting changes only the judge: when every swept key is one, each
    job scores the same answers with the same F1, so an F1 comparison or plot would only
    show zeros.

    Args:
        keys: the swept keys.

    Returns:
        ``"F1 does not depend on judge.temperature"``, or ``None`` when a swept key may
        change F1 (or nothing is swept).
    """
    if keys and all(str(key).startswith("judge.") for key in keys):
        return f"F1 does not depend on {', '.join(keys)}"
    return None


class BaselineNotFound(ValueError):
    """``sweep.baseline`` names no job of the sweep."""


def baseline_job(rows: list[dict[str, Any]], baseline: str | None) -> dict[str, Any] | None:
    """The row of the baseline job.

    Args:
        rows: sweep summary rows (``job``, ``swept``, ``status``).
        baseline: ``sweep.baseline``: a swept value (``0.5``), a job label
            (``judge.temperature=0.5``) or ``key=value`` pairs joined by ``,``; ``None``
            takes the first job.

    Returns:
        The row, or ``None`` when the sweep has no row.

    Raises:
        BaselineNotFound: ``baseline`` matches no job (the message lists the labels).
    """
    if not rows:
        return None
    if baseline is None or str(baseline).strip() == "":
        return rows[0]
    text = str(baseline).strip()
    for row in rows:
        swept = {k: str(v) for k, v in row["swept"].items()}
        labels = {job_label(swept), ",".join(f"{k}={v}" for k, v in swept.items())}
        if len(swept) == 1:
            labels.add(next(iter(swept.values())))
        if text in labels:
            return row
    known = "; ".join(job_label(r["swept"]) for r in rows)
    raise BaselineNotFound(f"sweep.baseline={text}: no job has this value (jobs: {known})")


def _cell(row: Any) -> dict[str, Any]:
    from locomo_exp.compare.engine import INTERVAL_METHODS

    return {
        "metric": row.metric,
        "group": row.group,
        "n": row.n,
        "diff": row.diff,
        "ci": [b if b == b else None for b in row.headline_ci],  # NaN: None
        "interval_method": INTERVAL_METHODS[row.interval],
        "note": row.note,
        "p_holm": row.p_holm,
        "verdict": row.verdict,
    }


def compare_with_baseline(
    rows: list[dict[str, Any]],
    baseline: str | None,
    sweep_dir: Path,
    *,
    bootstrap_samples: int | None = None,
    permutation_samples: int | None = None,
    store: FlipStore | None = None,
) -> dict[str, Any] | None:
    """Compare every completed job with the baseline job; attach ``vs_baseline`` to rows.

    Args:
        rows: sweep summary rows (modified: each compared row gets ``vs_baseline``:
            column (``f1``, ``j``, ``stored_j``) -> ``{metric, group, n, diff, ci,
            interval_method, note, p_holm, verdict}`` in points (``ci``: the row's headline
            interval, question-level with a ``note`` below
            :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations), A = the job,
            B = the baseline; or
            ``{"error": ...}`` when the comparison is refused), and ``vs_baseline_warnings``:
            the comparison's warnings as ``mode=compare`` prints them
            (:attr:`~locomo_exp.compare.result.CompareResult.warnings`), less the card
            differences in the swept keys themselves.
        baseline: ``sweep.baseline`` (see :func:`baseline_job`).
        sweep_dir: the sweep directory (``vs_baseline/<job>/compare.md`` written there).
        bootstrap_samples: resamples per interval (``None``: ``mode=compare``'s default,
            :class:`~locomo_exp.config.compare.CompareConfig`).
        permutation_samples: sign-flip budget per test (``None``: ``mode=compare``'s).
        store: the sweep's MLflow store: each compared job's flipped verdicts are tagged in
            its traces (:func:`~locomo_exp.sweep.flips.record_flips`, ``row["flips"]``;
            counted, not tagged, when ``None``).

    Returns:
        ``{"job", "label", "method"}`` of the baseline (``method``: the one line of
        :func:`~locomo_exp.compare.engine.interval_method`, the same settings as
        ``mode=compare`` of the two runs, so both give the same interval), or ``None``
        when it did not complete or there is nothing to compare; a refused baseline
        (unknown value) gives ``{"error": ...}``.
    """
    from locomo_exp.compare import CompareConfig, CompareError, run_compare
    from locomo_exp.compare.engine import interval_method

    defaults = CompareConfig()
    samples = defaults.bootstrap_samples if bootstrap_samples is None else bootstrap_samples
    budget = defaults.permutation_samples if permutation_samples is None else permutation_samples

    try:
        base = baseline_job(rows, baseline)
    except BaselineNotFound as error:
        logger.warning("%s", error)
        return {"error": str(error)}
    if base is None or base["status"] != COMPLETED or not base.get("output_dir"):
        return None
    same_f1 = f1_unchanged_by(list(base["swept"]))
    for row in rows:
        if row is base or row["status"] != COMPLETED or not row.get("output_dir"):
            continue
        metrics = compared_columns(row.get("f1_variant") or base.get("f1_variant"))
        if same_f1:  # only judge settings swept: an F1 difference is 0 by construction
            metrics.pop("f1", None)
        cfg = CompareConfig(
            runs=[row["output_dir"], base["output_dir"]],
            metrics=list(metrics.values()),
            bootstrap_samples=samples,
            permutation_samples=budget,
            seed=defaults.seed,
        )
        out_dir = sweep_dir / VS_BASELINE_DIR / str(row["job"])
        try:
            result = run_compare(cfg, out_dir, sweep_dir, plots=False, strict_metrics=False)
        except CompareError as error:
            row["vs_baseline"] = {"error": _refusal(error)}
            continue
        # what mode=compare would print before its table (another judge's stored J...),
        # less the card difference the sweep made on purpose (the swept keys)
        swept = tuple(f"card fields differ: {key}:" for key in row["swept"])
        row["vs_baseline_warnings"] = [
            w for w in result.warnings if not any(part in w for part in swept)
        ]
        found: dict[str, Any] = {}
        for column, metric in metrics.items():
            overall = [r for r in result.rows if r.metric == metric and r.group == "overall"]
            if overall:
                found[column] = _cell(overall[0])
        row["vs_baseline"] = found
        try:  # flipped verdicts: counts, questions.html, MLflow tags (issue 30)
            record_flips(result, row, base, out_dir, store)
        except OSError as error:
            logger.warning("sweep job %s: flipped questions not recorded: %s", row["job"], error)
    return {
        "job": base["job"],
        "label": job_label(base["swept"]),
        "method": interval_method(samples, defaults.seed),
    }


def _refusal(error: Exception) -> str:
    """Why a job was not compared with the baseline, in the sweep's words.

    Two jobs that score different F1 variants measure the same answers with two metrics:
    ``mode=compare``'s refusal offers ``compare.allow_mismatch=true``, which would only
    compare the metrics (docs/sweeps.md), so the sweep says why instead.
    """
    found = re.search(r"f1\.variant: (\S+) vs ([^;)\s]+)", str(error))  # card_mismatches
    if found:
        return (
            f"the jobs score different F1 variants ({found[1]} vs {found[2]}): a "
            "difference between two F1 variants says nothing about the answers"
        )
    return str(error)


def vs_baseline_cells(row: dict[str, Any], column: str) -> list[str]:
    """The three markdown cells (difference, 95% CI, verdict) of one column of a row.

    Returns:
        ``["+3.10", "[+0.50, +5.70]", "A higher"]``; ``["baseline", "", ""]`` for the
        baseline row is the caller's; ``—`` cells when not compared.
    """
    cell = (row.get("vs_baseline") or {}).get(column)
    if not cell:
        return ["—", "—", "—"]
    low, high = cell["ci"]
    bounded = low is not None and high is not None and low == low and high == high
    ci = f"[{low:+.2f}, {high:+.2f}]" if bounded else "n/a"
    if cell.get("note"):  # below the conversation threshold: the question-level interval
        ci += " (questions)"
    verdict = {"A higher": "higher", "B higher": "lower"}.get(cell["verdict"], cell["verdict"])
    return [f"{cell['diff']:+.2f}", ci, verdict]


def plugin_vs_baseline(
    plugin: SweepPlugin, rows: list[dict[str, Any]], baseline: str | None, sweep_dir: Path
) -> dict[str, Any] | None:
    """A benchmark plug-in's sweep: each completed job against the baseline job.

    The sweep chooses the baseline (:func:`baseline_job`); the plug-in pairs each other
    completed job with it (:meth:`~locomo_exp.benchmarks.plugin.SweepPlugin.sweep_vs_baseline`).

    Args:
        plugin: the plug-in whose rows these are.
        rows: the sweep summary rows (the compared ones are modified by the plug-in).
        baseline: ``sweep.baseline``.
        sweep_dir: the sweep directory.

    Returns:
        ``{"job", "label", "method"}`` of the baseline, ``{"error": ...}`` for an unknown
        baseline, or ``None`` when the baseline did not complete.
    """
    try:
        base = baseline_job(rows, baseline)
    except BaselineNotFound as error:
        return {"error": str(error)}
    if base is None or base["status"] != COMPLETED or not base.get("output_dir"):
        return None
    others = [
        row for row in rows
        if row is not base and row["status"] == COMPLETED and row.get("output_dir")
    ]
    method = plugin.sweep_vs_baseline(others, base, sweep_dir)
    return {"job": base["job"], "label": job_label(base["swept"]), "method": method}


__all__ = [
    "VS_BASELINE_DIR",
    "plugin_vs_baseline",
    "BaselineNotFound",
    "baseline_job",
    "compare_with_baseline",
    "compared_columns",
    "f1_unchanged_by",
    "vs_baseline_cells",
]
