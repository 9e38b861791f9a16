"""Judge providers: one module per API, the only one importing its SDK; this is the registry.

``judge.provider`` names an entry of :data:`PROVIDERS`. Each entry says where its client
lives (a module with ``make_client``), which SDK and pip extra it needs, where its key and
base URL come from by default, and the ``api_version`` part of the cache key. Nothing here
imports an SDK: a dry run, the preflight and the registry tests need none.

Adding a provider = one module (implementing :class:`~locomo_exp.llm.messages.JudgeBatchClient`
and ``make_client``), one :data:`PROVIDERS` entry, and its presets in ``conf/judge/``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit, urlunsplit

from locomo_exp.llm.errors import JudgeError

if TYPE_CHECKING:
    from locomo_exp.config import JudgeConfig
    from locomo_exp.llm.messages import JudgeBatchClient

AUTO_KEY_ENV = "auto"
"""``judge.api_key_env`` value meaning "the provider's own variable" (the default)."""

NO_KEY_PLACEHOLDER = "no-key"
"""Sent as the key when ``judge.api_key_env=null`` (the SDKs require a non-empty string)."""


def _anthropic_api_version(temperature: float | None) -> str:
    # the anthropic SDK is a core dependency: importing the provider module is always possible
    from locomo_exp.llm.providers.anthropic import api_version_for

    return api_version_for(temperature)


OPENAI_CHAT_API_VERSION = "chat-completions-v1"
"""The ``api_version`` cache-key field of OpenAI Chat Completions calls (no header is sent)."""

_REASONING_RE = re.compile(r"^(o\d|gpt-5)")


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` is an OpenAI reasoning model (``o1``, ``o3-mini``, ``gpt-5``, ...).

    Such models reject ``temperature`` and take ``max_completion_tokens`` instead of
    ``max_tokens`` (OpenAI API reference, "Chat Completions").
    """
    return bool(_REASONING_RE.match(str(model).strip().lower()))


@dataclass(frozen=True)
class ProviderSpec:
    """One judge provider.

    Attributes:
        name: the ``judge.provider`` value.
        title: the API's name for messages and the card ("Anthropic Messages API").
        module: the module with ``make_client(cfg, api_key, base_url)``.
        sdk: the import name of its SDK.
        extra: the pip extra that installs the SDK (``None``: a core dependency).
        key_env: the environment variable the key is read from by default.
        base_url_env: the environment variable of a custom base URL.
        default_base_url: the API's own URL (reported as the "default" endpoint).
        api_version: temperature -> the ``api_version`` field of the cache key.
        max_batch_requests: the Batch API's limit on requests per batch.
        max_batch_bytes: the Batch API's limit on one batch's size, bytes.
    """

    name: str
    title: str
    module: str
    sdk: str
    extra: str | None
    key_env: str
    base_url_env: str
    default_base_url: str
    api_version: Callable[[float | None], str]
    max_batch_requests: int
    max_batch_bytes: int


PROVIDERS: dict[str, ProviderSpec] = {
    "anthropic": ProviderSpec(
        name="anthropic",
        title="Anthropic Messages API",
        module="locomo_exp.llm.providers.anthropic",
        sdk="anthropic",
        extra=None,
        key_env="ANTHROPIC_API_KEY",
        base_url_env="ANTHROPIC_BASE_URL",
        default_base_url="https://api.anthropic.com",
        api_version=_anthropic_api_version,
        # Message Batches: 100,000 requests or 256 MB (docs/field_notes.md §4)
        max_batch_requests=100_000,
        max_batch_bytes=256 * 1024 * 1024,
    ),
    "openai": ProviderSpec(
        name="openai",
        title="OpenAI Chat Completions API",
        module="locomo_exp.llm.providers.openai",
        sdk="openai",
        extra="openai",
        key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
        default_base_url="https://api.openai.com/v1",
        api_version=lambda temperature: OPENAI_CHAT_API_VERSION,
        # OpenAI Batch API: an input file of at most 50,000 requests and 200 MB
        max_batch_requests=50_000,
        max_batch_bytes=200 * 1024 * 1024,
    ),
}
"""Every judge provider, by ``judge.provider`` name (the first is the default)."""


class _ProviderModule(Protocol):
    def make_client(
        self, cfg: JudgeConfig, *, api_key: str, base_url: str | None
    ) -> JudgeBatchClient: ...


def get_provider(name: str) -> ProviderSpec:
    """The provider called ``name``.

    Raises:
        JudgeError: an unknown name (the message lists the known ones).
    """
    spec = PROVIDERS.get(str(name))
    if spec is None:
        raise JudgeError(
            f"judge.provider={name!r} is not a provider; use one of {', '.join(PROVIDERS)}"
        )
    return spec


def sdk_installed(spec: ProviderSpec) -> bool:
    """Whether the provider's SDK can be imported (found, not imported)."""
    return importlib.util.find_spec(spec.sdk) is not None


def missing_sdk_message(spec: ProviderSpec) -> str:
    """The one line for a provider whose SDK is not installed (names the pip extra)."""
    extra = f"pip install 'locomo_exp[{spec.extra}]'" if spec.extra else f"pip install {spec.sdk}"
    return (
        f"judge.provider={spec.name} needs the {spec.sdk} package, which is not installed: "
        f"{extra}"
    )


