"""POST prepared bytes straight through the aiohttp session under an SDK's aiohttp-backed httpx client.

``sdk_async_client`` gives the SDK's httpx ``AsyncClient`` on aiohttp. Each request through it still
builds httpx's ``Request`` and ``Response``, runs the client's auth, redirect and event-hook machinery and
reads the body through three stream wrappers: with many requests in flight that costs more CPU than
aiohttp itself. ``direct_sender(http)`` returns a ``DirectSender`` for such a client, or ``None`` when
something needs httpx (another transport, proxies, auth, event hooks other than ``honour_deadline``'s,
cookies, httpx's request log). Its ``post`` sends the request httpx would send on the same aiohttp
session — the same headers in the same order, the same timeouts capped at the llmplex deadline, the
transport's own exception table — and reads the body under the deadline::

    sender = direct_sender(sdk_client._client)
    if sender is not None:
        answer = await sender.post(url, headers, body, timeouts, build_request)

A 2xx answer without cookies or a content encoding comes back as a ``Reply`` (status, headers, bytes);
anything else (an error status, a redirect, a cookie, a compressed body) as the read ``Response`` httpx
would have returned, built from the same aiohttp response with the client's cookie jar, response hooks
and redirect rules. Failures are the library's exceptions (``ConnectTimeout`` before the request when
the deadline has passed, ``ReadTimeout`` when the body is still arriving at the deadline), carrying the
request ``build_request`` makes, so a caller maps them as it maps httpx's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NamedTuple, NoReturn

from llmplex.http.clients import _LATE, _found_flavour, _hooks
from llmplex.reliability.deadline import Deadline, current_deadline

__all__ = ["DirectSender", "Reply", "direct_sender", "vouch_for_redirect_hooks"]

_LENGTH = frozenset({"content-length", "transfer-encoding"})
"""Headers httpx's ``Request`` weighs against the body: given by the caller, httpx builds the headers."""


@dataclass(slots=True)
class Reply:
    """A 2xx answer read whole: its status, its headers (aiohttp's), its body and its ``content-type``
    as httpx reads it (repeated headers joined with ``", "``; ``""`` when absent). Read-only by use, not frozen: a
    frozen dataclass's ``__init__`` (every field through ``object.__setattr__``) cost five times as much on every
    direct answer."""

    status: int
    headers: Any
    content: bytes
    content_type: str
    response: Callable[[], Any]
    """The equivalent httpx ``Response`` (built on demand), for readings beyond the JSON body."""


_UNSEEN: Any = object()
_MERGED_KEPT = 64
"""The most header lists one sender keeps worked out (a timeout announced in a header makes each call's its own)."""

_senders: weakref.WeakKeyDictionary[Any, DirectSender | None] = weakref.WeakKeyDictionary()


def direct_sender(http: Any) -> DirectSender | None:
    """The ``DirectSender`` of ``http`` (an httpx or httpx2 ``AsyncClient``) when it may send directly now."""
    sender = _sender(http)
    return sender if sender is not None and sender.usable() else None


def vouch_for_redirect_hooks(http: Any, hooks: Sequence[Callable[[Any], Any]]) -> None:
    """Let ``http`` send directly with ``hooks`` after ``honour_deadline``'s request hook: its owner vouches they
    change nothing on a request it posts (such as one dropping a key from a request redirected to another
    origin). They still run on every redirect: httpx follows those (``DirectSender.post``)."""
    sender = _sender(http)
    if sender is not None:
        sender.vouched = [*sender.vouched[:1], *hooks]


def _sender(http: Any) -> DirectSender | None:
    try:
        return _senders[http]
    except KeyError:
        sender = _senders[http] = _sender_for(http)
        return sender
    except TypeError:  # not weakly referenceable: not a client of ours
        return None


def _sender_for(http: Any) -> DirectSender | None:
    found = _found_flavour(http)
    transport = getattr(http, "_transport", None)
    module = sys.modules.get(type(transport).__module__)
    if found is None or not found[1] or module is None:
        return None
    if not isinstance(transport, getattr(module, "AiohttpTransport", ())) or not hasattr(
        module, "map_aiohttp_exceptions"
    ):
        return None
    return DirectSender(http, found[0], transport, module)


@dataclass(frozen=True)
class _Target:
    """A URL as aiohttp takes it, and the ``Host`` header httpx would give it."""

    url: Any
    host: str


