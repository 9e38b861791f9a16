"""``mode=compare`` as one job: resolve the runs, compare, log the comparison to MLflow.

A comparison written into a directory that holds an earlier one (``overwrite=true``; the
run-directory check refuses it otherwise) is built beside it, in the stage of
:mod:`locomo_exp.report.run_swap`, and swapped in only once every output is written and
logged: a refused comparison, Ctrl-C, a full disk or a crash leaves the earlier
``compare.md``, ``compare.json`` and forest plots as they were, and says so in one line.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locomo_exp.compare.comparison import CompareResult, run_compare
from locomo_exp.compare.engine import QUESTION
from locomo_exp.compare.metrics import COMPARED_BY_NAME
from locomo_exp.compare.questions import QUESTIONS_HTML, PairFlips, compare_questions
from locomo_exp.compare.render import SAME_AS_1_4, group_label, without_copies
from locomo_exp.compare.run_dirs import CompareError
from locomo_exp.config.compare import CompareConfig
from locomo_exp.report.run_dir import COMPARE_MARKERS
from locomo_exp.report.run_swap import recover_cut_swap, replacing_run
from locomo_exp.results import interrupts
from locomo_exp.stats.bootstrap import MIN_RUN_CLUSTERS

logger = logging.getLogger(__name__)

HEADLINE_GROUPS = ("overall_1_4", "overall")


@dataclass
class CompareJobResult:
    """A finished ``mode=compare`` job.

    Attributes:
        result: the comparison.
        output_dir: where ``compare.md``/``compare.json``/plots are.
        run_id: the comparison's MLflow run (``None`` with tracking off).
        tracking_uri: the store; experiment_id: its experiment.
        flips: each pair's flipped verdicts (counts, MLflow compare addresses).
    """

    result: CompareResult
    output_dir: Path
    run_id: str | None = None
    tracking_uri: str | None = None
    experiment_id: str | None = None
    flips: list[PairFlips] = dataclasses.field(default_factory=list)


def resolve_runs(
    cfg: CompareConfig, start_dir: Path, download_dir: Path, tracking_uri: str | None
) -> CompareConfig:
    """Replace MLflow run ids in ``cfg.runs`` by local copies of their files.

    An item that is an existing path (relative to ``start_dir``) is kept; an item shaped
    like a run id (32 hex digits) is fetched from ``tracking_uri`` into ``download_dir``.

    Args:
        cfg: the comparison settings.
        start_dir: directory relative paths are resolved against.
        download_dir: where fetched runs go.
        tracking_uri: the MLflow store (``None``: run ids cannot be resolved).

    Returns:
        A copy of ``cfg`` whose ``runs`` are all directories.

    Raises:
        CompareError: a run id with tracking off, or a run whose files cannot be fetched.
    """
    from locomo_exp.tracking.compare_run import RunFetchError, fetch_run_files, looks_like_run_id

    runs = []
    for item in cfg.runs:
        text = str(item)
        path = Path(text) if Path(text).is_absolute() else start_dir / text
        if path.exists() or not looks_like_run_id(text):
            runs.append(text)
            continue
        if tracking_uri is None:
            raise CompareError(
                f"compare.runs: {text} is not a directory; as an MLflow run id it needs tracking on"
            )
        try:
            runs.append(str(fetch_run_files(tracking_uri, text, download_dir)))
        except RunFetchError as error:
            raise CompareError(str(error)) from None
    return dataclasses.replace(cfg, runs=runs)


def headline_table(result: CompareResult) -> str:
    """The terminal table: per pair, each metric's overall rows (points, A - B).

    Args:
        result: a finished comparison.

    Returns:
        Plain text, one block per pair: metric, group, n, A, B, difference, 95%
        conversation-bootstrap interval (the question-level one, marked ``q`` and
        explained in one line, below
        :data:`~locomo_exp.stats.bootstrap.MIN_RUN_CLUSTERS` conversations), Holm p and
        verdict, followed by the row's marks (``⚠ A's J flagged by its judge checks: J
        inflated``; a mismatch compared with ``allow_mismatch``).
    """
    header = (
        f"{'metric':<22}{'group':<14}{'n':>6}{'A':>8}{'B':>8}{'A-B':>8}  "
        f"{'95% CI (conv.)':<18}{'p Holm':>8}  verdict"
    )
    lines: list[str] = []
    for pair in result.pairs:
        lines += [
            f"{pair.run_a} (A) vs {pair.run_b} (B): {pair.counts['shared']} shared questions",
            header,
            "-" * len(header),
        ]
        for row in without_copies(result.rows):
            if (row.run_a, row.run_b) != (
                pair.run_a,
                pair.run_b,
            ) or row.group not in HEADLINE_GROUPS:
                continue
            low, high = row.headline_ci
            ci = f"[{low:+.2f}, {high:+.2f}]" if low == low and high == high else "n/a"
            ci += " q" if row.interval == QUESTION else ""
            p = "n/a" if row.p_holm is None else f"{row.p_holm:.3g}"
            lines.append(
                f"{COMPARED_BY_NAME[row.metric].label:<22}{group_label(row.group):<14}{row.n:>6}"
                f"{row.mean_a:>8.2f}{row.mean_b:>8.2f}{row.diff:>+8.2f}  "
                f"{ci:<18}{p:>8}  {row.verdict}"
                + (" ⚠ " + "; ".join(row.marks) if row.marks else "")
            )
        few = [r for r in result.rows if (r.run_a, r.run_b) == (pair.run_a, pair.run_b)]
        if len(without_copies(few)) < len(few):
            lines.append(SAME_AS_1_4)
        if any(r.interval == QUESTION for r in few):
            lines.append(
                f"q: question-level paired interval (fewer than {MIN_RUN_CLUSTERS} conversations: "
                "a conversation-cluster interval would be falsely narrow)"
            )
        lines.append("")
    return "\n".join(lines).rstrip()


def compare_outputs(output_dir: Path) -> tuple[str, ...]:
    """The names of the comparison outputs a new comparison in ``output_dir`` replaces.

    Args:
        output_dir: the comparison's directory.

    Returns:
        ``compare.md``, ``compare.json`` and every ``compare_forest*.png`` there (a plot of
        a pair the new comparison does not have goes with the rest); ``runs/`` (fetched
        MLflow runs, inputs) is not one of them.
    """
    plots = sorted(path.name for path in output_dir.glob("compare_forest*.png"))
    return (*COMPARE_MARKERS, QUESTIONS_HTML, *plots)


def run_plugin_compare(
    plugin: Any, cfg: Any, output_dir: Path, start_dir: Path
) -> tuple[str, int]:
    """A benchmark plug-in's ``mode=compare``, built beside an earlier comparison.

    As :func:`run_compare_job`: when ``output_dir`` holds an earlier comparison, the new one
    is written into the stage (:func:`~locomo_exp.report.run_swap.replacing_run`) and
    swapped in only once the plug-in has finished; a stop before that (an error, a full
    disk, Ctrl-C) leaves the earlier comparison exactly as it was, said in one log line.
    A plug-in that has ``compare_and_track`` (the pipeline's,
    :mod:`locomo_exp.benchmarks.compare_track`) is asked for it instead of ``compare``: its
    comparison, then the flips, ``questions.html`` and the MLflow run (tracking on). A
    plug-in whose ``swaps_own_comparison`` is true (LoCoMo's, whose comparison is
    :func:`run_compare_job`) writes beside an earlier comparison itself: its
    ``compare_and_track`` is called with ``output_dir``.

    Args:
        plugin: the :class:`~locomo_exp.benchmarks.plugin.ComparePlugin` that claimed the runs.
        cfg: the typed config.
        output_dir: the comparison's directory.
        start_dir: the directory relative paths are resolved against.

    Returns:
        ``(console, exit_status)``: the plug-in's console text, its paths those of the
        swapped-in outputs, and its exit status.

    Raises:
        ValueError: the plug-in refused the comparison (one line).
        OSError: an output cannot be written (the earlier comparison is kept).
        KeyboardInterrupt: Ctrl-C or SIGTERM (the earlier comparison is kept).
    """
    if getattr(plugin, "swaps_own_comparison", False):  # LoCoMo's: :func:`run_compare_job`
        done = plugin.compare_and_track(cfg, output_dir, start_dir)
        return str(done.console), int(done.exit_status)
    files: tuple[str, ...] = COMPARE_MARKERS  # a new directory: the plug-in creates it
    earlier = False
    if output_dir.is_dir():
        recover_cut_swap(output_dir)  # a swap cut by a killed job: finished or undone
        files = compare_outputs(output_dir)
        earlier = any(os.path.lexists(output_dir / name) for name in files)
    with replacing_run(output_dir, earlier, files=files, noun="comparison") as replacement:
        compare = getattr(plugin, "compare_and_track", None) or plugin.compare
        done = compare(cfg, replacement.write_dir, start_dir)  # with flips and MLflow if given
        interrupts.raise_if_received()  # a swallowed Ctrl-C: the earlier comparison stays
        replacement.commit()
    console = str(done.console).replace(str(replacement.write_dir), str(output_dir))
    return console, int(done.exit_status)


def run_compare_job(
    cfg: CompareConfig,
    output_dir: Path,
    start_dir: Path,
    *,
    tracking_uri: str | None,
    experiment: str = "locomo_exp",
    run_name: str | None = None,
) -> CompareJobResult:
    """Compare the runs of ``cfg`` and log the comparison as an MLflow run.

    An earlier comparison in ``output_dir`` is replaced only when this one has finished,
    every output is written and the MLflow run logged (:func:`compare_outputs`,
    :func:`~locomo_exp.report.run_swap.replacing_run`); until then it stays as it was.

    Args:
        cfg: the comparison settings (``compare`` node).
        output_dir: the job's output directory (``compare.md``, ``compare.json``,
            forest plots; fetched MLflow runs under ``runs/``).
        start_dir: directory relative run paths are resolved against.
        tracking_uri: the MLflow store, or ``None`` for no MLflow run.
        experiment: MLflow experiment name.
        run_name: the MLflow run's name (default ``compare <A> vs <B>...``).

    Returns:
        :class:`CompareJobResult`.

    Raises:
        CompareError: the comparison is refused (one line).
        OSError: an output cannot be written (the earlier comparison is kept).
        KeyboardInterrupt: Ctrl-C or SIGTERM (the earlier comparison is kept).
        locomo_exp.tracking.TrackingStoreError: the store cannot be opened, or an
            ``http(s)`` server does not answer (checked before any run is read or fetched).
    """
    if tracking_uri is not None:
        from locomo_exp.tracking.preflight import check_tracking_uri

        check_tracking_uri(tracking_uri)  # one line now, not minutes of MLflow's retries
    resolved = resolve_runs(cfg, start_dir, output_dir / "runs", tracking_uri)
    output_dir.mkdir(parents=True, exist_ok=True)
    recover_cut_swap(output_dir)  # a swap cut by a killed job: finished or undone
    files = compare_outputs(output_dir)
    earlier = any(os.path.lexists(output_dir / name) for name in files)
    with replacing_run(output_dir, earlier, files=files, noun="comparison") as replacement:
        result = run_compare(resolved, replacement.write_dir, start_dir)
        found, page = compare_questions(  # flipped verdicts; every question: questions.html
            result.runs, [(pair.run_a, pair.run_b) for pair in result.pairs],
            replacement.write_dir,
        )
        result.outputs["questions"] = page
        job = CompareJobResult(result, output_dir, flips=found)
        if tracking_uri is not None:
            _log(job, cfg, resolved, tracking_uri, experiment, run_name)
            _tag_flips(job, cfg, resolved, start_dir, tracking_uri, experiment)
        interrupts.raise_if_received()  # a swallowed Ctrl-C: the earlier comparison stays
        replacement.commit()
    result.outputs = {key: replacement.final_path(path) for key, path in result.outputs.items()}
    return job


def _log(
    job: CompareJobResult, cfg: CompareConfig, resolved: CompareConfig, tracking_uri: str,
    experiment: str, run_name: str | None,
) -> None:
    """Log ``job``'s comparison as an MLflow run; set its ids on ``job``."""
    from locomo_exp.tracking.compare_run import log_comparison

    result = job.result
    name = run_name or "compare " + " vs ".join(r.name for r in result.runs)
    tags = result.mlflow_tags()
    from locomo_exp.tracking.compare_run import looks_like_run_id

    for i, (given, used) in enumerate(zip(cfg.runs, resolved.runs, strict=True)):
        if str(given) != str(used) and looks_like_run_id(str(given)):
            tags[f"compare.mlflow_run.{i}"] = str(given)
    job.run_id, job.experiment_id = log_comparison(
        tracking_uri=tracking_uri,
        experiment=experiment,
        run_name=name[:250],
        tags=tags,
        metrics=result.mlflow_metrics(),
        artifacts=list(result.outputs.values()),
        params=result.mlflow_params(),
        description=result.mlflow_description(),
    )
    job.tracking_uri = tracking_uri