def key_env(cfg: JudgeConfig) -> str | None:
    """The environment variable the key is read from, or ``None`` when no key is needed.

    ``judge.api_key_env``: ``auto`` (default) = the provider's own variable
    (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``); a name = that variable; null = none.
    """
    name = cfg.api_key_env
    if name is None:
        return None
    name = str(name).strip()
    return get_provider(cfg.provider).key_env if name in ("", AUTO_KEY_ENV) else name


def custom_base_url(cfg: JudgeConfig) -> tuple[str | None, str]:
    """``(url, source)`` of a custom endpoint: ``judge.base_url``, else the provider's variable.

    Returns:
        ``(None, "")`` when the provider's default endpoint is used.
    """
    if cfg.base_url:
        return str(cfg.base_url), "judge.base_url"
    env = get_provider(cfg.provider).base_url_env
    value = os.environ.get(env)
    return (value, env) if value else (None, "")


def endpoint(cfg: JudgeConfig) -> dict[str, str]:
    """What the card, report and MLflow say about where the calls go (never a key).

    Returns:
        ``{"provider", "api", "endpoint", "endpoint_kind"}``; ``endpoint_kind`` is
        ``default`` or ``custom`` (from ``judge.base_url`` or the provider's variable).
    """
    spec = get_provider(cfg.provider)
    url, _ = custom_base_url(cfg)
    return {
        "provider": spec.name,
        "api": spec.title,
        "endpoint": _public_url(url or spec.default_base_url),
        "endpoint_kind": "custom" if url else "default",
    }


def _public_url(url: str) -> str:
    """``url`` without user info, query or fragment (where a credential could hide)."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalised_url(url: str) -> str:
    """``url`` in one spelling per endpoint, for the cache key; never a credential.

    Scheme and host in lower case, the scheme's default port dropped, no user info, query
    or fragment (:func:`_public_url`), no trailing ``/``: ``HTTP://Host:80/v1/`` and
    ``http://host/v1`` are one endpoint. Host names are not resolved (``localhost`` and
    ``127.0.0.1`` stay two endpoints).
    """
    parts = urlsplit(str(url).strip())
    scheme = parts.scheme.lower()
    port = None if parts.port == _DEFAULT_PORTS.get(scheme) else parts.port
    host = parts.hostname or ""
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((scheme, netloc, parts.path, "", "")).rstrip("/")


def cache_endpoint(cfg: JudgeConfig) -> str | None:
    """The endpoint part of the judge cache key: the custom endpoint, normalised, or ``None``.

    Two OpenAI-compatible servers can serve different weights under one model name, so
    their verdicts must not be pooled. The provider's default endpoint (no custom URL, or
    one that normalises to the default) gives ``None``, which leaves the key as it was
    before endpoints were part of it: an existing cache of the default API is still hit.

    Args:
        cfg: the judge config (``judge.base_url``, else the provider's variable).

    Returns:
        :func:`normalised_url` of the custom endpoint, or ``None`` for the default one.
    """
    url, _ = custom_base_url(cfg)
    if not url:
        return None
    endpoint_url = normalised_url(url)
    default = normalised_url(get_provider(cfg.provider).default_base_url)
    return None if endpoint_url == default else endpoint_url


def api_version(cfg: JudgeConfig) -> str:
    """The ``api_version`` field of the cache key for this config (see :class:`ProviderSpec`)."""
    temperature = None if cfg.temperature is None else float(cfg.temperature)
    return get_provider(cfg.provider).api_version(temperature)


def make_client(cfg: JudgeConfig) -> JudgeBatchClient:
    """Build the provider's SDK client from the config and the key's environment variable.

    Raises:
        JudgeError: unknown provider, SDK not installed, or the key's variable not set.
    """
    spec = get_provider(cfg.provider)
    if not sdk_installed(spec):
        raise JudgeError(missing_sdk_message(spec))
    env = key_env(cfg)
    api_key = os.environ.get(env) if env is not None else NO_KEY_PLACEHOLDER
    if not api_key:
        raise JudgeError(missing_key_message(cfg))
    url, _ = custom_base_url(cfg)
    module: _ProviderModule = importlib.import_module(spec.module)
    return module.make_client(cfg, api_key=api_key, base_url=url)


def missing_key_message(cfg: JudgeConfig) -> str:
    """The one line for an unset key variable (says how to run without a key)."""
    from locomo_exp.config.key_shapes import key_shaped_name

    env = key_env(cfg)
    # the name once; never a value that may be the key itself (a config's checks refuse one)
    named = "the variable named by judge.api_key_env" if key_shaped_name(str(env)) else env
    return (
        f"{named} is not set; export the judge API key ({get_provider(cfg.provider).title}) in "
        "it (a key is never read from the command line), set judge.api_key_env to the variable "
        "that holds it (null for a local server that needs none), or use judge.dry_run=true"
    )


__all__ = [
    "AUTO_KEY_ENV",
    "NO_KEY_PLACEHOLDER",
    "OPENAI_CHAT_API_VERSION",
    "PROVIDERS",
    "ProviderSpec",
    "api_version",
    "custom_base_url",
    "endpoint",
    "get_provider",
    "is_reasoning_model",
    "key_env",
    "make_client",
    "missing_key_message",
    "missing_sdk_message",
    "sdk_installed",
]
