"""One attempt against one provider: format, send, parse — sync or async."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from llmplex.engine.bridge import aiterate_in_thread, iterate_on_loop, run_on_loop
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.routing import Route
from llmplex.scrubbing import scrub_error
from llmplex.types import Request, Response

__all__ = ["Attempt"]


def _has_parts(request: Request) -> bool:
    return any(isinstance(message.content, tuple) for message in request.messages)


class Attempt:
    """The provider-facing half of the pipeline for one route."""

    def __init__(self, route: Route) -> None:
        self.route = route
        self.provider = route.provider
        self.hooks = route.provider.hooks

    def format(self, request: Request) -> dict[str, Any]:
        """The provider payload for ``request`` (refused first if it needs what the provider lacks)."""
        if request.tools or request.previous_response_id is not None or _has_parts(request):
            self._check_capabilities(request)
        payload = self.hooks.format(request=request, settings=self.provider.settings)
        if payload is None:
            raise LLMConfigurationError(f"provider {self.provider.name!r} does not implement llmplex_format")
        return payload  # type: ignore[no-any-return]

    def _check_capabilities(self, request: Request) -> None:
        capabilities = self.provider.capabilities
        name = self.provider.name
        if request.tools and not capabilities.tools:
            raise LLMConfigurationError(
                f"provider {name!r} does not support tools; drop tools=, or use a provider that calls tools"
            )
        if request.previous_response_id is not None and not capabilities.response_chains:
            raise LLMConfigurationError(
                f"provider {name!r} keeps no stored responses, so previous_response_id cannot continue one; "
                "send the whole conversation instead"
            )
        for index, message in enumerate(request.messages):
            for part in message.parts:
                if part.kind not in capabilities.input_parts:
                    takes = ", ".join(sorted(capabilities.input_parts)) or "text only"
                    raise LLMConfigurationError(
                        f"provider {name!r} cannot take {part.kind} parts (messages[{index}] has "
                        f"{type(part).__name__}: {part.describe()}); it takes: {takes}. Leave the part out, or "
                        "send it to a provider that takes it (see llmplex providers)"
                    )

    def classify(self, error: BaseException) -> LLMError:
        """The taxonomy error for anything raised while sending or parsing, with every secret in it masked.

        Masking covers the whole chain and what each exception carries (an SDK
        exception's body, headers and raw response), in place.
        """
        classified = scrub_error(self.hooks.classify_error(error=error, settings=self.provider.settings))
        scrub_error(error)
        if classified.provider is None:
            classified.provider = self.provider.name
        if classified.model is None:
            classified.model = self.route.model
        return classified  # type: ignore[no-any-return]

    def parse(self, raw: Any, request: Request) -> Response:
        """The core response for one raw provider response."""
        return self.hooks.parse(raw=raw, request=request, settings=self.provider.settings)  # type: ignore[no-any-return]

    def _send_args(
        self, payload: dict[str, Any], timeout: float | None, asynchronous: bool, request: Request | None = None
    ) -> dict[str, Any]:
        return {
            "payload": payload,
            "request": request,
            "settings": self.provider.settings,
            "client": self.provider.client(asynchronous),
            "timeout": timeout,
        }

    def send(self, payload: dict[str, Any], timeout: float | None, request: Request) -> Any:
        """Send ``payload`` (formatted from ``request``) synchronously; an async-only provider runs on the bridge
        loop."""
        if self.hooks.implements("call"):
            return self.hooks.call(**self._send_args(payload, timeout, False, request))
        self._require("acall")
        return run_on_loop(lambda: self.hooks.acall(**self._send_args(payload, timeout, True, request)))

    async def asend(self, payload: dict[str, Any], timeout: float | None, request: Request) -> Any:
        """Send asynchronously; a sync-only provider runs in a worker thread."""
        if self.hooks.implements("acall"):
            return await self.hooks.acall(**self._send_args(payload, timeout, True, request))
        self._require("call")
        return await asyncio.to_thread(lambda: self.hooks.call(**self._send_args(payload, timeout, False, request)))

    def open_stream(self, payload: dict[str, Any], timeout: float | None) -> Iterator[Any]:
        """Raw stream events, synchronously."""
        if self.hooks.implements("stream"):
            return self.hooks.stream(**self._send_args(payload, timeout, False))  # type: ignore[no-any-return]
        self._require("astream")
        return iterate_on_loop(lambda: self.hooks.astream(**self._send_args(payload, timeout, True)))

    async def aopen_stream(self, payload: dict[str, Any], timeout: float | None) -> AsyncIterator[Any]:
        """Raw stream events, asynchronously."""
        if self.hooks.implements("astream"):
            return await self.hooks.astream(**self._send_args(payload, timeout, True))  # type: ignore[no-any-return]
        self._require("stream")
        return aiterate_in_thread(lambda: self.hooks.stream(**self._send_args(payload, timeout, False)))

    def _require(self, hook: str) -> None:
        if not self.hooks.implements(hook):
            raise LLMConfigurationError(
                f"provider {self.provider.name!r} ({self.provider.plugin.entry.distribution}) implements "
                f"neither the sync nor the async variant of {hook.removeprefix('a')!r}"
            )
