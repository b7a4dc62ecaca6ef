"""The one SSL context of the plugin's httpx clients (``transport``'s sync ones, ``aio``'s async one per event loop).

httpx builds a context per client, loading the CA bundle each time (~50 ms of
CPU for certifi's); the plugin's clients share httpx's default one instead, built
once for the ``SSL_CERT_FILE``/``SSL_CERT_DIR`` values it reads.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx

__all__ = ["ssl_context"]


def ssl_context() -> ssl.SSLContext:
    """httpx's default SSL context (``trust_env``: ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle),
    built once per pair of those variables' values and shared by the plugin's clients."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=8)
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The context httpx builds while the variables hold these values (the arguments are the cache's key)."""
    return httpx.create_ssl_context(verify=True, trust_env=True)
