"""What a judge job's calls will cost: the dry run's estimate and the line before paid calls.

Input tokens are estimated from the prompt text (:func:`~locomo_exp.judge.preflight.
estimate_prompt_tokens`: characters / 3.5 + a per-request overhead), output tokens at a
typical reply length; cost = tokens x the model's list price (USD per million tokens,
its preset's ``judge.model_info``), batch calls at ``judge.batch.price_factor`` x it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from locomo_exp.config import JudgeConfig, JudgeMode
from locomo_exp.judge.preflight import (
    CHARS_PER_TOKEN,
    REQUEST_OVERHEAD_TOKENS,
    estimate_prompt_tokens,
)
from locomo_exp.llm.cache import BatchLedger, JudgeCache, resolve_cache_path
from locomo_exp.llm.calls import CallSpec
from locomo_exp.llm.errors import JudgeError
from locomo_exp.llm.models import model_price, prompt_limit
from locomo_exp.llm.providers import endpoint
from locomo_exp.llm.spend import cost_usd

logger = logging.getLogger(__name__)

ESTIMATED_OUTPUT_TOKENS = 60
"""Typical output tokens of one judge reply (a short JSON object), for dry-run estimates."""



def typical_output_tokens(cfg: JudgeConfig) -> int:
    """Output tokens of one reply as a dry run counts them (tokens).

    Returns:
        The lower of :data:`ESTIMATED_OUTPUT_TOKENS` and ``judge.max_tokens`` (a reply never
        exceeds its cap: a yes/no protocol may cap it at 10).
    """
    return min(ESTIMATED_OUTPUT_TOKENS, int(cfg.max_tokens))


def _stored_and_flying(specs: list[CallSpec], cache: JudgeCache) -> tuple[set[str], set[str]]:
    """Digests of the calls the cache holds, and of those in batches still processing."""
    stored = set(cache.get_many(s.digest for s in specs))
    # calls in batches still processing are not made again, in either mode
    flying = set(BatchLedger(cache).in_flight(s.digest for s in specs if s.digest not in stored))
    return stored, flying


def dry_run_estimate(
    specs: list[CallSpec], cfg: JudgeConfig, start_dir: Path, *, cache: JudgeCache | None = None
) -> dict[str, Any]:
    """The calls a job would make, their tokens and cost at list price (no call made).

    Args:
        specs: every call of the job (answers x runs).
        cfg: the judge config.
        start_dir: where a relative ``judge.cache_path`` is resolved.
        cache: the job's cache, already open (read through its connection); ``None``:
            the file of ``judge.cache_path`` is opened here when it exists.

    Returns:
        ``calls_total``, ``calls_cached``, ``calls_to_make``, estimated input and output
        tokens, ``max_output_tokens``, ``estimated_cost_usd`` and ``cost_upper_bound_usd``
        (USD, every reply at ``judge.max_tokens``: an upper bound, not the spend cap
        ``judge.max_cost_usd``; ``None`` without a price), ``assumptions``;
        ``calls_in_flight`` in batch mode;
        ``prompts_over_max_prompt_tokens`` when some prompts are estimated above the
        prompt limit (``judge.max_prompt_tokens``, else the model's context window) without
        being clearly over it: they are sent and priced (the API may accept them; a prompt
        clearly over the limit is refused before any call,
        :func:`~locomo_exp.judge.preflight.refuse_too_long_prompts`).
    """
    stored: set[str] = set()
    flying: set[str] = set()
    batch = JudgeMode(cfg.mode) is JudgeMode.batch
    if cache is not None:
        stored, flying = _stored_and_flying(specs, cache)
    elif cfg.cache:
        path = resolve_cache_path(cfg.cache_path, start_dir)
        if path.exists():
            with JudgeCache(path) as opened:
                stored, flying = _stored_and_flying(specs, opened)
    cached = len([s for s in specs if s.digest in stored])
    in_flight = len([s for s in specs if s.digest in flying])
    to_make = [s for s in specs if s.digest not in stored and s.digest not in flying]
    to_call = len(to_make)
    tokens_of = {id(s): estimate_prompt_tokens(s.request.system, s.request.prompt) for s in specs}
    limit = prompt_limit(cfg)  # the model's context window unless set; None: not known
    overlong = sorted(
        {s.question_id for s in specs if limit is not None and tokens_of[id(s)] > limit}
    )
    # a prompt clearly over the limit is refused before any call (preflight_judge): every
    # prompt left will be sent, and one the API accepts is billed, so every prompt is priced
    billable = to_make
    input_tokens = sum(tokens_of[id(s)] for s in billable)
    per_reply = typical_output_tokens(cfg)  # the figure used is the figure printed
    output_typical = len(billable) * per_reply
    output_max = len(billable) * cfg.max_tokens
    price = model_price(cfg)
    factor = float(cfg.batch.price_factor) if batch else 1.0
    estimate: dict[str, Any] = {
        "calls_total": len(specs),
        "calls_cached": cached,
        "calls_to_make": to_call,
        "estimated_input_tokens": input_tokens,
        "estimated_output_tokens": output_typical,
        "max_output_tokens": output_max,
        "estimated_cost_usd": cost_usd(price, input_tokens, output_typical, factor),
        "cost_upper_bound_usd": cost_usd(price, input_tokens, output_max, factor),
        "assumptions": (
            f"{CHARS_PER_TOKEN} characters per input token + {REQUEST_OVERHEAD_TOKENS} per "
            f"request; {per_reply} output tokens per reply typical (the lower of "
            f"{ESTIMATED_OUTPUT_TOKENS} and judge.max_tokens={cfg.max_tokens}), max_tokens at "
            "most" + (f"; batch prices ({factor:g} x list price)" if batch else "")
        ),
    }
    if batch or in_flight:
        estimate["calls_in_flight"] = in_flight
    if overlong:
        estimate["prompts_over_max_prompt_tokens"] = list(overlong)
    return estimate


def announce_cost(estimate: dict[str, Any], cfg: JudgeConfig) -> None:
    """Say what the calls about to be made will cost, and refuse them over the spend cap.

    Logged (the console shows it) before the first call of a paid run, so a user can stop
    it: ``judge: about to make 15674 calls (0 cached), est. $41.71 at list price (at most
    $52.30)``; against a custom ``judge.base_url`` the list price may not apply.

    Args:
        estimate: :func:`dry_run_estimate` of the job's calls (answers only; the audit's
            controls add at most ``judge.audit.max_share`` of them).
        cfg: the judge config (``max_cost_usd``: the cap, USD, or ``None``).

    Raises:
        JudgeError: ``judge.max_cost_usd`` is set and the estimate exceeds it, or no price
            is known for the model (the cap cannot be checked); no call was made.
    """
    cost = estimate["estimated_cost_usd"]
    words = price_words(cfg)
    cap = cfg.max_cost_usd
    money = (
        "cost not estimated (no price for the model)" if cost is None
        else f"est. ${cost:.4f} {words} (at most ${estimate['cost_upper_bound_usd']:.4f})"
    )
    logger.info(
        "judge: about to make %d calls (%d of %d cached), %s%s",
        estimate["calls_to_make"], estimate["calls_cached"], estimate["calls_total"], money,
        "" if cap is None else f"; judge.max_cost_usd={cap:g}",
    )
    refuse_over_cap(estimate, cfg)


def refuse_over_cap(estimate: dict[str, Any], cfg: JudgeConfig) -> None:
    """Refuse calls whose estimated cost exceeds ``judge.max_cost_usd`` (no cap: nothing).

    Args:
        estimate: :func:`dry_run_estimate` of the calls.
        cfg: the judge config.

    Raises:
        JudgeError: the estimate (USD, answer calls still to make) exceeds the cap, or the
            model has no price so the cap cannot be checked.
    """
    cap = cfg.max_cost_usd
    cost = estimate["estimated_cost_usd"]
    if cap is None or estimate["calls_to_make"] == 0:
        return
    if cost is None:
        raise JudgeError(
            f"judge.max_cost_usd={cap:g} cannot be checked: no price for model {cfg.model} "
            "(its preset's judge.model_info); no call was made. Set judge.max_cost_usd=null "
            "to run without a cap"
        )
    if cost > cap:
        raise JudgeError(
            f"judge.max_cost_usd={cap:g}: the {estimate['calls_to_make']} calls to make are "
            f"estimated at ${cost:.4f} {price_words(cfg)}, above the cap; no call was made "
            "(judge.dry_run=true shows the estimate; raise the cap, lower judge.runs or "
            "data.limit)"
        )


def price_words(cfg: JudgeConfig) -> str:
    """``at list price``, or a warning that a custom endpoint's price may differ."""
    if endpoint(cfg)["endpoint_kind"] == "custom":
        return "at the model's list price (custom endpoint judge.base_url: it may not apply)"
    return "at list price"


def fmt_cost(cost: float | None) -> str:
    """A cost in USD with 2 decimals, or ``n/a (no price for the model)``."""
    return "n/a (no price for the model)" if cost is None else f"{cost:.2f}"


__all__ = [
    "ESTIMATED_OUTPUT_TOKENS",
    "announce_cost",
    "dry_run_estimate",
    "fmt_cost",
    "price_words",
    "refuse_over_cap",
    "typical_output_tokens",
]
