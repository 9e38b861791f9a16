"""A judge job's client session: the client from the config or the caller, and one pool run."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from locomo_exp.config import JudgeConfig
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.llm.calls import CallSpec, R, ReplyReader
from locomo_exp.llm.messages import JudgeClient
from locomo_exp.llm.pool import JudgePool
from locomo_exp.llm.providers import make_client
from locomo_exp.llm.stop import CallsStop


@contextlib.asynccontextmanager
async def judge_client(
    cfg: JudgeConfig, client: JudgeClient | None = None
) -> AsyncIterator[JudgeClient]:
    """Use ``client``, or build one with :func:`make_client` and close it on exit.

    Args:
        cfg: the judge config (for a client built here).
        client: a caller's client; it is left open (the caller owns it).

    Yields:
        The client to use.

    Raises:
        JudgeError: no client given, and the provider's SDK is missing or its key's
            environment variable is not set (:func:`~locomo_exp.llm.providers.make_client`).
    """
    if client is not None:
        yield client
        return
    own = make_client(cfg)
    try:
        yield own
    finally:
        await own.aclose()


async def judge_calls_async(
    specs: list[CallSpec],
    cfg: JudgeConfig,
    *,
    cache: JudgeCache | None,
    reader: ReplyReader[R],
    client: JudgeClient | None = None,
    stop_on_error_rate: bool = False,
    calls_stop: CallsStop | None = None,
    on_paid: Callable[[R], object] | None = None,
    before_call: Callable[[int], object] | None = None,
) -> tuple[dict[tuple[str, int], R], int]:
    """Run specs through a :class:`JudgePool`, creating (and closing) a client if needed.

    Args:
        specs: the calls.
        cfg: the judge config.
        cache: the open cache, or ``None``.
        reader: turns replies and failures into results (see :class:`JudgePool`).
        client: a client to use instead of one built from the config.
        stop_on_error_rate: see :class:`JudgePool`.
        calls_stop: set by another thread to stop new calls (see :class:`JudgePool`).
        on_paid: called with each call's result as it is made (not cached ones): the spend
            cap (:meth:`~locomo_exp.judge.spend.JobSpend.on_paid`).
        before_call: called before each call is sent with the calls in flight (the spend
            cap, :meth:`~locomo_exp.judge.spend.JobSpend.before_call`; it may set
            ``calls_stop``).

    Returns:
        ``(results, calls_made)``; ``calls_made`` counts API requests sent, retries included.

    Raises:
        JudgeFatalAPIError: at the first non-retryable API error.
        JudgeJobStopped: endpoint unreachable, or error rate exceeded (see
            :meth:`JudgePool.run`).
        PoolInterrupted: SIGINT/SIGTERM.
        CallsStopped: ``calls_stop`` was set; completed calls are cached.
    """
    async with judge_client(cfg, client) as active:
        pool = JudgePool(
            active, cfg, cache, reader=reader, stop_on_error_rate=stop_on_error_rate,
            calls_stop=calls_stop,
        )
        pool.on_paid, pool.before_call = on_paid, before_call
        results = await pool.run(specs)
    return results, pool.calls_made
