"""Issue 34 item 4: llmplex-bedrock's httpx clients (the sync one of each boto3 client, the async one of each event
loop) verify TLS with one SSL context per process, httpx's default for the ``SSL_CERT_FILE``/``SSL_CERT_DIR`` set,
instead of loading the CA bundle again for each (~50 ms of CPU each: every ``create_client``, every event loop an
async stream runs on)."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import certifi
import httpx
import pytest
from llmplex_bedrock import tls as bedrock_tls
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.settings import BedrockSettings

from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)


def _settings() -> BedrockSettings:
    return BedrockSettings(region="us-east-1", aws_access_key_id="AKIASSLCONTEXT000000", aws_secret_access_key="s")


def _sync_context(client: Any) -> ssl.SSLContext:
    sender = sender_of(client)
    assert sender is not None
    context: ssl.SSLContext = sender.http._transport._pool._ssl_context  # type: ignore[attr-defined]
    return context


def _async_context(client: Any) -> ssl.SSLContext:
    sender = sender_of(client)
    assert sender is not None

    async def built() -> ssl.SSLContext:
        context: ssl.SSLContext = sender.async_http()._transport.ssl_context  # type: ignore[attr-defined]
        return context

    return asyncio.run(built())


@pytest.fixture
def plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.mark.usefixtures("plain_environment")
def test_item_4_bedrock_clients_and_event_loops_share_one_ssl_context() -> None:
    """Two boto3 clients' sync httpx clients and the async clients of two event loops hold one context, which
    verifies certificates and host names as httpx's default does."""
    clients = [create_client(_settings()), create_client(_settings())]
    try:
        contexts = [_sync_context(client) for client in clients] + [_async_context(clients[0]) for _ in range(2)]
    finally:
        for client in clients:
            close_client(client)
    assert all(context is contexts[0] for context in contexts)
    assert contexts[0] is bedrock_tls.ssl_context()
    default = httpx.create_ssl_context(verify=True, trust_env=True)
    assert (contexts[0].verify_mode, contexts[0].check_hostname) == (default.verify_mode, default.check_hostname)
    assert contexts[0].verify_mode is ssl.CERT_REQUIRED and contexts[0].check_hostname


def test_item_4_bedrock_the_ssl_context_follows_ssl_cert_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, plain_environment: None
) -> None:
    """A client built while ``SSL_CERT_FILE`` names a bundle verifies with that bundle (httpx's ``trust_env``), in a
    context of its own; the same value gives the same context again, and unsetting it the default one."""
    default = bedrock_tls.ssl_context()
    bundle = tmp_path / "bundle.pem"
    bundle.write_text(Path(certifi.where()).read_text())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    client = create_client(_settings())
    try:
        named = _sync_context(client)
    finally:
        close_client(client)
    assert named is not default and named is bedrock_tls.ssl_context()
    assert named.cert_store_stats()["x509_ca"] == default.cert_store_stats()["x509_ca"] > 0
    monkeypatch.delenv("SSL_CERT_FILE")
    assert bedrock_tls.ssl_context() is default
