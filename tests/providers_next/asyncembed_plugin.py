"""``asyncembed:``, a provider whose only embedding hook is async; it records where each call ran."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Embeddings, Usage

CALLS: list[dict[str, Any]] = []


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(
        ProviderInfo(
            name="asyncembed", capabilities=Capabilities(embeddings=True), create_async_client=lambda _: object()
        )
    )


@hookimpl
async def llmplex_aembed(texts: Sequence[str], model: str) -> Embeddings:
    CALLS.append({"thread": threading.current_thread().name, "loop": asyncio.get_running_loop(), "texts": list(texts)})
    if texts and texts[0] == "exit":
        sys.exit(3)
    await asyncio.sleep(0)
    return Embeddings(vectors=[[float(len(t)), 1.0] for t in texts], usage=Usage(input_tokens=len(texts)), model=model)
