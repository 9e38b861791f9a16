"""The judges' HTTP transport: the SDKs' aiohttp client, and its errors classified by what happened.

Both SDKs are built with their documented ``DefaultAioHttpClient`` (about a third less CPU
per call than their default httpx transport, ``benchmarks/judge_throughput.py``). Their
aiohttp transports map aiohttp's errors to httpx errors coarsely (anthropic's calls a
dropped connection a ``ConnectError``, openai's calls every connection error a
``ConnectTimeout``), so the classification reads the aiohttp error underneath: these tests
drive the real SDKs at a closed port and at a fake server that drops the connection.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from fake_anthropic import FAKE_API_KEY, FakeAnthropicServer
from fake_openai import FAKE_OPENAI_KEY, FakeOpenAIServer
from fake_server import dropped

from locomo_exp.llm.errors import JudgeCallError
from locomo_exp.llm.messages import JudgeReply, JudgeRequest


def _client(provider: str, base_url: str) -> Any:
    if provider == "anthropic":
        from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient

        return AnthropicJudgeClient(
            api_key=FAKE_API_KEY, temperature=0.0, base_url=base_url, timeout_s=10.0
        )
    from locomo_exp.llm.providers.openai import OpenAIJudgeClient

    return OpenAIJudgeClient(api_key=FAKE_OPENAI_KEY, base_url=base_url, timeout_s=10.0)


def _call(provider: str, base_url: str) -> JudgeReply:
    model = "claude-sonnet-4-6" if provider == "anthropic" else "gpt-4o-mini-2024-07-18"

    async def go() -> JudgeReply:
        client = _client(provider, base_url)
        try:
            reply: JudgeReply = await client.complete(
                JudgeRequest(model, "sys", "prompt", 64, 0.0)
            )
            return reply
        finally:
            await client.aclose()

    return asyncio.run(go())


def _closed_port_url(provider: str) -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}" + ("" if provider == "anthropic" else "/v1")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_sdk_client_uses_the_aiohttp_transport(provider: str) -> None:
    client = _client(provider, _closed_port_url(provider))
    transport = client._client._client._transport  # the SDK's http client's transport
    assert type(transport).__name__ == "AiohttpTransport"
    asyncio.run(client.aclose())


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_refused_connection_is_connect_not_timeout(provider: str) -> None:
    url = _closed_port_url(provider)
    with pytest.raises(JudgeCallError) as caught:
        _call(provider, url)
    assert caught.value.kind == "connect" and caught.value.retryable
    assert "Cannot connect to host 127.0.0.1" in str(caught.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_dropped_open_connection_is_connection_not_connect_or_timeout(
    provider: str, fake_anthropic: FakeAnthropicServer, fake_openai: FakeOpenAIServer
) -> None:
    server: Any = fake_anthropic if provider == "anthropic" else fake_openai
    server.script(dropped())
    url = server.url if provider == "anthropic" else server.base_url
    with pytest.raises(JudgeCallError) as caught:
        _call(provider, url)
    assert caught.value.kind == "connection" and caught.value.retryable
    assert "timed out" not in str(caught.value)