def _tag_flips(
    job: CompareJobResult, cfg: CompareConfig, resolved: CompareConfig, start_dir: Path,
    tracking_uri: str, experiment: str,
) -> None:
    """Tag the flips in the compared runs' MLflow traces (runs found by id or run dir)."""
    from locomo_exp.compare.questions import tag_compared_runs
    from locomo_exp.tracking import find_run, ui_base_url
    from locomo_exp.tracking.compare_run import looks_like_run_id
    from locomo_exp.tracking.questions import run_experiment_id

    try:  # the traces are a view: a store that refuses the tags costs one warning
        ids: dict[str, tuple[str, str]] = {}
        for run, given, used in zip(job.result.runs, cfg.runs, resolved.runs, strict=True):
            path = Path(str(used)) if Path(str(used)).is_absolute() else start_dir / str(used)
            found = find_run(tracking_uri, experiment, str(path.resolve()))
            if found is None and looks_like_run_id(str(given)):
                found = (str(given), run_experiment_id(tracking_uri, str(given)))
            if found is not None:
                ids[run.name] = found
        tag_compared_runs(job.flips, ids, ui_base_url(tracking_uri), tracking_uri)
    except Exception as error:  # MlflowException, sqlite errors
        logger.warning("flipped questions not tagged in MLflow: %s", error)


__all__ = [
    "run_plugin_compare",
    "CompareJobResult", "compare_outputs", "headline_table", "resolve_runs", "run_compare_job",
]
