"""One TLS context per process for the SDK clients, instead of one per client.

The SDKs' aiohttp transports (``DefaultAioHttpClient``) build a new ``ssl.SSLContext`` for
every client, and building one loads the system's CA certificates: about 19 ms of CPU per
client on the project's 2-CPU machine, against 0.1 ms for the rest of the client, paid
again by every judge client a job makes (its units, an alignment pass, the audit
controls, a panel's judges, each job of a sweep). The context is the one the transport
would build itself (the HTTP library's ``create_ssl_context()``: certificate verification
on, ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured), built once and handed to every
client as ``verify``. An ``SSLContext`` may serve many connections and event loops at
once; a change of either environment variable gets a new context. Building it in a
thread while the job prepares its calls gains nothing: loading the certificates holds
the GIL (measured: 30 ms of loading beside 95 ms of Python took 164 ms together).
"""

from __future__ import annotations

import os
import ssl
import threading

try:  # the SDKs' HTTP library: httpx2 from anthropic 2.x and openai 3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover - depends on the installed SDK
    import httpx as _http  # type: ignore[no-redef,import-not-found,unused-ignore]

__all__ = ["CA_ENV_VARS", "shared_ssl_context"]

CA_ENV_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR")
"""The environment variables that choose the CA certificates (the HTTP library's)."""

_contexts: dict[tuple[str | None, ...], ssl.SSLContext] = {}
_lock = threading.Lock()


def shared_ssl_context() -> ssl.SSLContext:
    """The TLS context this process's SDK clients verify servers with, built on first use.

    Returns:
        The HTTP library's default context (``create_ssl_context()``: verification on, the
        CA certificates of ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set, else the
        system's); the same object on every call while those two variables keep their
        values.

    Raises:
        OSError, ssl.SSLError: the CA certificates named by the environment cannot be
            read (as the SDK's own client construction would raise).
    """
    key = tuple(os.environ.get(name) for name in CA_ENV_VARS)
    with _lock:
        context = _contexts.get(key)
        if context is None:
            context = _http.create_ssl_context()
            _contexts[key] = context
        return context