class DirectSender:
    """Sends on the aiohttp session of one httpx ``AsyncClient`` whose transport is the SDKs' ``AiohttpTransport``."""

    def __init__(self, http: Any, library: ModuleType, transport: Any, module: ModuleType) -> None:
        import aiohttp
        import yarl

        self._http = http
        self.library = library
        """The httpx flavour (``httpx`` or ``httpx2``) whose exceptions and ``Response`` it gives."""
        self._transport = transport
        self._module = module
        self._timeout = aiohttp.ClientTimeout
        self._session = aiohttp.ClientSession
        self._url = yarl.URL
        hooks = _hooks(library)
        self._request_hooks, self._response_hooks = [hooks.aclamp], [hooks.awrap]
        self.vouched: list[Callable[[Any], Any]] = [hooks.aclamp]
        """The request hooks it may send directly with besides the deadline's alone (``vouch_for_redirect_hooks``)."""
        self._logger = logging.getLogger(library.__name__)
        self._targets: dict[str, _Target] = {}
        self._timeouts: dict[tuple[float | None, float | None, float | None], Any] = {}
        self._merged: dict[tuple[str, tuple[tuple[bytes, bytes], ...]], _Merged | None] = {}
        self._last: tuple[Any, ...] = (None, None, None, None, None)
        """The timeouts dict and header tuple of the last post and what they were worked out to (a client's calls
        hand on the same objects: told by identity, without hashing them)."""

    def usable(self) -> bool:
        """Whether a request sent directly now is the one the client would send: nothing on the client asks
        for httpx's own handling (request hooks: the deadline's, then those vouched for)."""
        http = self._http
        hooks = http._event_hooks
        return (
            not http.is_closed
            and not http._mounts
            and http._auth is None
            and self._transport.proxy is None
            and (hooks["request"] == self._request_hooks or hooks["request"] == self.vouched)
            and hooks["response"] == self._response_hooks
            and _no_cookies(http.cookies)
            and not self._logger.isEnabledFor(logging.INFO)
        )

    async def post(
        self,
        url: str,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes,
        timeout: Mapping[str, float | None],
        request: Callable[[], Any],
    ) -> Reply | Any:
        """``POST body`` to ``url`` with ``headers`` (as given to httpx's ``Request``) and ``timeout`` (httpx's
        ``Timeout.as_dict()``); ``request`` builds the httpx ``Request`` this stands for (for errors and for
        answers read through httpx)."""
        sending, deadline = self._sending(url, headers, body, timeout, request)
        try:  # ``open``'s, written out: one coroutine frame fewer on every resumption of the call
            response = await sending
        except Exception as error:
            self.raise_mapped(error, request)
        try:
            answer = response.headers
            if 200 <= response.status < 300 and "Content-Encoding" not in answer and "Set-Cookie" not in answer:
                content = await self._read(response, deadline, request)
                response.release()
                content_type = ", ".join(answer.getall("Content-Type", ()))
                # a partial, not a lambda: no cells for what it holds in this coroutine's frame while it is in flight
                built = functools.partial(self._response, response, content, request)
                return Reply(response.status, answer, content, content_type, built)
        except BaseException:
            response.close()
            raise
        return await self.through_httpx(response, request)

    async def open(
        self,
        url: str,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes,
        timeout: Mapping[str, float | None],
        request: Callable[[], Any],
    ) -> tuple[Any, Deadline | None]:
        """Send ``POST body`` (arguments as for ``post``) and return aiohttp's response, unread, with the call's
        deadline; the timeouts are capped at the time the deadline leaves, failures are the transport's."""
        sending, deadline = self._sending(url, headers, body, timeout, request)
        try:
            response = await sending
        except Exception as error:
            self.raise_mapped(error, request)
        return response, deadline

    def _sending(
        self,
        url: str,
        headers: Sequence[tuple[bytes, bytes]],
        body: bytes,
        timeout: Mapping[str, float | None],
        request: Callable[[], Any],
    ) -> tuple[Awaitable[Any], Deadline | None]:
        """``open``'s aiohttp request, not awaited yet (nothing is sent until it is), with the call's deadline."""
        deadline = current_deadline()
        last = self._last
        connect, read, pool = timeout.get("connect"), timeout.get("read"), timeout.get("pool")
        if deadline is None:
            timeouts = last[1] if timeout is last[0] else self._client_timeout(connect, read, pool)
            self._last = (timeout, timeouts, *last[2:])
        else:  # capped at the time left: each call's own, not kept (they would only push the client's repeats out)
            remaining = deadline.remaining()
            if remaining <= 0:
                raise self.library.ConnectTimeout(
                    "the call's deadline passed before the request was sent", request=request()
                )
            timeouts = self._timeout(
                sock_connect=remaining if connect is None else min(connect, remaining),
                sock_read=remaining if read is None else min(read, remaining),
                connect=remaining if pool is None else min(pool, remaining),
            )
        target = self._target(url)
        items = self._items(target, headers, body)
        if items is None:  # headers httpx weighs itself: let it build them
            items = list(request().headers.items())
        transport = self._transport
        session = transport.client
        if not isinstance(session, self._session):
            session = transport.client = transport.get_client()
        sending = session.request(
            "POST",
            target.url,
            headers=items,
            data=body,
            allow_redirects=False,
            auto_decompress=False,
            compress=False,
            timeout=timeouts,
        )
        return sending, deadline

    def _client_timeout(self, connect: float | None, read: float | None, pool: float | None) -> Any:
        """aiohttp's ``ClientTimeout`` of httpx's connect, read and pool timeouts (kept: a client's repeat)."""
        key = (connect, read, pool)
        found = self._timeouts.get(key)
        if found is None:
            if len(self._timeouts) >= _MERGED_KEPT:  # capped at a deadline's time left, each call's is its own
                self._timeouts.clear()
            found = self._timeouts[key] = self._timeout(sock_connect=connect, sock_read=read, connect=pool)
        return found

    def _target(self, url: str) -> _Target:
        target = self._targets.get(url)
        if target is None:
            if len(self._targets) > 64:
                self._targets.clear()
            host = self.library.URL(url).netloc.decode("ascii")
            target = self._targets[url] = _Target(self._url(url), host)
        return target

    def _items(
        self, target: _Target, headers: Sequence[tuple[bytes, bytes]], body: bytes
    ) -> list[tuple[str, str]] | None:
        """What httpx's ``Request(content=body, headers=headers)`` hands aiohttp: ``Host`` first unless given, the
        headers by lowercase name (repeats joined with ``", "``), ``Content-Length`` last; ``None`` when a header is
        not ASCII or sets the body's length, or the body is empty (httpx's own rules then). The headers are worked
        out once per target and header list (a client's calls repeat theirs); a list changing only values of headers
        given once since the last post (a timeout announced in a header: each call's own) changes those alone."""
        if not body:
            return None
        given = tuple(headers)  # a tuple as it is (a client's own, the same on every call)
        last = self._last
        if given is last[2] and target.host == last[3]:
            merged = last[4]
        else:
            key = (target.host, given)
            merged = self._merged.get(key, _UNSEEN)
            if merged is _UNSEEN:
                merged = _revalued(given, last[2], last[4]) if target.host == last[3] else None
                if merged is None:
                    if len(self._merged) >= _MERGED_KEPT:
                        self._merged.clear()
                    merged = self._merged[key] = _merged(target, headers)
            self._last = (*last[:2], given, target.host, merged)
        if merged is None:
            return None
        return [*merged.items, ("content-length", str(len(body)))]

    def raise_mapped(self, error: Exception, request: Callable[[], Any]) -> NoReturn:
        """Raise ``error`` as the transport reports it (its exception table, the request attached as httpx does),
        from ``error``; ``error`` itself when the table leaves it as it is."""
        try:
            with self._module.map_aiohttp_exceptions():
                raise error
        except Exception as mapped:
            if mapped is error:
                raise
            if isinstance(mapped, self.library.RequestError):
                mapped.request = request()
            raise mapped from error

    async def _read(self, response: Any, deadline: Deadline | None, request: Callable[[], Any]) -> bytes:
        """The whole body; ``ReadTimeout`` when it is still arriving at the deadline (a body that has all arrived
        already, as a short answer's with its headers, is read at once, without a timer)."""
        try:
            if deadline is None or response.content.is_eof():
                content: bytes = await response.read()
                return content
            scope = asyncio.timeout(deadline.remaining())
            try:
                async with scope:
                    content = await response.read()
                    return content
            except TimeoutError:
                if scope.expired():
                    raise self.library.ReadTimeout(_LATE, request=request()) from None
                raise
        except Exception as error:
            self.raise_mapped(error, request)

    def _response(self, response: Any, content: bytes, request: Callable[[], Any]) -> Any:
        """The read httpx ``Response`` of a direct answer."""
        library = self.library
        built = library.Response(
            response.status,
            headers=response.raw_headers,
            stream=library.ByteStream(content),
            request=request(),
            extensions=_extensions(response),
        )
        built.default_encoding = self._http._default_encoding
        built.read()
        return built

    def streaming_response(self, response: Any, request: Any) -> Any:
        """The httpx ``Response`` the transport builds of aiohttp's ``response`` for ``request``, its body unread."""
        built = self.library.Response(
            response.status,
            headers=response.raw_headers,
            stream=self._module.AiohttpResponseStream(response),
            request=request,
            extensions=_extensions(response),
        )
        built.default_encoding = self._http._default_encoding
        return built

    async def through_httpx(self, response: Any, request: Callable[[], Any], *, stream: bool = False) -> Any:
        """The rest of httpx's ``send`` for an answer the direct path does not read itself: the transport's
        ``Response``, the cookie jar, the response hooks, redirects followed as the client follows them, and the
        body read (``stream``: left unread, as ``send(stream=True)`` leaves it)."""
        http = self._http
        sent = request()
        built = self.streaming_response(response, sent)
        try:
            http.cookies.extract_cookies(built)
            for hook in http._event_hooks["response"]:
                await hook(built)
            redirect = built.has_redirect_location and http.follow_redirects
            if redirect or not stream:
                await built.aread()
        except BaseException:
            await built.aclose()
            raise
        if not redirect:
            return built
        await built.aclose()
        return await http.send(http._build_redirect_request(sent, built), stream=stream)


