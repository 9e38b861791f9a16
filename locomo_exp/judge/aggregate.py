"""Results of judging and their aggregation into J scores, spreads and counts (cost: llm.spend).

Definitions (scores on 0-100):

* Per question: mean and sample standard deviation (ddof=1) of its *valid* runs; parse
  failures, replies without a verdict and API errors are *unscored* (score ``None`` with
  the reason in ``error``), left out and counted separately.
* J of a category, and overall J: the mean of the per-question means of the questions in
  it that have at least one valid run (overall is pooled over questions, as in the Mem0
  paper, so categories weigh by their question counts).
* ``std_across_runs``: for each run index r, the run-level J_r is the mean over questions
  of their run-r score (valid runs only); the spread is the ddof=1 standard deviation of
  J_0..J_{N-1}. This is what the Mem0 paper's "± std over 10 runs" means (docs/field_notes.md §2).
* ``pooled_within_std``: the pooled within-question standard deviation,
  sqrt(sum_i (n_i - 1) s_i^2 / sum_i (n_i - 1)) over questions with n_i >= 2 valid runs:
  how much the judge disagrees with itself on the same answer.

Values that cannot be computed (no valid runs, a single run) are ``None`` in JSON and are
left out of MLflow metrics (:mod:`locomo_exp.tracking`), which never receive NaN or inf.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from locomo_exp.results import JUDGE_DRY_RUN

logger = logging.getLogger(__name__)

Outcome = Literal["valid", "parse_failure", "no_verdict", "api_error"]


@dataclass
class JudgeResult:
    """One judge run of one question.

    Attributes:
        score: 0-100 when valid; ``None`` when unscored (a parse failure, an API error or
            a reply without a verdict), with the reason in ``error`` (never a sentinel
            number such as -1; inspect_ai's ``Score.unscored`` model).
        explanation: the judge's explanation ("" if none).
        outcome: ``"valid"``, ``"parse_failure"``, ``"no_verdict"`` (an empty reply, a
            ``max_tokens`` cut or a refusal without a verdict, still so after one retry;
            not cached) or ``"api_error"``.
        run: 0-based run index.
        raw: the raw reply text (``None`` for an API error).
        error: parse-failure reason or API error description ("" when valid).
        stop_reason: the API's stop reason.
        input_tokens: billed input tokens (0 for an API error).
        output_tokens: billed output tokens.
        cached: True when the reply came from the cache (no call made now).
        label: binary protocol label, if any.
        batch_id: the Message Batch that produced the reply (billed at batch prices),
            ``None`` for a realtime call or an API error.
        unparsed_scored: a reply the template could not read, scored by its
            ``on_unparsed`` (``error`` keeps the reason).
        model: the model id the API answered with (its snapshot), "" when unknown.
        usage_known: False when the reply carried no token usage (tokens, cost unknown).
    """

    score: float | None
    explanation: str = ""
    outcome: Outcome = "valid"
    run: int = 0
    raw: str | None = None
    error: str = ""
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    label: str | None = None
    batch_id: str | None = None
    unparsed_scored: bool = False
    model: str = ""
    usage_known: bool = True

    def to_json(self) -> dict[str, Any]:
        """The ``j_runs`` entry of ``scores.jsonl``.

        ``batch_id`` only for batch replies, ``unparsed_scored`` only for a reply scored by
        a template's ``on_unparsed``.
        """
        row: dict[str, Any] = {
            "run": self.run,
            "outcome": self.outcome,
            "score": self.score,
            "explanation": self.explanation,
            "raw": self.raw,
            "error": self.error or None,
            "stop_reason": self.stop_reason,
        }
        if self.batch_id:
            row["batch_id"] = self.batch_id
        if self.unparsed_scored:  # a parse failure the template's on_unparsed scored
            row["unparsed_scored"] = True
        return row


@dataclass
class JudgeAggregation:
    """All runs of one question and their reduction.

    Attributes:
        question_id: the question.
        category: LoCoMo category id.
        mean_score: mean of valid run scores (0-100), ``None`` if there is none.
        std_dev: ddof=1 standard deviation of valid scores, ``None`` for fewer than two.
        run_count: number of valid runs.
        individual_scores: valid scores in run order.
        runs: every run's :class:`JudgeResult`, in run order.
    """

    question_id: str
    category: int
    mean_score: float | None
    std_dev: float | None
    run_count: int
    individual_scores: list[float]
    runs: list[JudgeResult] = field(default_factory=list)

    @property
    def parse_failures(self) -> int:
        """Runs whose reply could not be parsed."""
        return sum(r.outcome == "parse_failure" for r in self.runs)

    @property
    def no_verdicts(self) -> int:
        """Runs whose reply had no verdict (empty, cut at max_tokens, refused)."""
        return sum(r.outcome == "no_verdict" for r in self.runs)

    @property
    def api_errors(self) -> int:
        """Runs that ended in an API error after retries."""
        return sum(r.outcome == "api_error" for r in self.runs)


def aggregate_question(
    question_id: str,
    category: int,
    runs: list[JudgeResult],
    *,
    min_successful_runs: int = 5,
) -> JudgeAggregation:
    """Reduce the runs of one question to mean and ddof=1 standard deviation.

    Args:
        question_id: the question (named in the warning).
        category: LoCoMo category id.
        runs: the question's runs.
        min_successful_runs: below ``min(min_successful_runs, len(runs))`` valid runs the
            warning says the mean is unreliable. Any failed run logs a warning naming the
            question and the counts.

    Returns:
        The :class:`JudgeAggregation`.
    """
    ordered = sorted(runs, key=lambda r: r.run)
    scores = [float(r.score) for r in ordered if r.outcome == "valid" and r.score is not None]
    mean = float(np.mean(scores)) if scores else None
    std = float(np.std(scores, ddof=1)) if len(scores) >= 2 else None
    threshold = min(min_successful_runs, len(ordered))
    failed = len(ordered) - len(scores)
    if failed or len(scores) < threshold:
        too_few = (
            f"; fewer than {threshold} successful runs, its mean is unreliable"
            if len(scores) < threshold
            else ""
        )
        logger.warning(
            "judge: question %s: %d of %d runs used (%d parse failures, %d without a "
            "verdict, %d API errors)%s",
            question_id,
            len(scores),
            len(ordered),
            sum(r.outcome == "parse_failure" for r in ordered),
            sum(r.outcome == "no_verdict" for r in ordered),
            sum(r.outcome == "api_error" for r in ordered),
            too_few,
        )
    return JudgeAggregation(
        question_id=question_id,
        category=category,
        mean_score=mean,
        std_dev=std,
        run_count=len(scores),
        individual_scores=scores,
        runs=ordered,
    )


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def group_j(aggregations: list[JudgeAggregation], num_runs: int) -> dict[str, Any]:
    """J and its two spreads for one group of questions.

    Args:
        aggregations: the questions of the group.
        num_runs: runs per question (run indices 0..num_runs-1).

    Returns:
        ``{"mean", "count", "questions", "std_across_runs", "pooled_within_std",
        "run_means"}``; ``mean`` is ``None`` when no question has a valid run.
    """
    means = [a.mean_score for a in aggregations if a.mean_score is not None]
    mean = _finite_or_none(float(np.mean(means))) if means else None

    run_means: list[float | None] = []
    for run in range(num_runs):
        scores = [
            float(r.score)
            for a in aggregations
            for r in a.runs
            if r.run == run and r.outcome == "valid" and r.score is not None
        ]
        run_means.append(float(np.mean(scores)) if scores else None)
    finite_run_means = [m for m in run_means if m is not None]
    std_runs = (
        _finite_or_none(float(np.std(finite_run_means, ddof=1)))
        if len(finite_run_means) >= 2
        else None
    )

    numerator = 0.0
    dof = 0
    for a in aggregations:
        n = len(a.individual_scores)
        if n >= 2:
            numerator += float(np.var(a.individual_scores, ddof=1)) * (n - 1)
            dof += n - 1
    pooled = _finite_or_none(math.sqrt(numerator / dof)) if dof else None

    return {
        "mean": mean,
        "count": len(means),
        "questions": len(aggregations),
        "std_across_runs": std_runs,
        "pooled_within_std": pooled,
        "run_means": run_means,
    }


@dataclass
class JudgeRunResult:
    """Everything a judge job produced.

    Attributes:
        per_question: question id -> :class:`JudgeAggregation` (judged questions only).
        summary: JSON-ready summary (see :func:`locomo_exp.judge.run_judge`).
        error_rate_exceeded: API-error runs / all runs > ``judge.max_error_rate``.
        dry_run_estimate: the estimate of a dry run, else ``None``.
    """

    per_question: dict[str, JudgeAggregation]
    summary: dict[str, Any]
    error_rate_exceeded: bool = False
    dry_run_estimate: dict[str, Any] | None = None

    def finished_status(self, max_error_rate: float) -> str:
        """``summary["status"]["judge"]`` of a judge job that ran to its end.

        Args:
            max_error_rate: ``judge.max_error_rate`` (0-1).

        Returns:
            ``"ok"``; ``"failed: judge API errors exceed ..."``; or ``"failed: no valid
            judge verdict ..."`` when not one call gave a verdict (every reply unparseable,
            every call an API error under a permissive ``max_error_rate``, nothing judged).
            A dry run is :data:`~locomo_exp.results.JUDGE_DRY_RUN` (it makes no call).
        """
        counts = self.summary.get("counts") or {}
        if self.error_rate_exceeded:
            return f"failed: judge API errors exceed judge.max_error_rate={max_error_rate}"
        # a reply a template's on_unparsed scored counts as a verdict here (it has a
        # score); the judge's checks warn when many replies could not be read
        if self.dry_run_estimate is None and not (
            counts.get("valid") or counts.get("unparsed_scored")
        ):
            return (
                "failed: no valid judge verdict: "
                f"{counts.get('parse_failure', 0)} parse failure(s), "
                f"{counts.get('no_verdict', 0)} reply(ies) without a verdict, "
                f"{counts.get('api_error', 0)} API error(s) out of "
                f"{counts.get('runs_total', 0)} judge run(s); J is not measured"
            )
        return "ok" if self.dry_run_estimate is None else JUDGE_DRY_RUN

    def question_json(self, question_id: str) -> dict[str, Any]:
        """Judge fields of one question for ``scores.jsonl``.

        Args:
            question_id: the question.

        Returns:
            ``{"j_mean", "j_std", "j_run_count", "j_runs": [...]}``; ``{}`` for a question
            that was not judged (e.g. category 5 by default).
        """
        agg = self.per_question.get(question_id)
        if agg is None:
            return {}
        return {
            "j_mean": agg.mean_score,
            "j_std": agg.std_dev,
            "j_run_count": agg.run_count,
            "j_runs": [r.to_json() for r in agg.runs],
        }
