"""The questions of a comparison: which verdicts flip, ``questions.html``, flip tags in MLflow.

For each compared pair (A, B) the shared questions are matched as the statistics match them
(:func:`locomo_exp.data.match.match_questions`), so the flips counted here are McNemar's
discordant pairs of ``compare.json`` on the headline verdict (the judge's, else the input
file's stored J). In MLflow each compared run's traces (``tracking.questions=true``) get
``flipped=true`` and ``flip=gained|lost``, the direction as seen from *that* run (a question
A got right and B wrong is ``lost`` in B's traces and ``gained`` in A's).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_exp.compare.run_data import RunData
from locomo_exp.data.match import match_questions
from locomo_exp.report.question_rows import locomo_question_rows
from locomo_exp.report.questions_html import compare_table, render_table_html
from locomo_exp.report.run_dir import atomic_write_text
from locomo_exp.results.questions import Flip, QuestionRow, reverse, verdict_or_score_flips

log = logging.getLogger(__name__)

QUESTIONS_HTML = "questions.html"


@dataclass
class PairFlips:
    """The flips of one compared pair.

    Attributes:
        run_a, run_b: the runs' display names.
        a_flips: ``{question id in A: direction in A's view}``.
        b_flips: ``{question id in B: direction in B's view}``.
        gained: questions B got right and A wrong.
        lost: questions A got right and B wrong.
        urls: MLflow compare addresses filtered to the flips, once tagged.
    """

    run_a: str
    run_b: str
    a_flips: dict[str, Flip]
    b_flips: dict[str, Flip]
    gained: int
    lost: int
    urls: list[str] = field(default_factory=list)


def _judge_model(run: RunData) -> str | None:
    judge = run.config.get("judge") if isinstance(run.config, dict) else None
    if any(row.get("j_runs") for row in run.rows) and isinstance(judge, dict):
        return str(judge.get("model") or "judge")
    return None


def question_rows(run: RunData) -> list[QuestionRow]:
    """A compared run's ``scores.jsonl`` rows as question rows (judge model from its config)."""
    return locomo_question_rows(run.rows, _judge_model(run))


def pair_flips(
    name_a: str, name_b: str, matched: list[tuple[QuestionRow, QuestionRow]]
) -> PairFlips:
    """The flips of one compared pair, from its matched question rows (any benchmark).

    Args:
        name_a: run A's display name.
        name_b: run B's display name.
        matched: ``(row in A, row in B)`` of each shared question.

    Returns:
        :class:`PairFlips`: the headline verdicts' flips
        (:func:`~locomo_exp.results.questions.flips`), or, for rows without a verdict (a
        partial score), the changed headline scores
        (:func:`~locomo_exp.results.questions.score_flips`).
    """
    found = verdict_or_score_flips(matched)
    return PairFlips(
        run_a=name_a,
        run_b=name_b,
        a_flips={qa: reverse(d) for qa, _, d in found},
        b_flips={qb: d for _, qb, d in found},
        gained=sum(1 for *_, d in found if d == "gained"),
        lost=sum(1 for *_, d in found if d == "lost"),
    )


def pairs_by_id(
    rows_a: list[QuestionRow], rows_b: list[QuestionRow]
) -> list[tuple[QuestionRow, QuestionRow]]:
    """Question rows of two runs matched by ``question_id`` (A's order; ids unique per run)."""
    in_b = {row.question_id: row for row in rows_b}
    return [(row, in_b[row.question_id]) for row in rows_a if row.question_id in in_b]


def write_pairs_page(
    output_dir: Path, title: str, matched: list[tuple[str, str, list[tuple[QuestionRow,
                                                                          QuestionRow]]]]
) -> Path:
    """Write a comparison's ``questions.html``: every shared question of each pair.

    Args:
        output_dir: where the page goes.
        title: the page title.
        matched: ``(run A name, run B name, matched rows)`` of each pair.

    Returns:
        The page's path.

    Raises:
        OSError: the page cannot be written.
    """
    columns: list[str] = ["pair"]
    records: list[list[Any]] = []
    for name_a, name_b, rows in matched:
        cols, recs = compare_table(rows, ("A", "B"))
        columns = ["pair", *cols]
        records.extend([f"A={name_a} B={name_b}", *rec] for rec in recs)
    path = output_dir / QUESTIONS_HTML
    atomic_write_text(path, render_table_html(title, columns, records))
    return path


def compare_questions(
    runs: list[RunData], pairs: list[tuple[str, str]], output_dir: Path
) -> tuple[list[PairFlips], Path]:
    """Find each pair's flips and write the comparison's ``questions.html``.

    Args:
        runs: the loaded runs.
        pairs: ``(run A name, run B name)`` of each compared pair (``compare.json``'s pairs).
        output_dir: where ``questions.html`` goes (every pair's rows, a ``pair`` column).

    Returns:
        ``(flips per pair, the page's path)``.

    Raises:
        OSError: the page cannot be written.
    """
    by_name = {run.name: run for run in runs}
    rows = {run.name: question_rows(run) for run in runs}
    out: list[PairFlips] = []
    pages = []
    for name_a, name_b in pairs:
        a, b = by_name[name_a], by_name[name_b]
        matching = match_questions(a.rows, b.rows)
        matched = [(rows[name_a][i], rows[name_b][j]) for i, j in matching.pairs]
        out.append(pair_flips(name_a, name_b, matched))
        pages.append((name_a, name_b, matched))
    title = "compare " + " vs ".join(run.name for run in runs)
    return out, write_pairs_page(output_dir, title, pages)


def tag_compared_runs(
    found: list[PairFlips],
    run_ids: dict[str, tuple[str, str]],
    base_url: str,
    tracking_uri: str | None = None,
) -> None:
    """Tag the flips in each compared run's traces and set the compare addresses.

    A pair gets its address (the two runs' evaluations, filtered to the flipped questions)
    only when some trace was tagged: a run logged without question traces gets a log line
    saying why instead (``tracking.questions=true`` logs them).

    Args:
        found: :func:`compare_questions`'s flips.
        run_ids: run name -> ``(MLflow run id, experiment id)`` of the runs found in MLflow.
        base_url: the MLflow UI's address.
        tracking_uri: the store holding those runs (``tracking.uri`` resolved); ``None``
            only inside an active MLflow run of that store (MLflow's current URI). Never
            left to MLflow's default, which is ``./mlflow.db`` in the working directory.
    """
    from locomo_exp.tracking.questions import FLIP_FILTER, evaluations_url, tag_flips

    for pair in found:
        tagged_any = False
        for name, flipped in ((pair.run_a, pair.a_flips), (pair.run_b, pair.b_flips)):
            if name in run_ids:
                run_id, experiment_id = run_ids[name]
                tagged = tag_flips(run_id, experiment_id, flipped, tracking_uri)
                tagged_any = tagged_any or tagged > 0
                if tagged or not flipped:
                    log.info("%s: %d of %d flipped questions tagged in MLflow", name, tagged,
                             len(flipped))
                else:  # no trace to tag: say why, and give no link to an empty view
                    log.info("%s: %d flipped questions not tagged in MLflow: its job logged "
                             "no question traces (tracking.questions=true logs them)", name,
                             len(flipped))
        if tagged_any and pair.run_a in run_ids and pair.run_b in run_ids:
            (run_a, exp_a), (run_b, _) = run_ids[pair.run_a], run_ids[pair.run_b]
            pair.urls.append(evaluations_url(base_url, exp_a, run_b, run_a, [FLIP_FILTER]))


__all__ = [
    "PairFlips", "compare_questions", "pair_flips", "pairs_by_id", "question_rows",
    "tag_compared_runs", "write_pairs_page",
]
