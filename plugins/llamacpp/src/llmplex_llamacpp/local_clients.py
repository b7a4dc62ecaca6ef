"""OpenAI SDK clients per local model, each talking to that model's own server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from llmplex_openai.clients import make_async_client, make_client
from openai import AsyncOpenAI, OpenAI

from llmplex_llamacpp.server import LocalServer
from llmplex_llamacpp.settings import LlamaCppSettings

__all__ = ["AsyncLocalClients", "LocalClients"]

SDK = TypeVar("SDK", OpenAI, AsyncOpenAI)


@dataclass
class _PerModel(Generic[SDK]):
    """One SDK client per model; a model's server is started (or reused) on first use."""

    settings: LlamaCppSettings
    _clients: dict[tuple[str, bool], SDK] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def server(self, model: str, *, embedding: bool = False) -> LocalServer:
        """The running server for ``model`` (a known name or a ``.gguf`` path); its embedding server when asked."""
        settings = self.settings
        if embedding:
            return LocalServer.for_model(
                model, n_ctx=settings.n_ctx, start_timeout=settings.start_timeout, pooling=settings.embedding_pooling
            )
        return LocalServer.for_model(
            model, n_ctx=settings.n_ctx, start_timeout=settings.start_timeout, mmproj=settings.mmproj
        )

    def _client(self, model: str, make: Callable[[str], SDK], *, embedding: bool = False) -> SDK:
        url = self.server(model, embedding=embedding).openai_base_url
        key = (model, embedding)
        with self._lock:
            client = self._clients.get(key)
            if client is None or str(client.base_url).rstrip("/") != url.rstrip("/"):
                client = self._clients[key] = make(url)  # a restarted server listens elsewhere
            return client


class LocalClients(_PerModel[OpenAI]):
    """The ``llamacpp`` provider's sync client (``ProviderInfo.create_client``)."""

    def sync(self, model: str, *, embedding: bool = False) -> OpenAI:
        """The SDK client for ``model``'s server, or its embedding server (blocks while a server starts)."""
        return self._client(model, make_client, embedding=embedding)

    def close(self) -> None:
        """Close every SDK client."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()


class AsyncLocalClients(_PerModel[AsyncOpenAI]):
    """The async client of one event loop (``ProviderInfo.create_async_client``)."""

    def async_(self, model: str, *, embedding: bool = False) -> AsyncOpenAI:
        """The async SDK client for ``model``'s server, or its embedding server (blocks while a server starts)."""
        return self._client(model, make_async_client, embedding=embedding)

    async def aclose(self) -> None:
        """Close every SDK client (on the loop they belong to)."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
