"""Pacing from the API's rate-limit headers (fake server emulating a token bucket, with an
injected clock shared by the server and the pool), and a bounded drain on interruption;
for every provider, each against its own fake."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import make_judge_config
from fake_openai import openai_judge_config
from fake_server import FakeApiServer
from judge_helpers import make_records

from locomo_exp.judge.calls import build_call_specs, verdict_reader
from locomo_exp.llm.cache import JudgeCache
from locomo_exp.llm.messages import RateLimitInfo, parse_rate_limit_headers
from locomo_exp.llm.pacing import RateLimiter
from locomo_exp.llm.pool import JudgePool, PoolInterrupted
from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient
from locomo_exp.llm.providers.openai import OpenAIJudgeClient

PROVIDER_NAMES = ("anthropic", "openai")
"""Every provider is paced from its own rate-limit headers (its fake emulates the bucket)."""


class VirtualClock:
    """Time that moves only when someone sleeps: ``sleep(d)`` moves it to ``now + d``."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        wake = self.t + max(seconds, 0.0)
        await asyncio.sleep(0)
        self.t = max(self.t, wake)


def test_rate_limit_headers_are_read_with_the_seconds_until_reset() -> None:
    now = 1_800_000_000.0
    reset = datetime.fromtimestamp(now + 12.5, timezone.utc).isoformat().replace("+00:00", "Z")
    headers = {
        "anthropic-ratelimit-requests-limit": "2000",
        "anthropic-ratelimit-requests-remaining": "1234",
        "anthropic-ratelimit-requests-reset": reset,
    }
    assert parse_rate_limit_headers(headers, now=now) == RateLimitInfo(2000, 1234, 12.5)
    assert parse_rate_limit_headers({"anthropic-ratelimit-requests-remaining": "5"}) is None
    past = (datetime.fromtimestamp(now, timezone.utc) - timedelta(seconds=3)).isoformat()
    stale = {"anthropic-ratelimit-requests-remaining": "5", "anthropic-ratelimit-requests-reset": past}
    assert parse_rate_limit_headers(stale, now=now) == RateLimitInfo(None, 5, 0.0)


def test_limiter_spreads_the_remaining_budget_until_the_reset() -> None:
    clock = VirtualClock()
    limiter = RateLimiter(None, clock=clock.now, sleep=clock.sleep)
    assert limiter.interval() == 0.0  # no headers yet: no pacing
    limiter.observe(RateLimitInfo(limit=2000, remaining=1000, reset_in_s=30.0))
    assert limiter.interval() == pytest.approx(0.03)  # 30 s / 1000 requests
    limiter.in_flight = 500
    assert limiter.interval() == pytest.approx(0.06)  # 30 s / (1000 - 500 in flight)
    limiter.in_flight = 0
    clock.t += 31.0
    assert limiter.interval() == 0.0  # past the reset: the bucket is full again
    configured = RateLimiter(600, clock=clock.now, sleep=clock.sleep)
    configured.observe(RateLimitInfo(limit=None, remaining=1000, reset_in_s=1.0))
    assert configured.interval() == pytest.approx(0.1)  # judge.requests_per_minute wins


def _judge_setup(
    provider: str, request: pytest.FixtureRequest, tmp_path: Path, **overrides: Any
) -> tuple[FakeApiServer, Any, Any]:
    """The provider's fake (started), a judge config aimed at it and its SDK client."""
    if provider == "anthropic":
        server = request.getfixturevalue("fake_anthropic")
        cfg = make_judge_config(server, tmp_path, **overrides)
        client = AnthropicJudgeClient(api_key="k", temperature=0.5, base_url=server.url)
    else:
        server = request.getfixturevalue("fake_openai")
        cfg = openai_judge_config(server, tmp_path, **overrides)
        client = OpenAIJudgeClient(api_key="k", base_url=server.base_url)
    return server, cfg, client


def _run_against_bucket(
    provider: str, request: pytest.FixtureRequest, tmp_path: Path, *, pace: bool
) -> tuple[int, int]:
    server, cfg, client = _judge_setup(
        provider,
        request,
        tmp_path,
        runs=4,
        max_concurrency=8,
        max_retries=50 if pace else 3,
        max_error_rate=1.0,
        pace_from_rate_limit_headers=pace,
    )
    clock = VirtualClock()
    server.clock = clock.now
    server.rate_limit(rpm=600, burst=20)  # 10 requests/s, bursts of 20
    specs = build_call_specs(make_records(100), cfg, api_version=client.api_version)

    async def go() -> None:
        pool = JudgePool(
            client, cfg, None, reader=verdict_reader(cfg), handle_signals=False, clock=clock.now,
            sleep=clock.sleep,
        )
        try:
            results = await pool.run(specs)
        finally:
            await client.aclose()
        if pace:
            assert {r.outcome for r in results.values()} == {"valid"}

    asyncio.run(go())
    return server.status_counts.get(200, 0), server.status_counts.get(429, 0)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_pacing_from_headers_keeps_429s_under_5_percent(
    provider: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ok, limited = _run_against_bucket(provider, request, tmp_path, pace=True)
    assert ok == 400
    share = limited / (ok + limited)
    print(f"{provider}: 429 share with header pacing: {share:.3%} ({limited} of {ok + limited})")
    assert share < 0.05


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_without_header_pacing_the_same_run_hits_many_429s(
    provider: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ok, limited = _run_against_bucket(provider, request, tmp_path, pace=False)
    share = limited / (ok + limited)
    print(f"{provider}: 429 share without header pacing: {share:.3%} ({limited} of {ok + limited})")
    assert share > 0.2


@pytest.mark.parametrize(
    ("provider", "latency_s", "drain_s", "cached"),
    [
        # drain_s shorter than the calls in flight: only the canary is cached
        pytest.param("anthropic", 0.4, 0.05, 1, id="anthropic-drain-bounded"),
        # drain_s long enough: the 4 calls in flight are waited for and cached
        pytest.param("openai", 0.3, 5.0, 5, id="openai-drain-completes"),
    ],
)
def test_interrupt_drains_at_most_drain_s_then_reports_the_calls_cached(
    provider: str,
    latency_s: float,
    drain_s: float,
    cached: int,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    server, cfg, client = _judge_setup(
        provider, request, tmp_path, runs=1, max_concurrency=4, drain_s=drain_s
    )
    server.latency_s = latency_s
    specs = build_call_specs(make_records(20), cfg, api_version=client.api_version)

    async def go() -> JudgePool:
        with JudgeCache(tmp_path / "judge_cache.sqlite") as cache:
            pool = JudgePool(client, cfg, cache, reader=verdict_reader(cfg), handle_signals=False)
            # the canary completes; interrupt while the next 4 calls are in flight
            asyncio.get_running_loop().call_later(1.5 * latency_s, pool.interrupt, 15)
            try:
                with pytest.raises(PoolInterrupted) as info:
                    await pool.run(specs)
            finally:
                await client.aclose()
            assert (info.value.signum, info.value.calls_cached) == (15, cached)
            assert len(cache.get_many(s.digest for s in specs)) == cached
            assert specs[0].digest in cache.get_many([specs[0].digest])
            return pool

    pool = asyncio.run(go())
    assert pool.calls_made == 5  # nothing new started after the signal
    assert len(server.messages_requests()) == 5