def _no_cookies(cookies: Any) -> bool:
    """``not cookies`` (httpx's ``Cookies``), read from its standard ``CookieJar``'s own dict when it has one: an
    emptied domain left in it counts as a cookie (the answer then goes through httpx, which finds none)."""
    held = getattr(cookies.jar, "_cookies", None)
    return not held if type(held) is dict else not cookies


class _Merged(NamedTuple):
    """A header list worked out for aiohttp."""

    items: tuple[tuple[str, str], ...]
    """``DirectSender._items`` but for ``Content-Length``."""
    alone: dict[bytes, int]
    """Where in ``items`` the value of each header given once (by its name as given) is."""


def _merged(target: _Target, headers: Sequence[tuple[bytes, bytes]]) -> _Merged | None:
    """``DirectSender._items`` but for ``Content-Length``, and where each header given once went."""
    merged: dict[str, str] = {}
    given: dict[str, list[bytes]] = {}
    for key, value in headers:
        if not (key.isascii() and value.isascii()):
            return None
        name = key.decode().lower()
        if name in _LENGTH:
            return None
        text = value.decode()
        merged[name] = f"{merged[name]}, {text}" if name in merged else text
        given.setdefault(name, []).append(key)
    if "host" not in merged:
        merged = {"host": target.host, **merged}
    names = list(merged)
    return _Merged(
        tuple(merged.items()), {keys[0]: names.index(name) for name, keys in given.items() if len(keys) == 1}
    )


def _revalued(
    given: tuple[tuple[bytes, bytes], ...], before: tuple[tuple[bytes, bytes], ...] | None, merged: _Merged | None
) -> _Merged | None:
    """``merged``, worked out from ``before``, with the values ``given`` changes; ``None`` unless ``given`` holds
    ``before``'s names in their order and each header whose value it changes is given once, in ASCII."""
    if merged is None or before is None or len(given) != len(before):
        return None
    items: list[tuple[str, str]] | None = None
    for index, pair in enumerate(given):
        if pair != before[index]:
            key, value = pair
            at = merged.alone.get(key)
            if at is None or key != before[index][0] or not value.isascii():
                return None
            if items is None:
                items = list(merged.items)
            items[at] = (items[at][0], value.decode())
    return merged if items is None else _Merged(tuple(items), merged.alone)


def _extensions(response: Any) -> dict[str, Any]:
    extensions: dict[str, Any] = {"http_version": b"HTTP/1.1"}
    if response.reason:
        extensions["reason_phrase"] = response.reason.encode()
    return extensions
