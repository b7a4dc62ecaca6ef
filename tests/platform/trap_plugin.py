"""``trap:``, a provider with async hooks and only a sync httpx client (no ``create_async_client``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderInfo
from llmplex.types import Request, Response


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(ProviderInfo(name="trap", create_client=lambda _: httpx.Client(base_url="http://127.0.0.1:9")))


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    return {"model": request.model}


@hookimpl
def llmplex_call(payload: dict[str, Any], client: httpx.Client) -> Any:
    return {"text": f"sync {type(client).__name__}"}


@hookimpl
async def llmplex_acall(payload: dict[str, Any], client: Any) -> Any:
    return {"text": f"async {type(client).__name__}"}  # a real plugin would block the loop with it


@hookimpl
def llmplex_parse(raw: Any) -> Response:
    return Response(text=raw["text"])
