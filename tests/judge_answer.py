"""Test helper: judge one answer once, or N times concurrently, through the judge's session.

The seed's per-answer functions, kept for the tests of the pool, the client and fail-fast
(the package judges lists of records: :func:`locomo_exp.judge.run_judge`).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.aggregate import JudgeAggregation, JudgeResult, aggregate_question
from locomo_exp.judge.calls import build_call_specs, verdict_reader
from locomo_exp.judge.job import open_cache
from locomo_exp.judge.preflight import check_config
from locomo_exp.llm.errors import JudgeInterrupted, PoolInterrupted
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.providers import api_version
from locomo_exp.llm.session import judge_calls_async
from locomo_exp.results import QARecord


def _single_record(
    question: str,
    ground_truth: str | None,
    predicted_answer: str,
    category: int,
    question_id: str,
) -> QARecord:
    return QARecord(
        question_id=question_id,
        question=question,
        ground_truth=None if ground_truth is None else str(ground_truth),
        prediction=predicted_answer,
        category=int(category),
    )


def _judge_one_question(
    record: QARecord,
    cfg: JudgeConfig,
    runs: list[int],
    start_dir: Path | None,
    client: JudgeClient | None,
) -> list[JudgeResult]:
    check_config(cfg)
    version = client.api_version if client is not None else api_version(cfg)
    specs = [
        s for s in build_call_specs([record], cfg, api_version=version) if s.run in set(runs)
    ]
    cache = open_cache(cfg, Path(start_dir) if start_dir is not None else Path.cwd())
    try:
        results, _ = asyncio.run(judge_calls_async(
            specs, cfg, cache=cache, reader=verdict_reader(cfg), client=client
        ))
    except PoolInterrupted as stop:
        raise JudgeInterrupted(stop.signum, stop.calls_cached) from None
    finally:
        if cache is not None:
            cache.close()
    return [results[(record.question_id, s.run)] for s in specs]


def judge_answer(
    question: str,
    ground_truth: str | None,
    predicted_answer: str,
    category: int,
    *,
    cfg: JudgeConfig | None = None,
    run: int = 0,
    start_dir: Path | None = None,
    client: JudgeClient | None = None,
) -> JudgeResult:
    """Judge one answer with one call (the seed's ``judge_answer``).

    Args:
        question: the question.
        ground_truth: the gold answer.
        predicted_answer: the answer to judge.
        category: LoCoMo category id.
        cfg: judge config (defaults: ``claude-sonnet-4-6``, temperature 0.5, rubric).
        run: run index (part of the cache key).
        start_dir: directory the cache path is resolved against (default: cwd).
        client: a client to use instead of the SDK client.

    Returns:
        The :class:`JudgeResult`: score 0-100, or ``None`` (unscored, the reason in
        ``error``) for a parse failure, a reply without a verdict, or an API error after
        retries (``outcome`` tells which).

    Raises:
        JudgeError: invalid config or missing API key.
        JudgeFatalAPIError: a non-retryable API error.
    """
    cfg = cfg or JudgeConfig()
    record = _single_record(question, ground_truth, predicted_answer, category, "q")
    return _judge_one_question(record, _with_runs(cfg, run + 1), [run], start_dir, client)[0]


def judge_answer_multiple_runs(
    question: str,
    ground_truth: str | None,
    predicted_answer: str,
    category: int,
    num_runs: int = 10,
    *,
    cfg: JudgeConfig | None = None,
    question_id: str = "q",
    start_dir: Path | None = None,
    client: JudgeClient | None = None,
) -> JudgeAggregation:
    """Judge one answer ``num_runs`` times, concurrently (the seed's multi-run function).

    Parse failures are unscored (``None`` with a reason) and, like API errors, are left
    out of the mean and standard deviation; fewer than ``cfg.min_successful_runs`` (5)
    successful runs logs a warning naming the question.

    Args:
        question: the question.
        ground_truth: the gold answer.
        predicted_answer: the answer to judge.
        category: LoCoMo category id.
        num_runs: number of runs.
        cfg: judge config (its ``runs`` is replaced by ``num_runs``).
        question_id: name used in warnings.
        start_dir: directory the cache path is resolved against (default: cwd).
        client: a client to use instead of the SDK client.

    Returns:
        :class:`JudgeAggregation` with ``mean_score``, ``std_dev`` (ddof=1), ``run_count``
        and ``individual_scores`` of the valid runs, and every run in ``runs``.

    Raises:
        JudgeError: invalid config or missing API key.
        JudgeFatalAPIError: a non-retryable API error.
    """
    cfg = _with_runs(cfg or JudgeConfig(), num_runs)
    record = _single_record(question, ground_truth, predicted_answer, category, question_id)
    runs = _judge_one_question(record, cfg, list(range(num_runs)), start_dir, client)
    return aggregate_question(
        question_id, record.category, runs, min_successful_runs=cfg.min_successful_runs
    )


def _with_runs(cfg: JudgeConfig, runs: int) -> JudgeConfig:
    return replace(cfg, runs=runs)
