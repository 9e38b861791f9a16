"""Each sweep job's flipped verdicts against the baseline job (issue 30 §2, ``sweep.baseline``).

The flips are found by :func:`locomo_exp.compare.questions.compare_questions` on the
comparison :mod:`~locomo_exp.sweep.vs_baseline` already made (A = the job, B = the
baseline), so they are McNemar's discordant pairs of that comparison on the headline
verdict (the judge's, else the input file's stored J). They are counted in the job's own
view (``gained``: right in the job, wrong in the baseline), tagged in the job's MLflow
traces (``flipped=true``, ``flip=gained|lost``, when the job logged them with
``tracking.questions=true``) and given the address of the job's Evaluations tab compared
with the baseline run, filtered to the flips. The baseline's traces are not tagged: it is
compared with every job, and one set of tags cannot say against which.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locomo_exp.sweep.job_files import COMPLETED

if TYPE_CHECKING:
    from locomo_exp.compare.questions import PairFlips
    from locomo_exp.results.questions import QuestionRow

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FlipStore:
    """Where the sweep's runs are logged.

    Attributes:
        tracking_uri: the MLflow store.
        experiment_id: the sweep's experiment (its jobs' runs are in it).
    """

    tracking_uri: str
    experiment_id: str


def record_flips(
    result: Any,
    row: dict[str, Any],
    base: dict[str, Any],
    out_dir: Path,
    store: FlipStore | None = None,
) -> dict[str, Any]:
    """Find a job's flips against the baseline, tag them in MLflow, set ``row["flips"]``.

    Args:
        result: the job-vs-baseline :class:`~locomo_exp.compare.result.CompareResult`
            (one pair, A = the job, B = the baseline).
        row: the job's sweep summary row (``run_id``: its MLflow run, or ``None``).
        base: the baseline job's row.
        out_dir: the comparison's directory (``vs_baseline/<job>/``): its ``questions.html``
            (every shared question of the two runs, a ``pair`` column) is written there.
        store: the sweep's MLflow store, or ``None`` (tracking off: nothing tagged).

    Returns:
        ``row["flips"]``: ``{"gained", "lost"}`` (questions, the job's view: ``gained`` =
        right in the job and wrong in the baseline; their sum is the pair's discordant
        pairs in ``compare.json``), ``"tagged"`` (traces tagged in the job's run; ``None``
        when not tried or the store refused) and ``"url"`` (the job's Evaluations tab
        compared with the baseline run, filtered to ``flipped=true``; ``None`` when no trace
        was tagged). A store that refuses the tags costs one warning, never the sweep.

    Raises:
        OSError: ``questions.html`` cannot be written.
    """
    from locomo_exp.compare.questions import compare_questions

    pair = result.pairs[0]
    [found], _page = compare_questions(result.runs, [(pair.run_a, pair.run_b)], out_dir)
    return _record(found, row, base, store)


def _record(found: PairFlips, row: dict[str, Any], base: dict[str, Any],
            store: FlipStore | None) -> dict[str, Any]:
    """Set ``row["flips"]`` from one job-vs-baseline pair (A = the job); tag them in MLflow."""
    in_job = list(found.a_flips.values())
    cell: dict[str, Any] = {
        "gained": in_job.count("gained"),
        "lost": in_job.count("lost"),
        "tagged": None,
        "url": None,
    }
    job_run, base_run = row.get("run_id"), base.get("run_id")
    if store is not None and job_run and base_run:
        from locomo_exp.tracking import ui_base_url
        from locomo_exp.tracking.questions import FLIP_FILTER, evaluations_url, tag_flips

        try:  # the traces are a view of scores.jsonl: a refused tag is one warning
            cell["tagged"] = tag_flips(
                str(job_run), store.experiment_id, found.a_flips, store.tracking_uri
            )
        except Exception as error:  # MlflowException, sqlite errors
            log.warning("sweep job %s: flipped questions not tagged in MLflow: %s",
                        row["job"], error)
        if cell["tagged"]:
            cell["url"] = evaluations_url(
                ui_base_url(store.tracking_uri), store.experiment_id, str(job_run),
                str(base_run), [FLIP_FILTER],
            )
    row["flips"] = cell
    return cell


def record_plugin_flips(
    question_rows_of: Callable[[Path], list[QuestionRow]],
    rows: list[dict[str, Any]],
    baseline: dict[str, Any] | None,
    pages_dir: Path,
    store: FlipStore | None = None,
) -> int:
    """A benchmark plug-in's sweep: each completed job's flips against the baseline job.

    The same flips, ``questions.html`` and MLflow tags as a LoCoMo sweep's
    (:func:`record_flips`), from the plug-in's question rows
    (:func:`locomo_exp.compare.questions.pair_flips`: the headline verdict, or the headline
    score for rows without one), paired by question id.

    Args:
        question_rows_of: the plug-in's reader of a run directory's question rows
            (``PipelinePlugin.question_rows_of``).
        rows: the sweep summary rows (each compared one gets ``flips``).
        baseline: the plug-in comparison's ``{"job", ...}`` (``None`` or ``{"error"}``:
            nothing compared).
        pages_dir: the comparisons' directory (``<sweep>/vs_baseline``): each job's page
            is ``<pages_dir>/<job>/questions.html``.
        store: the sweep's MLflow store, or ``None`` (tracking off: nothing tagged).

    Returns:
        How many jobs got ``flips``. A job whose rows cannot be read keeps none (a warning).
    """
    from locomo_exp.compare.questions import pair_flips, pairs_by_id, write_pairs_page

    if not baseline or "job" not in baseline:
        return 0
    [base] = [r for r in rows if r["job"] == baseline["job"]]
    done = 0
    for row in rows:
        if row is base or row["status"] != COMPLETED or not row.get("output_dir"):
            continue
        job, job_dir = str(row["job"]), Path(row["output_dir"])
        try:
            matched = pairs_by_id(question_rows_of(job_dir),
                                  question_rows_of(Path(base["output_dir"])))
            out_dir = pages_dir / job
            out_dir.mkdir(parents=True, exist_ok=True)
            found = pair_flips(f"job {job}", f"job {base['job']}", matched)
            write_pairs_page(out_dir, f"sweep job {job} vs baseline job {base['job']}",
                             [(found.run_a, found.run_b, matched)])
        except (ValueError, OSError) as error:
            log.warning("sweep job %s: flips against the baseline not found: %s", job, error)
            continue
        _record(found, row, base, store)
        done += 1
    return done


def flip_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The summary's markdown lines on each job's flips against the baseline.

    Args:
        rows: sweep summary rows (those with ``flips``, :func:`record_flips`).

    Returns:
        ``[]`` when no job has flips recorded; otherwise a heading line and one line per
        job: ``- job 1: 3 gained, 2 lost (5 of 5 tagged in MLflow: <url>)``; the MLflow part
        is left out when tagging was not tried or nothing flipped, and says so when the job
        had no traces to tag.
    """
    found = [r for r in rows if r.get("flips")]
    if not found:
        return []
    lines = [
        "",
        "Flipped verdicts vs the baseline job (headline verdict: the judge's, else stored J; "
        "gained = right in the job, wrong in the baseline; McNemar's discordant pairs; "
        "questions.html in vs_baseline/<job>/):",
        "",
    ]
    for r in found:
        flips = r["flips"]
        line = f"- job {r['job']}: {flips['gained']} gained, {flips['lost']} lost"
        n, tagged = flips["gained"] + flips["lost"], flips.get("tagged")
        if tagged is not None and n:
            line += (
                f" ({tagged} of {n} tagged in MLflow: {flips['url']})" if tagged
                else " (not tagged in MLflow: the job logged no question traces; "
                "tracking.questions=true logs them)"
            )
        lines.append(line)
    return lines


__all__ = ["FlipStore", "flip_lines", "record_flips", "record_plugin_flips"]
