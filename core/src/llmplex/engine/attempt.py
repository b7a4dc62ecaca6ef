"""One attempt against one provider: format, send, parse — sync or async."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Iterator
from functools import partial
from typing import Any

from llmplex.engine.adapt import Adapted, adapt, plain
from llmplex.engine.bridge import aiterate_in_thread, iterate_on_loop, run_on_loop
from llmplex.engine.contained import acontained, aiter_contained, contained, iter_contained
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.http.clients import is_blocking_client
from llmplex.masking.errors import scrub_error
from llmplex.plugins.hooks import ProviderHooks
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import Expired, aiterate_before, await_before, call_before, in_worker, iterate_before
from llmplex.routing import ProviderInstance, Route
from llmplex.types import Request, Response

__all__ = ["Attempt", "hook_client"]


class Attempt:
    """The provider-facing half of the pipeline for one route."""

    __slots__ = ("provider", "route")

    def __init__(self, route: Route) -> None:
        self.route = route
        self.provider = route.provider

    @property
    def hooks(self) -> ProviderHooks:
        """The provider's pipeline hooks as bound now, not when the attempt began: a provider plugin loaded
        while it waited (for a limit, a retry) must never see its payloads."""
        return self.provider.hooks

    def adapt(self, request: Request) -> Adapted:
        """``request`` as this instance can honour it: what it cannot is refused with an
        ``LLMConfigurationError`` (nothing is sent), or left out when the instance drops unsupported things;
        reasoning of another provider's format is always left out (see ``llmplex.engine.adapt``)."""
        if plain(request):  # nothing to hold against the instance: its capabilities are not even worked out
            return Adapted(request)
        provider = self.provider
        return adapt(request, provider.name, provider.capabilities_for(request.model), provider.drop_unsupported)

    def format(self, request: Request) -> dict[str, Any]:
        """The provider payload for ``request`` (refused first if it needs what the provider lacks)."""
        return self.format_adapted(self.adapt(request).request)

    def format_adapted(self, request: Request) -> dict[str, Any]:
        """The provider payload for a request ``adapt`` already held against the instance."""
        payload = contained(self.hooks.format, self.name, request=request, settings=self.provider.settings)
        if payload is None:
            raise LLMConfigurationError(f"provider {self.provider.name!r} does not implement llmplex_format")
        return payload  # type: ignore[no-any-return]

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

    @property
    def name(self) -> str:
        """The provider instance's prefix."""
        return self.provider.name

    def parse(self, raw: Any, request: Request) -> Response:
        """The core response for one raw provider response."""
        return contained(  # type: ignore[no-any-return]
            self.hooks.parse, self.name, raw=raw, request=request, settings=self.provider.settings
        )

    def _send_args(
        self,
        payload: dict[str, Any],
        deadline: Deadline | None,
        asynchronous: bool,
        request: Request | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """The I/O hook's arguments; ``timeout`` is the deadline's time left once the SDK client exists (built on
        first use), else the one given."""
        client = hook_client(self.provider, asynchronous)
        return {
            "payload": payload,
            "request": request,
            "settings": self.provider.settings,
            "client": client,
            "timeout": timeout if deadline is None else deadline.remaining(),
        }

    def send_unguarded(self, payload: dict[str, Any], request: Request, timeout: float | None) -> Any:
        """The plugin's own sync send with ``timeout`` as given, held to nothing else (the conformance kit
        checks that a plugin honours its timeout by itself)."""
        if self.hooks.implements("call"):
            return self.hooks.call(**self._send_args(payload, None, False, request, timeout))
        self._require("acall")
        return run_on_loop(lambda: self.hooks.acall(**self._send_args(payload, None, True, request, timeout)))

    # Each I/O hook runs under the guard of its deadline (``None``: unguarded), which
    # ``expired`` turns into the call's error; see ``llmplex.reliability.guard``.

    def send(self, payload: dict[str, Any], request: Request, deadline: Deadline | None, expired: Expired) -> Any:
        """Send ``payload`` (formatted from ``request``) synchronously; an async-only provider runs on the bridge
        loop."""
        if not self.hooks.implements("call"):
            self._require("acall")
            return run_on_loop(lambda: acontained(self.asend, self.name, payload, request, deadline, expired))
        if deadline is None:  # nothing to hold it to: no layer in between
            return contained(self._invoke, self.name, "call", payload, None, request)
        sending = partial(contained, self._invoke, self.name, "call", payload, deadline, request)
        return call_before(sending, deadline, expired)

    def asend(
        self, payload: dict[str, Any], request: Request, deadline: Deadline | None, expired: Expired
    ) -> Awaitable[Any]:
        """What to await to send asynchronously (no coroutine of its own: one frame fewer on every resumption
        of the call); a sync-only provider runs on a worker thread. A ``BaseException`` of the plugin's async hook,
        raised here or while awaited, is the awaiting caller's to contain (``Pipeline.acomplete``; ``send`` on
        the bridge loop): no ``acontained`` coroutine of its own in between."""
        if deadline is None:  # nothing to hold it to: no layer in between
            return self._sending(payload, request, None)
        return await_before(partial(self._sending, payload, request, deadline), deadline, expired)

    def _sending(self, payload: dict[str, Any], request: Request, deadline: Deadline | None) -> Awaitable[Any]:
        """What ``asend`` awaits (one coroutine frame fewer on every resumption of the call)."""
        if self.hooks.implements("acall"):
            return self._invoke("acall", payload, deadline, request)  # type: ignore[no-any-return]  # contained by the caller
        self._require("call")
        return in_worker(partial(contained, self._invoke, self.name, "call", payload, deadline, request))

    def _invoke(self, hook: str, payload: dict[str, Any], deadline: Deadline | None, request: Request | None) -> Any:
        """The I/O hook ``hook`` (``call``, ``acall``, ``stream``, ``astream``) of the provider as bound now, called
        with its arguments (the async client for the async hooks); run under ``contained`` (``acall``: see
        ``asend``)."""
        asynchronous = hook.startswith("a")
        return getattr(self.hooks, hook)(**self._send_args(payload, deadline, asynchronous, request))

    def open_stream(self, payload: dict[str, Any], deadline: Deadline | None, expired: Expired) -> Iterator[Any]:
        """Raw stream events, synchronously; an async-only provider streams on the bridge loop."""
        if not self.hooks.implements("stream"):
            self._require("astream")
            return iterate_on_loop(lambda: self._acontained_stream(payload, deadline, expired))

        def opening() -> Iterator[Any]:
            opened = contained(self._invoke, self.name, "stream", payload, deadline, None)
            return iter_contained(opened, self.name)

        return iterate_before(opening, deadline, expired)

    async def aopen_stream(
        self, payload: dict[str, Any], deadline: Deadline | None, expired: Expired
    ) -> AsyncIterable[Any]:
        """Raw stream events, asynchronously; a sync-only provider streams from a worker thread. Held to no
        deadline, an async hook's stream is the plugin's own: its reader contains each read and closes it
        (``Pipeline.astream``: no generator layer per event); otherwise a stream that does both itself."""
        if deadline is None and self.hooks.implements("astream"):
            return await acontained(self._invoke, self.name, "astream", payload, None, None)

        def blocking() -> Iterator[Any]:
            opened = contained(self._invoke, self.name, "stream", payload, deadline, None)
            return iter_contained(opened, self.name)

        async def opening() -> AsyncIterator[Any]:
            if self.hooks.implements("astream"):
                opened = await acontained(self._invoke, self.name, "astream", payload, deadline, None)
                return aiter_contained(opened, self.name)
            self._require("stream")
            return aiterate_in_thread(blocking)

        if deadline is None:  # a sync-only provider held to nothing: opened now, read from its worker thread
            return await opening()
        return aiterate_before(opening, deadline, expired)

    async def _acontained_stream(
        self, payload: dict[str, Any], deadline: Deadline | None, expired: Expired
    ) -> AsyncIterator[Any]:
        """``aopen_stream``'s events contained and closed, for a reader that does neither (the bridge loop's)."""
        return aiter_contained(await self.aopen_stream(payload, deadline, expired), self.name)

    def _require(self, hook: str) -> None:
        if not self.hooks.implements(hook):
            raise LLMConfigurationError(
                f"provider {self.provider.name!r} ({self.provider.plugin.entry.distribution}) implements "
                f"neither the sync nor the async variant of {hook.removeprefix('a')!r}"
            )


def hook_client(provider: ProviderInstance, asynchronous: bool) -> Any:
    """The client an I/O hook of ``provider`` gets; an async hook is never handed a sync httpx client."""
    client = provider.client(asynchronous)
    if asynchronous and is_blocking_client(client):
        raise LLMConfigurationError(
            f"provider {provider.name!r} has async hooks but no ProviderInfo.create_async_client, so they would get "
            f"its sync {type(client).__name__}, whose I/O blocks the event loop: give create_async_client (e.g. "
            "llmplex.http.async_client(...)), or implement only the sync hooks (core runs them in a thread)"
        )
    return client
