"""One OpenAI SDK client pair per local model, each talking to that model's own server."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from llmplex_openai.clients import make_async_client, make_client
from openai import AsyncOpenAI, OpenAI

from llmplex_llamacpp.server import LocalServer
from llmplex_llamacpp.settings import LlamaCppSettings

__all__ = ["LocalClients"]


@dataclass
class LocalClients:
    """The ``llamacpp`` provider's client: starts (or reuses) a server for a model on first use."""

    settings: LlamaCppSettings
    _clients: dict[str, tuple[OpenAI, AsyncOpenAI]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def server(self, model: str) -> LocalServer:
        """The running server for ``model`` (a known name or a ``.gguf`` path)."""
        settings = self.settings
        return LocalServer.for_model(
            model, n_ctx=settings.n_ctx, start_timeout=settings.start_timeout, mmproj=settings.mmproj
        )

    def _pair(self, model: str) -> tuple[OpenAI, AsyncOpenAI]:
        server = self.server(model)
        with self._lock:
            pair = self._clients.get(model)
            if pair is None or str(pair[0].base_url).rstrip("/") != server.openai_base_url.rstrip("/"):
                url = server.openai_base_url
                pair = self._clients[model] = (make_client(url), make_async_client(url))
            return pair

    def sync(self, model: str) -> OpenAI:
        """The sync SDK client for ``model``'s server (blocks while a server starts)."""
        return self._pair(model)[0]

    def async_(self, model: str) -> AsyncOpenAI:
        """The async SDK client for ``model``'s server (blocks while a server starts)."""
        return self._pair(model)[1]
