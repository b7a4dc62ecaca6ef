"""``stuck:``, a provider whose sync I/O hooks ignore their timeout and never return (until the test releases them).

``llmplex_call``, ``llmplex_stream`` (after one event), ``llmplex_embed``,
``llmplex_models``, ``llmplex_delete_response``, ``llmplex_batch_poll`` and
``llmplex_batch_find`` block on ``RELEASE``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import BatchStatus, Embeddings, ModelInfo, Request, Response, StreamEvent

RELEASE = threading.Event()
"""Set at the end of a test so that the abandoned worker threads end."""

CAPABILITIES = Capabilities(streaming=True, embeddings=True, response_chains=True, delete_response=True)


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(ProviderInfo(name="stuck", capabilities=CAPABILITIES, default_embedding_model="e"))


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    return {"model": request.model}


@hookimpl
def llmplex_call(payload: dict[str, Any], timeout: float | None) -> Any:
    RELEASE.wait()
    return {}


@hookimpl
def llmplex_stream(payload: dict[str, Any], timeout: float | None) -> Iterator[Any]:
    yield "first"
    RELEASE.wait()


@hookimpl
def llmplex_embed(texts: Sequence[str], timeout: float | None) -> Embeddings:
    RELEASE.wait()
    return Embeddings(vectors=[[0.0] for _ in texts])


@hookimpl
def llmplex_models() -> Sequence[ModelInfo]:
    RELEASE.wait()
    return []


@hookimpl
def llmplex_delete_response(response_id: str) -> bool:
    RELEASE.wait()
    return True


@hookimpl
def llmplex_parse(raw: Any) -> Response:
    return Response(text="never")


@hookimpl
def llmplex_parse_event(raw_event: Any) -> list[StreamEvent]:
    return [StreamEvent(type="text", text=raw_event)]


@hookimpl
def llmplex_batch_poll(batch_id: str) -> BatchStatus:
    RELEASE.wait()
    return BatchStatus(done=True, status="ended")


@hookimpl
def llmplex_batch_find(label: str) -> str | None:
    RELEASE.wait()
    return None
