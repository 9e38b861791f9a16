"""``mode=compare`` of LongMemEval run directories: compare, write ``compare.md``/``.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.benchmarks.longmemeval.compare import compare_lme_runs, is_lme_run
from locomo_exp.benchmarks.longmemeval.compare_report import render_lme_compare
from locomo_exp.config import CompareConfig, ExperimentConfig
from locomo_exp.report.run_dir import atomic_write_text


@dataclass
class LmeCompareJob:
    """A finished LongMemEval comparison.

    Attributes:
        pairs: each pair's comparison as JSON.
        markdown: path of ``compare.md``; json_path: of ``compare.json``.
        run_id: the comparison's MLflow run, or ``None`` with tracking off.
    """

    pairs: list[dict[str, Any]]
    markdown: Path
    json_path: Path
    run_id: str | None = None


def compare_from_config(cfg: ExperimentConfig, output_dir: Path, start_dir: Path) -> str:
    """``mode=compare`` of LongMemEval runs: compare, write, track; the console's text.

    Args:
        cfg: the typed config (``compare`` node, ``tracking``).
        output_dir: the Hydra run directory (``compare.md``, ``compare.json``).
        start_dir: the directory relative run paths are resolved against.

    Returns:
        The headline lines, where ``compare.md`` is and the MLflow run (one string).

    Raises:
        locomo_exp.compare.CompareError: runs that cannot be compared (one line).
        ValueError: no LongMemEval run among ``compare.runs``.
    """
    from locomo_exp import tracking
    from locomo_exp.benchmarks.longmemeval.compare_report import console_lines

    run_dirs = lme_run_dirs(cfg.compare, start_dir)
    if run_dirs is None:
        raise ValueError("compare.runs: none of them is a LongMemEval run")
    uri = (
        tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        if cfg.tracking.enabled
        else None
    )
    job = run_lme_compare(
        cfg.compare, run_dirs, output_dir, tracking_uri=uri,
        experiment=cfg.tracking.experiment, run_name=cfg.tracking.run_name,
    )
    lines = [console_lines(job.pairs), f"\nComparison: {job.markdown}"]
    if job.run_id:
        lines.append(f"MLflow: run {job.run_id} in experiment '{cfg.tracking.experiment}'")
    return "\n".join(lines)


def lme_run_dirs(cfg: CompareConfig, start_dir: Path) -> list[Path] | None:
    """The run directories of ``compare.runs`` when any is a LongMemEval run, else ``None``."""
    paths = [Path(r) if Path(r).is_absolute() else start_dir / r for r in map(str, cfg.runs)]
    return paths if any(is_lme_run(p) for p in paths) else None


def run_lme_compare(
    cfg: CompareConfig,
    run_dirs: list[Path],
    output_dir: Path,
    *,
    tracking_uri: str | None = None,
    experiment: str = "locomo_exp",
    run_name: str | None = None,
) -> LmeCompareJob:
    """Compare LongMemEval runs (the first with each other), write and log the outputs.

    With ``tracking_uri`` the comparison is one MLflow run: metrics
    ``lme_compare/<B>/<figure>_diff`` (points, A - B) with ``_ci_low``/``_ci_high`` and
    ``_mcnemar_p``, and ``compare.md``/``compare.json`` as artifacts.

    Raises:
        locomo_exp.compare.CompareError: a run that is not a LongMemEval run, or no shared
            question (one line).
    """
    pairs = [
        p.to_json()
        for p in compare_lme_runs(
            run_dirs, bootstrap_samples=cfg.bootstrap_samples, seed=cfg.seed, labels=cfg.labels
        )
    ]
    output_dir.mkdir(parents=True, exist_ok=True)
    markdown = atomic_write_text(output_dir / "compare.md", render_lme_compare(pairs))
    body = {"benchmark": "longmemeval", "runs": [str(p) for p in run_dirs], "pairs": pairs}
    json_path = atomic_write_text(
        output_dir / "compare.json", json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    )
    job = LmeCompareJob(pairs, markdown, json_path)
    if tracking_uri is not None:
        from locomo_exp import tracking
        from locomo_exp.benchmarks.longmemeval.tracking import compare_metrics

        names = " vs ".join([pairs[0]["a"], *(p["b"] for p in pairs)])
        spec = tracking.RunSpec(
            tracking_uri=tracking_uri, experiment=experiment,
            run_name=run_name or f"compare · {names}",
            tags={"benchmark": "longmemeval", "mode": "compare"},
        )
        with tracking.mlflow_run(spec) as run:
            tracking.log_metrics(compare_metrics(pairs))
            tracking.log_artifacts([markdown, json_path])
            job.run_id = run.info.run_id
    return job


__all__ = ["LmeCompareJob", "compare_from_config", "lme_run_dirs", "run_lme_compare"]
