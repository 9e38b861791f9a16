"""A pipeline benchmark's ``mode=compare`` beyond its own statistics: flips, page, MLflow run.

Whatever a plug-in's own comparison writes (``compare.json``, ``compare.md``), the same
generic code as LoCoMo's ``mode=compare`` then (issue 29 "MLflow run for its compare",
issue 30 §2/§3):

- reads each run's ``scores.jsonl`` as question rows (the steps' ``question_rows`` hook, the
  rows the run's own ``questions.html`` and traces show) and pairs them by question id;
- finds the flips (:func:`locomo_exp.compare.questions.pair_flips`: the headline verdict's,
  or the headline score's for rows without a verdict) and writes ``questions.html`` (every
  shared question, side by side);
- with tracking on, logs the comparison as its own MLflow run (params: the runs compared
  and the resampling settings; metrics: each group's difference, interval and p in points,
  the flip counts; artifacts: the files) and tags the flips in the compared runs' traces
  (``flipped=true``, ``flip=gained|lost``; runs logged with ``tracking.questions=true``),
  printing the compare address filtered to them. ``tracking=none`` writes no MLflow.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.benchmarks.file_plugin import compare_run_dirs
from locomo_exp.benchmarks.plugin import PluginRun
from locomo_exp.compare.questions import PairFlips, pair_flips, pairs_by_id, write_pairs_page

if TYPE_CHECKING:
    from locomo_exp.benchmarks.plugin import ComparePlugin
    from locomo_exp.benchmarks.steps import JobSteps
    from locomo_exp.config import ExperimentConfig
    from locomo_exp.results.questions import QuestionRow

log = logging.getLogger(__name__)


def judge_model_of(run_dir: Path) -> str | None:
    """The judge model a run's ``summary.json`` names (``judge.model``), else ``None``."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    judge = summary.get("judge") if isinstance(summary, dict) else None
    model = judge.get("model") if isinstance(judge, dict) else None
    return str(model) if model else None


def run_question_rows(steps: JobSteps[Any, Any], run_dir: Path) -> list[QuestionRow]:
    """A finished run's ``scores.jsonl`` as question rows (the steps' ``question_rows``).

    Args:
        steps: the benchmark's hooks.
        run_dir: the run directory.

    Returns:
        One row per question, as the run's own ``questions.html`` shows it.

    Raises:
        ValueError: no ``scores.jsonl``, a line that is not JSON, or a row the hook cannot
            read (one line naming the file and the line).
    """
    path = run_dir / "scores.jsonl"
    if not path.is_file():
        raise ValueError(f"{path}: missing; the comparison's questions need the run's "
                         "scores.jsonl")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as error:
                raise ValueError(f"{path}: line {number}: not JSON ({error})") from None
    try:
        return steps.question_rows(rows, judge_model_of(run_dir))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: a row the {steps.title} questions cannot read "
                         f"({type(error).__name__}: {error})") from None


def labels_of(cfg: ExperimentConfig, dirs: list[Path]) -> tuple[str, str]:
    """The two runs' display names: ``compare.labels``, else the directories' names."""
    given = list(cfg.compare.labels or [])
    if len(given) == len(dirs) == 2:
        return str(given[0]), str(given[1])
    return dirs[0].name, dirs[1].name


def compare_and_track(
    plugin: ComparePlugin, steps: JobSteps[Any, Any], cfg: ExperimentConfig,
    output_dir: Path, start_dir: Path, *, log_run: bool = True,
) -> PluginRun:
    """The plug-in's comparison, then its flips, ``questions.html`` and MLflow run.

    Args:
        plugin: the plug-in (its ``compare`` writes ``compare.json`` and ``compare.md``).
        steps: its hooks (``question_rows``).
        cfg: the typed config (``compare.*``, ``tracking.*``).
        output_dir: the comparison's directory (the stage when it replaces an earlier one).
        start_dir: the directory relative paths are resolved against.
        log_run: log the comparison's own MLflow run; ``False`` for a plug-in whose
            ``compare`` logs one itself (the flips are tagged in the compared runs either way).

    Returns:
        The console: the plug-in's, then where every question is, the flips (and their
        MLflow address), the MLflow run; the plug-in's ``body``.

    Raises:
        ValueError: as the plug-in's ``compare``; a run whose ``scores.jsonl`` the
            questions cannot read.
        TrackingStoreError: the store cannot be opened (checked before anything is read
            or written).
        OSError: an output cannot be written.
    """
    uri = None
    if cfg.tracking.enabled:
        from locomo_exp import tracking
        from locomo_exp.tracking.preflight import check_tracking_uri

        uri = tracking.resolve_tracking_uri(cfg.tracking.uri, start_dir)
        check_tracking_uri(uri)  # one line now, before any file is read or written
    dirs = compare_run_dirs(cfg, start_dir)
    done = plugin.compare(cfg, output_dir, start_dir)  # refuses anything but two runs
    name_a, name_b = labels_of(cfg, dirs)
    matched = pairs_by_id(run_question_rows(steps, dirs[0]), run_question_rows(steps, dirs[1]))
    found = pair_flips(name_a, name_b, matched)
    page = write_pairs_page(output_dir, f"compare {name_a} vs {name_b} · {steps.title}",
                            [(name_a, name_b, matched)])
    lines = [done.console, f"Every question: {page}",
             f"Flipped verdicts {name_b} vs {name_a}: {found.gained} gained, {found.lost} lost"]
    if uri is not None:
        lines += _track(steps, cfg, dirs, found, output_dir, uri, done.body,
                        log_run=log_run)
    return PluginRun(console="\n".join(lines), output_dir=output_dir,
                     exit_status=done.exit_status, body=done.body)


