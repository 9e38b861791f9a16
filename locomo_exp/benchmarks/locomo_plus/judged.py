"""Judged LoCoMo-Plus runs: one judge call per item, read by both parsers.

The judge engine (:func:`locomo_exp.judge.run_judge`) makes the calls with the
``locomo_plus`` protocol (:mod:`locomo_exp.benchmarks.locomo_plus.protocol`: a criterion per
category, the authors' judge settings by ``benchmark=locomo_plus``) or the user's template
(``judge.protocol=template``, ``by_kind:`` keyed by category string); the cache, batch mode,
resume, spend cap and dry run are the engine's. Each reply is then read twice, from its
raw text: by our parser (what the engine scored) and by the authors' (``parse_authors``),
which turns a failed call's error text into a verdict as their wrapper does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from locomo_exp.benchmarks.locomo_plus.facts import COGNITIVE
from locomo_exp.benchmarks.locomo_plus.figures import API_ERROR, ScoredItem
from locomo_exp.benchmarks.locomo_plus.parsing import parse_authors
from locomo_exp.benchmarks.locomo_plus.protocol import LOCOMO_PLUS
from locomo_exp.benchmarks.locomo_plus.runs import StoredRow
from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeResult, JudgeRunResult
from locomo_exp.judge.protocols.template import TEMPLATE_PROTOCOL
from locomo_exp.results import QARecord

NO_VERDICT = "no verdict in the judge's reply"


def judge_config(judge: JudgeConfig) -> JudgeConfig:
    """The judge settings of a LoCoMo-Plus run: every category judged.

    Args:
        judge: ``cfg.judge``.

    Returns:
        ``judge`` with ``categories`` set to the engine ids of the six categories
        (:attr:`~locomo_exp.judge.protocols.kinds.KindProtocol.kind_ids`).

    Raises:
        ValueError: ``judge.protocol`` is neither ``locomo_plus`` nor ``template`` (one line
            naming the fix).
    """
    if str(judge.protocol) not in (LOCOMO_PLUS.name, TEMPLATE_PROTOCOL):
        raise ValueError(
            f"judge.protocol={judge.protocol} judges LoCoMo's categories; LoCoMo-Plus answers "
            "are judged with judge.protocol=locomo_plus (benchmark=locomo_plus sets it with "
            "the authors' judge: gpt-4o-mini, temperature 0, max_tokens 512), or "
            "judge.protocol=template with by_kind texts per category"
        )
    return replace(judge, categories=sorted(LOCOMO_PLUS.kind_ids))


def judge_records(rows: Sequence[StoredRow]) -> list[QARecord]:
    """The judge engine's records, one per item.

    The category string travels as ``question_type``: it chooses the prompt (and a
    template's ``by_kind`` text); ``category`` is the engine id the protocol gives it (what
    the judge cache keys hold). A Cognitive item's cue (``evidence``) is its ``ground_truth``
    (a template's ``{gold_answer}``), as it has no reference answer. The LoCoMo
    conversation index, when recorded, is the ``conversation_id`` (the audit's
    ``other_gold`` draws from the same conversation; a labels file may name it).

    Args:
        rows: the answers file's rows.

    Returns:
        One :class:`~locomo_exp.results.QARecord` per row, in file order.
    """
    return [
        QARecord(
            question_id=row.item_id,
            question=row.question,
            ground_truth=row.evidence if row.category == COGNITIVE else row.ground_truth,
            prediction=row.prediction,
            category=LOCOMO_PLUS.kind_id(row.category),
            conversation_id=None if row.conversation is None else str(row.conversation),
            position=index,
            question_type=row.category,
        )
        for index, row in enumerate(rows)
    ]


@dataclass(frozen=True)
class JudgedReadings:
    """Both parsers' scores of a judged run, and what the authors' one derived.

    Attributes:
        ours: our reading, one item per row.
        authors: the authors' reading, one item per row.
        derived_from_api_errors: verdicts the authors' parser took from failed calls'
            error texts (runs, across all items).
        derived_from_no_label: verdicts it took from replies that held no label (a
            substring search, or the empty label scored 0).
        calls: judge runs read (items x ``judge.runs``).
    """

    ours: list[ScoredItem]
    authors: list[ScoredItem]
    derived_from_api_errors: int
    derived_from_no_label: int
    calls: int


def _authors_reading(run: JudgeResult) -> tuple[float, str]:
    """The authors' score of one run and what it came from (``api_error``, ``no_label``)."""
    if run.outcome == "api_error":
        reading = parse_authors(f"[API Error: {run.error}]")
        return float(reading.score or 0.0), "api_error"
    reading = parse_authors(run.raw or "")
    return float(reading.score or 0.0), ("no_label" if reading.from_no_label else "")


def read_judged(rows: Sequence[StoredRow], result: JudgeRunResult) -> JudgedReadings:
    """Score each item under both parsers from the judge's results.

    Ours: the mean of the valid runs' verdicts (0-1), unscored when none is valid (a
    failed call, or a reply with no verdict). The authors': the mean over every run of
    :func:`~locomo_exp.benchmarks.locomo_plus.parsing.parse_authors` of the raw reply, a
    failed call read as ``[API Error: <error>]`` (their wrapper's text).

    Args:
        rows: the judged rows.
        result: :func:`locomo_exp.judge.run_judge`'s result.

    Returns:
        :class:`JudgedReadings`.
    """
    ours: list[ScoredItem] = []
    theirs: list[ScoredItem] = []
    from_errors = from_no_label = calls = 0
    for row in rows:
        agg = result.per_question.get(row.item_id)
        runs = agg.runs if agg is not None else []
        mean = agg.mean_score if agg is not None else None
        why = ""
        if mean is None:
            failed = runs and all(r.outcome == "api_error" for r in runs)
            why = API_ERROR if failed else NO_VERDICT
        ours.append(ScoredItem(row.category, row.relation, row.conversation,
                               None if mean is None else round(mean / 100.0, 6), why))
        scores = []
        for run in runs:
            score, source = _authors_reading(run)
            scores.append(score)
            from_errors += source == "api_error"
            from_no_label += source == "no_label"
        calls += len(runs)
        theirs.append(ScoredItem(row.category, row.relation, row.conversation,
                                 sum(scores) / len(scores) if scores else None,
                                 "" if scores else NO_VERDICT))
    return JudgedReadings(ours, theirs, from_errors, from_no_label, calls)


def judged_score_rows(rows: Sequence[StoredRow], result: JudgeRunResult,
                      readings: JudgedReadings) -> list[dict[str, Any]]:
    """One ``scores.jsonl`` row per judged item: the judge's replies and both readings.

    Returns:
        Rows ``{item_id, category, relation, conversation, question, prediction,
        judge_labels, judge_replies, judge_errors, score, unscored, score_authors}``.
    """
    out = []
    for row, o, a in zip(rows, readings.ours, readings.authors, strict=True):
        agg = result.per_question.get(row.item_id)
        runs = agg.runs if agg is not None else []
        out.append({
            "item_id": row.item_id, "category": row.category, "relation": row.relation,
            "conversation": row.conversation, "question": row.question,
            "prediction": row.prediction,
            "judge_labels": [r.label for r in runs],
            "judge_replies": [r.raw for r in runs],
            "judge_errors": [r.error or None for r in runs],
            "score": o.score, "unscored": o.unscored or None, "score_authors": a.score,
        })
    return out


def judge_section(result: JudgeRunResult) -> dict[str, Any]:
    """What ``summary.json`` keeps of the judge run: settings, counts, tokens, cost.

    The endpoint is kept without credentials (the engine strips them); no API key is ever
    part of the summary.
    """
    keep = (
        "protocol", "prompt_version", "template", "provider", "endpoint", "endpoint_kind",
        "model", "model_snapshot", "temperature", "max_tokens", "runs", "api_version",
        "counts", "tokens", "estimated_cost_usd", "estimated_cost_usd_including_cached",
        "mode",
    )
    return {k: result.summary[k] for k in keep if k in result.summary}
