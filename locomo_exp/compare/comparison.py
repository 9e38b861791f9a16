"""``run_compare``: the entry point the CLI's ``mode=compare`` calls."""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from locomo_exp.compare.engine import CompareRow, apply_holm, compare_pair
from locomo_exp.compare.run_dirs import (
    METRICS,
    METRICS_BY_NAME,
    CompareError,
    RunData,
    load_run,
    unique_names,
)
from locomo_exp.config.compare import CompareConfig
from locomo_exp.data.match import Matching, match_questions
from locomo_exp.report.card import card_differences, card_mismatches

logger = logging.getLogger(__name__)

F1_METRICS = ("f1_locomo", "f1_squad", "f1_mem0", "bleu1")


@dataclass
class PairInfo:
    """One compared pair: its matching counts and card checks.

    Attributes:
        run_a, run_b: display names (differences are A - B).
        counts: :meth:`Matching.counts` (shared, only_a, only_b, overlap, matched_by...).
        low_overlap: overlap below ``min_overlap``.
        mismatches: blocking card differences (present only with ``allow_mismatch``).
        differences: every differing card field.
        forest_plot: the pair's PNG file name, once written.
    """

    run_a: str
    run_b: str
    counts: dict[str, Any]
    low_overlap: bool
    mismatches: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    forest_plot: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return dict(self.__dict__)


@dataclass
class CompareResult:
    """A finished comparison.

    Attributes:
        runs: the loaded runs, in ``compare.runs`` order.
        pairs: compared pairs.
        rows: every row (after Holm), pair by pair.
        alpha: level of the verdicts; min_overlap: overlap flag threshold.
        category_names: display names keyed by ``"1"``..``"5"`` (from run A's summary).
        outputs: written files (``json``, ``markdown``, ``forest_<k>``).
        settings: the comparison's settings (for ``compare.json``).
    """

    runs: list[RunData]
    pairs: list[PairInfo]
    rows: list[CompareRow]
    alpha: float
    min_overlap: float
    category_names: dict[str, str]
    outputs: dict[str, Path] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``compare.json`` content (values in points, 0-100)."""
        return {
            "settings": self.settings,
            "runs": [
                {
                    "name": r.name,
                    "path": str(r.path),
                    "n_questions": len(r.rows),
                    "card": r.card,
                    "notes": r.notes,
                }
                for r in self.runs
            ],
            "pairs": [p.to_dict() for p in self.pairs],
            "rows": [r.to_dict() for r in self.rows],
        }

    def mlflow_metrics(self) -> dict[str, float]:
        """Finite differences, bounds and adjusted p-values as MLflow metric names.

        Names: ``compare/<A>_vs_<B>/<metric>/<group>/diff`` (``ci_low``, ``ci_high``,
        ``p_holm``), sanitised to MLflow's character set; values in points.
        """
        out: dict[str, float] = {}
        for row in self.rows:
            prefix = re.sub(
                r"[^A-Za-z0-9_\-. /:]+",
                "_",
                f"compare/{row.run_a}_vs_{row.run_b}/{row.metric}/{row.group}",
            )
            for name, value in (
                ("diff", row.diff),
                ("ci_low", row.cluster_ci[0]),
                ("ci_high", row.cluster_ci[1]),
                ("p_holm", row.p_holm),
            ):
                if value is not None and math.isfinite(value):
                    out[f"{prefix}/{name}"[:250]] = float(value)
        return out

    def mlflow_tags(self) -> dict[str, str]:
        """``compare.run.<i>`` -> run directory, and the MLflow run ids the cards carry."""
        tags = {f"compare.run.{i}": str(r.path) for i, r in enumerate(self.runs)}
        for i, run in enumerate(self.runs):
            mlflow_id = (
                (run.card.get("mlflow") or {}).get("run_id") if isinstance(run.card, dict) else None
            )
            if mlflow_id:
                tags[f"compare.mlflow_run.{i}"] = str(mlflow_id)
        return tags


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


def _marks(mismatches: list[str]) -> dict[str, list[str]]:
    marks: dict[str, list[str]] = {}
    for line in mismatches:
        affected = F1_METRICS[:3] if line.startswith("f1.variant") else [m.name for m in METRICS]
        for metric in affected:
            marks.setdefault(metric, []).append(line)
    return marks


def run_compare(
    cfg: CompareConfig, output_dir: Path, start_dir: Path, plots: bool = True
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

    Returns:
        :class:`CompareResult` with every row and the written paths.

    Raises:
        CompareError: one line naming the run (and file/field) that prevents the
            comparison.
    """
    if len(cfg.runs) < 2:
        raise CompareError(f"compare.runs: give at least two run directories, got {len(cfg.runs)}")
    unknown = [m for m in (cfg.metrics or []) if m not in METRICS_BY_NAME]
    if unknown:
        raise CompareError(
            f"compare.metrics: unknown {', '.join(unknown)} "
            f"(choose from {', '.join(METRICS_BY_NAME)})"
        )
    paths = [Path(p) if Path(p).is_absolute() else Path(start_dir) / p for p in cfg.runs]
    runs = [load_run(p, n) for p, n in zip(paths, unique_names(paths), strict=True)]
    metrics = list(cfg.metrics or [m.name for m in METRICS])
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
        if info.low_overlap:
            logger.warning(
                "%s vs %s: only %.1f%% of questions shared", a.name, b.name, 100 * matching.overlap
            )
        prepared.append((i, j, matching, info, _marks(mismatches)))
    rows: list[CompareRow] = []
    for k, (i, j, matching, _, marks) in enumerate(prepared):
        rows += compare_pair(
            runs[i],
            runs[j],
            matching,
            metrics,
            bootstrap_samples=cfg.bootstrap_samples,
            permutation_samples=cfg.permutation_samples,
            seed=cfg.seed,
            pair_index=k,
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
        "units": "points (0-100); differences are A - B",
    }
    result = CompareResult(
        runs, [p[3] for p in prepared], rows, cfg.alpha, cfg.min_overlap, names, settings=settings
    )
    from locomo_exp.compare.render import write_outputs

    result.outputs = write_outputs(result, Path(output_dir), plots=plots)
    return result


__all__ = ["CompareResult", "PairInfo", "run_compare"]
