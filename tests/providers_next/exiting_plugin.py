"""``exiting:``, a provider plugin that aborts with a ``BaseException`` where its prompt says.

The prompt names the place — ``format``, ``call``, ``parse``, ``stream-open``, ``stream-mid``,
``parse-event`` — and the abort: ``exit`` (``sys.exit(4)``, its message echoing the key), ``abort`` (a
``BaseException`` subclass of the plugin's own), ``genexit`` (a stray ``GeneratorExit``), ``interrupt``
(``KeyboardInterrupt``, which must still stop the program). Anything else answers normally.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from pydantic import SecretStr

from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderInfo, ProviderSettings
from llmplex.types import Request, Response, StreamEvent, Usage


class ExitingSettings(ProviderSettings):
    api_key: SecretStr = SecretStr("sk-exiting-default-key-000000")


class PluginAbort(BaseException):
    """A BaseException of the plugin's own."""


def _abort(kind: str, key: str) -> None:
    if kind == "exit":
        sys.exit(f"fatal: upstream refused key {key}")
    if kind == "abort":
        raise PluginAbort(f"gave up with key {key}")
    if kind == "genexit":
        raise GeneratorExit
    if kind == "interrupt":
        raise KeyboardInterrupt


def _maybe(payload: dict[str, Any], where: str) -> None:
    place, _, kind = payload["prompt"].partition(":")
    if place == where:
        _abort(kind, payload["key"])


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(ProviderInfo(name="exiting", settings_model=ExitingSettings))


@hookimpl
def llmplex_format(request: Request, settings: ExitingSettings) -> dict[str, Any]:
    prompt = str(request.messages[-1].content)
    payload = {"prompt": prompt, "key": settings.api_key.get_secret_value()}
    _maybe(payload, "format")
    return payload


@hookimpl
def llmplex_call(payload: dict[str, Any]) -> dict[str, Any]:
    _maybe(payload, "call")
    return payload


@hookimpl
async def llmplex_acall(payload: dict[str, Any]) -> dict[str, Any]:
    _maybe(payload, "call")
    return payload


@hookimpl
def llmplex_parse(raw: dict[str, Any]) -> Response:
    _maybe(raw, "parse")
    return Response(text=f"ok {raw['prompt']}", usage=Usage(input_tokens=1, output_tokens=1))


def _events(payload: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield {"text": "first ", **payload}
    _maybe(payload, "stream-mid")
    yield {"text": "second", **payload}
    yield {"finish": True, **payload}


@hookimpl
def llmplex_stream(payload: dict[str, Any]) -> Iterator[dict[str, Any]]:
    _maybe(payload, "stream-open")
    return _events(payload)


@hookimpl
async def llmplex_astream(payload: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    _maybe(payload, "stream-open")

    async def events() -> AsyncIterator[dict[str, Any]]:
        for event in _events(payload):
            yield event

    return events()


@hookimpl
def llmplex_parse_event(raw_event: dict[str, Any]) -> list[StreamEvent]:
    if "finish" in raw_event:
        _maybe(raw_event, "parse-event")
        return [
            StreamEvent(type="usage", usage=Usage(input_tokens=1, output_tokens=2)),
            StreamEvent(type="finish", finish_reason="stop"),
        ]
    return [StreamEvent(type="text", text=raw_event["text"])]
