"""A whole judge job: :func:`run_judge` and the seed's per-answer functions.

:func:`run_judge` validates (:mod:`.preflight`), builds one call per judged question and
run, runs them through the pool (:mod:`.pool`) with the cache (:mod:`.cache`), and
aggregates (:mod:`.aggregate`). ``judge.dry_run`` stops before any call and estimates the
calls, tokens and cost instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from locomo_exp.benchmark.locomo import DEFAULT_CATEGORY_NAMES
from locomo_exp.config import JudgeConfig, JudgeMode
from locomo_exp.judge.aggregate import (
    JudgeAggregation,
    JudgeResult,
    JudgeRunResult,
    aggregate_question,
    group_j,
)
from locomo_exp.judge.batch_collect import calls_in_batches, collect_batches_async
from locomo_exp.judge.calls import build_call_specs, verdict_reader
from locomo_exp.judge.estimate import (
    announce_cost,
    dry_run_estimate,
    fmt_cost,
)
from locomo_exp.judge.parsing import PARSER_VERSION
from locomo_exp.judge.preflight import (
    judged_records,
    preflight_judge,
)
from locomo_exp.judge.prompt_book import PromptBook
from locomo_exp.judge.protocols import protocol_spec
from locomo_exp.judge.protocols.template import template_card
from locomo_exp.judge.spend import JobSpend
from locomo_exp.llm.batch import BatchRunInfo, judge_batch_async
from locomo_exp.llm.cache import JudgeCache, resolve_cache_path
from locomo_exp.llm.cache.health import check_room, open_checked_cache
from locomo_exp.llm.errors import JudgeInterrupted
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.models import model_price, uses_structured_output
from locomo_exp.llm.pool import PoolInterrupted
from locomo_exp.llm.providers import api_version as provider_api_version
from locomo_exp.llm.providers import endpoint
from locomo_exp.llm.session import judge_calls_async
from locomo_exp.llm.spend import cost_usd
from locomo_exp.llm.stop import CallsStop, CallsStopped
from locomo_exp.results import QARecord
from locomo_exp.results.template_note import parse_failure_words
from locomo_exp.results.words import counted

logger = logging.getLogger(__name__)

def open_cache(cfg: JudgeConfig, start_dir: Path) -> JudgeCache | None:
    """The judge cache of ``cfg`` (``judge.cache_path`` resolved against ``start_dir``).

    Returns:
        An open :class:`~locomo_exp.llm.cache.JudgeCache`, or ``None`` with
        ``judge.cache=false``.
    """
    if not cfg.cache:
        return None
    return JudgeCache(resolve_cache_path(cfg.cache_path, start_dir))


def _summary_header(cfg: JudgeConfig, api_version: str) -> dict[str, Any]:
    spec = protocol_spec(cfg)
    template = template_card(spec)
    where = endpoint(cfg)
    return {
        "protocol": spec.name,
        "prompt_version": spec.prompt_version,
        **({"template": template} if template else {}),
        "krippendorff_level": spec.krippendorff_level,
        "parser_version": PARSER_VERSION,
        "provider": where["provider"],
        "endpoint": where["endpoint"],
        "endpoint_kind": where["endpoint_kind"],
        "model": cfg.model,
        "temperature": cfg.temperature,
        "api_version": api_version,
        "max_tokens": cfg.max_tokens,
        "structured_output": uses_structured_output(cfg),
        "runs": cfg.runs,
        "mode": JudgeMode(cfg.mode).value,
        "categories": [int(c) for c in cfg.categories],
    }


def build_run_result(
    results: dict[tuple[str, int], JudgeResult],
    records: list[QARecord],
    cfg: JudgeConfig,
    *,
    api_version: str,
    calls_made: int,
    category_names: dict[int, str],
    cache_path: Path | None = None,
    wall_time_s: float | None = None,
    batch: BatchRunInfo | None = None,
) -> JudgeRunResult:
    """Aggregate per-run results into a :class:`JudgeRunResult`.

    Args:
        results: ``(question_id, run) -> result``.
        records: the judged records.
        cfg: the judge config.
        api_version: API version the calls carried.
        calls_made: API requests sent by this job (retries included).
        category_names: display names by category id (unused: MLflow names are built by
            :mod:`locomo_exp.tracking`).
        cache_path: the cache file, if any (reported).
        wall_time_s: duration of the judging, seconds (reported).
        batch: what the batch side did (``judge.mode=batch``), reported as
            ``summary["batch"]``, the ``judge.batch_ids`` param and tags.

    Returns:
        The result, with its summary. Cost: tokens of batch replies at
        ``judge.batch.price_factor`` x the list price, others at list price.
    """
    per_question: dict[str, JudgeAggregation] = {}
    for record in records:
        runs = [
            results[(record.question_id, run)]
            for run in range(cfg.runs)
            if (record.question_id, run) in results
        ]
        per_question[record.question_id] = aggregate_question(
            record.question_id, record.category, runs, min_successful_runs=cfg.min_successful_runs
        )
    all_runs = [r for agg in per_question.values() for r in agg.runs]
    j: dict[str, Any] = {}
    for category in sorted({int(c) for c in cfg.categories}):
        group = [a for a in per_question.values() if a.category == category]
        if group:
            j[str(category)] = group_j(group, cfg.runs)
    j["overall"] = group_j(list(per_question.values()), cfg.runs)

    fresh = [r for r in all_runs if not r.cached and r.outcome != "api_error"]
    cached = [r for r in all_runs if r.cached]
    price = model_price(cfg)
    tokens = {
        "input": sum(r.input_tokens for r in fresh),
        "output": sum(r.output_tokens for r in fresh),
        "cached_input": sum(r.input_tokens for r in cached),
        "cached_output": sum(r.output_tokens for r in cached),
        "batch_input": sum(r.input_tokens for r in fresh if r.batch_id),
        "batch_output": sum(r.output_tokens for r in fresh if r.batch_id),
    }
    factor = float(cfg.batch.price_factor)
    cost = _runs_cost(fresh, price, factor)
    cost_all = _runs_cost(fresh + cached, price, factor)
    unknown = sum(not r.usage_known for r in fresh + cached)
    if unknown:  # replies without token usage: their tokens and cost are unknown, not 0
        tokens["unknown_usage_calls"] = unknown
        cost_all = None
        if any(not r.usage_known for r in fresh):
            cost = None
            logger.warning(
                "judge: tokens: unknown, cost: unknown (%s made; the server's replies carry "
                "no token usage)",
                counted(calls_made, "call"),
            )
    if price is None:
        logger.warning(
            "judge: no price for model %s (its preset's judge.model_info); cost not estimated",
            cfg.model,
        )
    too_long = [
        agg.question_id
        for agg in per_question.values()
        if any(r.outcome == "api_error" and "prompt_too_long" in r.error for r in agg.runs)
    ]
    too_long_runs = sum(r.outcome == "api_error" and "prompt_too_long" in r.error for r in all_runs)
    unparsed_scored = sum(r.unparsed_scored for r in all_runs)
    counts = {
        # a reply the judge's parser read; one scored by a template's on_unparsed is not
        "valid": sum(r.outcome == "valid" for r in all_runs) - unparsed_scored,
        # every reply that could not be read, unscored or scored by on_unparsed
        "parse_failure": sum(r.outcome == "parse_failure" for r in all_runs) + unparsed_scored,
        "no_verdict": sum(r.outcome == "no_verdict" for r in all_runs),
        "api_error": sum(r.outcome == "api_error" for r in all_runs),
        "prompt_too_long": too_long_runs,
        "calls_made": calls_made,
        "cache_hits": len(cached),
        "runs_total": len(all_runs),
    }
    if protocol_spec(cfg).unparsed_score is not None:  # a template's on_unparsed: {score: N}
        counts["unparsed_scored"] = unparsed_scored  # of the parse failures
    # a prompt the API rejects as too long is that question's problem, not the API's
    error_rate = (counts["api_error"] - too_long_runs) / len(all_runs) if all_runs else 0.0
    summary: dict[str, Any] = {
        **_summary_header(cfg, api_version),
        "questions": len(per_question),
        "j": j,
        "counts": counts,
        "api_error_rate": error_rate,
        **answering_models(all_runs),
        "prompt_too_long_questions": too_long,
        "stop_reasons": _stop_reasons(all_runs),
        "tokens": tokens,
        "estimated_cost_usd": cost,
        "estimated_cost_usd_including_cached": cost_all,
        "price_usd_per_mtok": price,
        "cache_path": str(cache_path) if cache_path else None,
        "wall_time_s": wall_time_s,
    }
    if batch is not None:
        summary["batch"] = {**batch.to_json(), "price_factor": factor}
    return JudgeRunResult(
        per_question=per_question,
        summary=summary,
        error_rate_exceeded=error_rate > cfg.max_error_rate,
    )


def answering_models(runs: list[JudgeResult]) -> dict[str, Any]:
    """The snapshot(s) the API answered with (each reply's ``model``), fresh and cached.

    Returns:
        ``{"model_snapshot": the most frequent one or None, "response_models": {id: runs}}``.
    """
    counts: dict[str, int] = {}
    for run in runs:
        if run.model:
            counts[run.model] = counts.get(run.model, 0) + 1
    ordered = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    return {"model_snapshot": next(iter(ordered), None), "response_models": ordered}


def _stop_reasons(runs: list[JudgeResult]) -> dict[str, int]:
    """How many runs ended with each API stop reason (``none`` for API errors)."""
    counts: dict[str, int] = {}
    for run in runs:
        key = run.stop_reason or "none"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _runs_cost(
    runs: list[JudgeResult], price: dict[str, float] | None, batch_factor: float
) -> float | None:
    """Cost of runs' tokens in USD: batch replies at ``batch_factor`` x list price.

    Args:
        runs: the runs.
        price: the model's price entry (USD per million tokens), or ``None``.
        batch_factor: ``judge.batch.price_factor``.

    Returns:
        The cost, or ``None`` without a price.
    """
    realtime = [r for r in runs if not r.batch_id]
    batched = [r for r in runs if r.batch_id]
    cost_rt = cost_usd(
        price, sum(r.input_tokens for r in realtime), sum(r.output_tokens for r in realtime)
    )
    cost_b = cost_usd(
        price,
        sum(r.input_tokens for r in batched),
        sum(r.output_tokens for r in batched),
        batch_factor,
    )
    if cost_rt is None or cost_b is None:
        return None
    return cost_rt + cost_b


def run_judge(
    records: list[QARecord],
    cfg: JudgeConfig,
    *,
    start_dir: Path,
    category_names: dict[int, str] | None = None,
    client: JudgeClient | None = None,
    on_calls_start: Callable[[], object] | None = None,
    calls_stop: CallsStop | None = None,
    spend: JobSpend | None = None,
    prompts: PromptBook | None = None,
    cache: JudgeCache | None = None,
) -> JudgeRunResult:
    """Judge every record in ``judge.categories``, ``judge.runs`` times each.

    Args:
        records: the answered questions (others than ``judge.categories`` are skipped).
        cfg: the judge config.
        start_dir: directory relative cache paths are resolved against (the program's
            start directory, not Hydra's run directory).
        category_names: display names by category id (unused: MLflow names are built by
            :mod:`locomo_exp.tracking`).
        client: a :class:`~locomo_exp.llm.messages.JudgeClient` to use instead of the
            Anthropic SDK client built from the config (tests, other transports).
        on_calls_start: called once, right before the calls (the provider's SDK imported,
            the cache checked; not with ``judge.dry_run``): the job starts there the work
            that can overlap the wait on the network (its MLflow run).
        calls_stop: set by another thread (the MLflow run's) to stop paying: no new
            realtime call, no new batch (batches already submitted keep processing).
        spend: the job's ``judge.max_cost_usd`` over all its parts
            (:func:`~locomo_exp.judge.spend.plan_job_spend`); ``None``: this call alone is
            capped (when ``judge.max_cost_usd`` is set). It sets ``calls_stop`` at the cap.
        prompts: the job's prompts built so far (the pipeline's preflight built them for
            its checks, :class:`~locomo_exp.judge.prompt_book.PromptBook`): each is reused,
            byte for byte, instead of built again; ``None``: built here.
        cache: the job's cache, opened and probed by its preflight
            (:func:`~locomo_exp.llm.cache.health.open_existing_cache`; the caller closes
            it): used, without a second open or probe, when it is the file of
            ``judge.cache_path``; ``None`` (or another file): opened and checked here.

    Returns:
        A :class:`JudgeRunResult`. With ``judge.dry_run`` no call is made; the result has
        ``dry_run_estimate`` (calls, estimated tokens and cost) and an empty J.

    Raises:
        JudgeError: invalid config (see :func:`preflight_judge`).
        JudgeFatalAPIError: a non-retryable API error (400 other than "prompt is too
            long", 401, 403, 404); everything completed before it is in the cache.
        JudgeJobStopped: the API cannot be reached (first call, or
            ``judge.max_consecutive_connection_errors`` failures in a row), or API errors
            already exceed ``judge.max_error_rate``; completed calls are cached.
        JudgeInterrupted: SIGINT/SIGTERM; calls in flight were waited for (up to
            ``judge.drain_s``) and cached.
        CallsStopped: ``calls_stop`` was set, or the spend cap stopped the job (before
            this part's first call when something was paid already); realtime calls in
            flight were waited for and cached, batches submitted are collected by the
            next run; one line with the reason and the calls made and left.
        JudgeBatchPending: ``judge.mode=batch`` with ``judge.batch.wait=false`` and
            batches still processing (submitted and recorded; not an error). Running the
            same call again collects them.
    """
    names = category_names or DEFAULT_CATEGORY_NAMES
    path = resolve_cache_path(cfg.cache_path, start_dir)
    given = cache if cfg.cache and cache is not None and cache.path == path else None
    # each prompt built once per job: in the pipeline's preflight (kept in ``prompts``);
    # the cache file opened and probed once per job: in its preflight (``given``)
    built = preflight_judge(cfg, records, start_dir=None if given else start_dir,
                            prompts=prompts)
    judged = judged_records(records, cfg)
    api_version = client.api_version if client is not None else provider_api_version(cfg)
    specs = build_call_specs(judged, cfg, api_version=api_version, prompts=built)

    if cfg.dry_run:
        estimate = dry_run_estimate(specs, cfg, start_dir, cache=given)
        logger.info(
            "judge dry run: %d calls (%d cached, %d to make), ~%d input and ~%d output tokens "
            "(at most %d), estimated cost %s USD (at most %s)",
            estimate["calls_total"],
            estimate["calls_cached"],
            estimate["calls_to_make"],
            estimate["estimated_input_tokens"],
            estimate["estimated_output_tokens"],
            estimate["max_output_tokens"],
            fmt_cost(estimate["estimated_cost_usd"]),
            fmt_cost(estimate["cost_upper_bound_usd"]),
        )
        summary = {
            **_summary_header(cfg, api_version),
            "questions": len(judged),
            "j": {},
            "counts": {
                "valid": 0,
                "parse_failure": 0,
                "api_error": 0,
                "calls_made": 0,
                "cache_hits": 0,
            },
            "tokens": {"input": 0, "output": 0},
            # no "estimated_cost_usd": nothing was paid; the estimate is the cost to read
            "dry_run_estimate": estimate,
        }
        return JudgeRunResult(
            per_question={},
            summary=summary,
            dry_run_estimate=estimate,
        )

    # opened, written, read back, free space: before the first paid call; this one
    # connection then serves the estimate and the calls (open_checked_cache); the job's
    # own, probed by its preflight, is checked for free space only
    if given is not None:
        check_room(given, specs, int(cfg.max_tokens))
    cache = given or (
        open_checked_cache(path, specs, int(cfg.max_tokens)) if cfg.cache else None
    )
    owned = cache is not None and given is None  # closed here; the job closes its own
    try:
        estimate = dry_run_estimate(specs, cfg, start_dir, cache=cache)
        if spend is None and cfg.max_cost_usd is not None:  # this call is the whole job
            spend = JobSpend(cfg.max_cost_usd, stop=calls_stop)
        if spend is not None:  # paid so far + this part + the later parts: the whole job
            calls_stop = spend.share_stop(calls_stop)  # one signal: the cap's and the caller's
            refused = spend.begin(cfg, estimate)  # raises when nothing was paid yet
            if refused is not None:
                calls_stop.set(refused)
                raise CallsStopped(
                    refused,
                    calls_made=0,
                    calls_left=estimate["calls_to_make"],
                    calls_total=len(specs),
                )
        announce_cost(estimate, cfg)  # may refuse: max_cost_usd
    except BaseException:
        if owned and cache is not None:
            cache.close()
        raise
    if on_calls_start is not None:
        on_calls_start()
    started = time.monotonic()
    batch_info: BatchRunInfo | None = None
    try:
        if JudgeMode(cfg.mode) is JudgeMode.batch:
            results, batch_info = asyncio.run(
                judge_batch_async(
                    specs, cfg, cache=cache, reader=verdict_reader(cfg), client=client,
                    calls_stop=calls_stop, spend=spend,
                )
            )
            if spend is not None:  # collected, paid at batch prices (the canary counted)
                spend.add(r for r in results.values() if r.batch_id)
            calls_made = batch_info.requests_submitted + batch_info.realtime_calls
        else:
            if cache is not None and calls_in_batches(specs, cache):  # never pay twice
                asyncio.run(
                    collect_batches_async(
                        specs, cfg, cache=cache, client=client, calls_stop=calls_stop
                    )
                )
            results, calls_made = asyncio.run(
                judge_calls_async(
                    specs,
                    cfg,
                    cache=cache,
                    reader=verdict_reader(cfg),
                    client=client,
                    stop_on_error_rate=True,
                    calls_stop=calls_stop,
                    on_paid=None if spend is None else spend.on_paid,
                    before_call=None if spend is None else spend.before_call,
                )
            )
    except PoolInterrupted as stop:
        raise JudgeInterrupted(stop.signum, stop.calls_cached) from None
    finally:
        if owned and cache is not None:
            cache.close()
    result = build_run_result(
        results,
        judged,
        cfg,
        api_version=api_version,
        calls_made=calls_made,
        category_names=names,
        cache_path=cache.path if cache is not None else None,
        wall_time_s=time.monotonic() - started,
        batch=batch_info,
    )
    if result.summary["prompt_too_long_questions"]:
        logger.warning(
            "judge: the API rejected the prompt as too long for %s, J n/a: %s",
            counted(len(result.summary["prompt_too_long_questions"]), "question"),
            ", ".join(result.summary["prompt_too_long_questions"]),
        )
    overall = result.summary["j"]["overall"]
    repeated = len(specs) - len({spec.digest for spec in specs})  # identical prompts
    logger.info(
        "judge: J overall %s over %d questions; %d valid, parse failures %s, %d API errors; "
        "%d calls made, %d cache hits%s",
        "n/a" if overall["mean"] is None else f"{overall['mean']:.2f}",
        overall["count"],
        result.summary["counts"]["valid"],
        parse_failure_words(result.summary),
        result.summary["counts"]["api_error"],
        result.summary["counts"]["calls_made"],
        result.summary["counts"]["cache_hits"],
        f" ({repeated} calls repeat an identical prompt of this job: judged once, the repeat "
        "read from the cache)"
        if repeated
        else "",
    )
    return result