def comparison_params(steps: JobSteps[Any, Any], cfg: ExperimentConfig, dirs: list[Path],
                      labels: tuple[str, str]) -> dict[str, str]:
    """The comparison run's params: the benchmark, the runs compared, the resampling."""
    return {
        "benchmark": steps.name,
        **{f"compare.run.{i}": str(path) for i, path in enumerate(dirs)},
        **{f"compare.label.{i}": label for i, label in enumerate(labels)},
        "compare.bootstrap_samples": str(cfg.compare.bootstrap_samples),
        "compare.permutation_samples": str(cfg.compare.permutation_samples),
        "compare.seed": str(cfg.compare.seed),
    }


def _track(steps: JobSteps[Any, Any], cfg: ExperimentConfig, dirs: list[Path],
           found: PairFlips, output_dir: Path, uri: str, body: Mapping[str, Any] | None, *,
           log_run: bool) -> list[str]:
    """Log the comparison run (``log_run``), tag the flips; returns the console lines it adds.

    The metrics come from ``body``, what the plug-in's ``compare`` wrote to
    ``compare.json`` (its :attr:`PluginRun.body`); the file is not read back. A plug-in
    that gives no body gets the flips' metrics only, and a warning saying so.
    """
    from locomo_exp import tracking
    from locomo_exp.tracking.compare_run import log_comparison, plugin_comparison_metrics

    labels = (found.run_a, found.run_b)
    tag_flips(found, dirs, uri, cfg.tracking.experiment)
    flip_urls = [f"  {url}" for url in found.urls]
    if not log_run:
        return flip_urls
    if body is None:
        log.warning("the %s comparison gave no body (PluginRun.body, what compare.json "
                    "holds): its MLflow run gets the flips' metrics only", steps.title)
    run_id, experiment_id = log_comparison(
        tracking_uri=uri, experiment=cfg.tracking.experiment,
        run_name=(cfg.tracking.run_name or f"compare {labels[0]} vs {labels[1]}")[:250],
        tags={"benchmark": steps.name},
        metrics=plugin_comparison_metrics(body or {}, *labels,
                                          {"gained": found.gained, "lost": found.lost}),
        artifacts=[output_dir / name for name in ("compare.json", "compare.md",
                                                  "questions.html")],
        params=comparison_params(steps, cfg, dirs, labels),
    )
    return [*flip_urls,
            f"MLflow: run {run_id} in experiment '{cfg.tracking.experiment}'.\n"
            f"{tracking.open_ui_hint(uri, experiment_id)}"]


def tag_flips(found: PairFlips, dirs: list[Path], uri: str, experiment: str) -> None:
    """Tag the flipped questions' traces in the two compared runs' MLflow runs.

    The traces are a view: a store that refuses the tags costs one warning, never the
    comparison (``found.urls`` is filled with the runs' filtered addresses).
    """
    from locomo_exp import tracking
    from locomo_exp.compare.questions import tag_compared_runs

    try:
        ids = {}
        for label, path in zip((found.run_a, found.run_b), dirs, strict=True):
            logged = tracking.find_run(uri, experiment, str(path.resolve()))
            if logged is not None:
                ids[label] = logged
        tag_compared_runs([found], ids, tracking.ui_base_url(uri), uri)
    except Exception as error:  # MlflowException, sqlite errors
        log.warning("flipped questions not tagged in MLflow: %s", error)


__all__ = ["compare_and_track", "comparison_params", "judge_model_of", "labels_of",
           "run_question_rows"]
