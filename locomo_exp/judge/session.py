"""The client of a judge job: the SDK client built from the config, or the caller's."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator

from locomo_exp.config import JudgeConfig
from locomo_exp.judge.client import AnthropicJudgeClient, JudgeClient
from locomo_exp.judge.errors import JudgeError
from locomo_exp.judge.preflight import API_KEY_ENV


def make_client(cfg: JudgeConfig) -> AnthropicJudgeClient:
    """Build the SDK-backed client from the config and ``ANTHROPIC_API_KEY``.

    Raises:
        JudgeError: if ``ANTHROPIC_API_KEY`` is not set.
    """
    api_key = os.environ.get(API_KEY_ENV)
    if not api_key:
        raise JudgeError(f"{API_KEY_ENV} is not set; export your Anthropic API key")
    return AnthropicJudgeClient(
        api_key=api_key,
        temperature=cfg.temperature,
        base_url=cfg.base_url,
        timeout_s=cfg.timeout_s,
        create_batch_timeout_s=cfg.batch.create_timeout_s,
    )


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
        JudgeError: no client given and ``ANTHROPIC_API_KEY`` is not set.
    """
    if client is not None:
        yield client
        return
    own = make_client(cfg)
    try:
        yield own
    finally:
        await own.aclose()
