"""One TLS context per process (``locomo_exp/llm/providers/tls.py``): every SDK client of
both providers verifies servers with the same context, the one the HTTP library builds by
default, and a change of ``SSL_CERT_FILE`` gets a new one."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import pytest

from locomo_exp.llm.providers.anthropic import AnthropicJudgeClient
from locomo_exp.llm.providers.openai import OpenAIJudgeClient
from locomo_exp.llm.providers.tls import CA_ENV_VARS, shared_ssl_context


def _transport_context(client: Any) -> ssl.SSLContext:
    context: ssl.SSLContext = client._client._client._transport.ssl_context
    return context


def _contexts_of_new_clients() -> list[ssl.SSLContext]:
    async def build() -> list[ssl.SSLContext]:
        clients = [
            AnthropicJudgeClient(api_key="k", temperature=0.0, base_url="http://127.0.0.1:9"),
            AnthropicJudgeClient(api_key="k", temperature=None, base_url="http://127.0.0.1:9"),
            OpenAIJudgeClient(api_key="k", base_url="http://127.0.0.1:9/v1"),
        ]
        contexts = [_transport_context(c) for c in clients]
        for client in clients:
            await client.aclose()
        return contexts

    return asyncio.run(build())


@pytest.fixture
def no_ca_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CA_ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def test_every_client_of_both_providers_uses_the_one_shared_context(no_ca_env: None) -> None:
    contexts = _contexts_of_new_clients()
    shared = shared_ssl_context()
    assert [c is shared for c in contexts] == [True, True, True]
    assert shared is shared_ssl_context()  # built once


def test_the_shared_context_verifies_as_the_sdks_default_does(no_ca_env: None) -> None:
    shared = shared_ssl_context()
    assert shared.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname is True
    assert shared.protocol == ssl.PROTOCOL_TLS_CLIENT
    assert shared.cert_store_stats()["x509_ca"] > 0  # the system's CA certificates


def test_ssl_cert_file_gets_its_own_context_with_those_certificates(
    no_ca_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    default = shared_ssl_context()
    one_ca = default.get_ca_certs(binary_form=True)[0]
    pem = tmp_path / "one_ca.pem"
    pem.write_text(ssl.DER_cert_to_PEM_cert(one_ca), encoding="ascii")
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    own = shared_ssl_context()
    assert own is not default
    assert own.get_ca_certs(binary_form=True) == [one_ca]  # that file's one certificate
    assert [c is own for c in _contexts_of_new_clients()] == [True, True, True]
    monkeypatch.delenv("SSL_CERT_FILE")
    assert shared_ssl_context() is default
