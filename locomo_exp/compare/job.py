"""``mode=compare`` as one job: resolve the runs, compare, log the comparison to MLflow."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

from locomo_exp.compare.comparison import CompareResult, run_compare
from locomo_exp.compare.engine import QUESTION
from locomo_exp.compare.metrics import COMPARED_BY_NAME
from locomo_exp.compare.render import SAME_AS_1_4, group_label, without_copies
from locomo_exp.compare.run_dirs import CompareError
from locomo_exp.config.compare import CompareConfig
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
    """

    result: CompareResult
    output_dir: Path
    run_id: str | None = None
    tracking_uri: str | None = None
    experiment_id: str | None = None


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
        locomo_exp.tracking.TrackingStoreError: the store cannot be opened, or an
            ``http(s)`` server does not answer (checked before any run is read or fetched).
    """
    if tracking_uri is not None:
        from locomo_exp.tracking.preflight import check_tracking_uri

        check_tracking_uri(tracking_uri)  # one line now, not minutes of MLflow's retries
    resolved = resolve_runs(cfg, start_dir, output_dir / "runs", tracking_uri)
    result = run_compare(resolved, output_dir, start_dir)
    job = CompareJobResult(result, output_dir)
    if tracking_uri is None:
        return job
    from locomo_exp.tracking.compare_run import log_comparison

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
    return job


__all__ = ["CompareJobResult", "headline_table", "resolve_runs", "run_compare_job"]
