"""``astuck:``, a provider whose async I/O hooks ignore their timeout and await forever.

``llmplex_acall``, ``llmplex_astream`` (after one event) and ``llmplex_aembed``
await a future nothing completes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderInfo
from llmplex.types import Embeddings, Request, Response, StreamEvent
from tests.platform.stuck_plugin import CAPABILITIES


async def _never() -> None:
    await asyncio.get_running_loop().create_future()


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(ProviderInfo(name="astuck", capabilities=CAPABILITIES, default_embedding_model="e"))


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    return {"model": request.model}


@hookimpl
async def llmplex_acall(payload: dict[str, Any], timeout: float | None) -> Any:
    await _never()


@hookimpl
async def llmplex_astream(payload: dict[str, Any], timeout: float | None) -> AsyncIterator[Any]:
    async def events() -> AsyncIterator[Any]:
        yield "first"
        await _never()

    return events()


@hookimpl
async def llmplex_aembed(texts: Sequence[str], timeout: float | None) -> Embeddings:
    await _never()
    return Embeddings(vectors=[])


@hookimpl
def llmplex_parse(raw: Any) -> Response:
    return Response(text="never")


@hookimpl
def llmplex_parse_event(raw_event: Any) -> list[StreamEvent]:
    return [StreamEvent(type="text", text=raw_event)]
