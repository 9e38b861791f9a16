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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


__all__ = ["FlipStore", "flip_lines", "record_flips"]
