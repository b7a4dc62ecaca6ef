"""The gateway's door (``Door``, an ASGI middleware): held-back addresses and keys with too much in flight.

Before anything else of a request is looked at, a request that presents a credential
(``Authorization: Bearer``, ``x-api-key``) or the dashboard's login form is refused with
a 429 and ``Retry-After`` when its address failed authentication too often lately
(``AuthThrottle``), or when its key already has ``[gateway] max_in_flight_per_key``
requests in flight in this process. A failed authentication is a 401 answered to a
request that presented a credential or a login (a wrong key, a wrong dashboard password),
or an answer the application marked with ``mark_failed_authentication`` (a wrong key on
the admin API, answered 403).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Collection, Mapping
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from llmplex.gateway.errors import Dialect, GatewayError
from llmplex.gateway.guard.throttle import AuthThrottle, client_address
from llmplex.gateway.wire import dumps

__all__ = [
    "ARRIVED",
    "CREDENTIAL",
    "FAILED_AUTHENTICATION",
    "Door",
    "close_if_unread",
    "credential_of",
    "credential_presented",
    "mark_failed_authentication",
]

ARRIVED = "llmplex.arrived"
"""The key, in a request's scope, of the ``time.perf_counter()`` it arrived at, set where the application hands
it to the door without wrapping ``send``: the door's refusals then put ``x-llmplex-overhead-ms`` on themselves."""

CREDENTIAL = "llmplex.credential"
"""The key, in an HTTP request's scope, of the credential the door read from its headers (``credential_of``'s,
``None`` for none): the key it counts in flight is the one the application authenticates, read once
(``credential_presented``)."""

FAILED_AUTHENTICATION = "llmplex.failed_authentication"
"""The key, in a request's ``scope["state"]``, that marks its answer as a failed authentication."""


def mark_failed_authentication(scope: Any) -> None:
    """Count the answer to this request (``scope``) as a failed authentication of its address."""
    scope.setdefault("state", {})[FAILED_AUTHENTICATION] = True


def close_if_unread(response: Response, body: bytes | None) -> Response:
    """``response``, closing the connection when the request's ``body`` was not read (``None``): it may be huge
    or endless, and reading on to the next request would cost what refusing it before the body saved."""
    if body is None:
        response.headers["connection"] = "close"
    return response


def credential_of(headers: Mapping[str, str]) -> str | None:
    """The key a request carries: ``Authorization: Bearer KEY`` (OpenAI clients) or ``x-api-key`` (Anthropic)."""
    authorization = headers.get("authorization")
    if authorization:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    key = headers.get("x-api-key")
    return key.strip() if key and key.strip() else None


def credential_presented(request: Request) -> str | None:
    """The credential ``request`` presents (``credential_of``'s): the door's reading where it has read it."""
    scope = request.scope
    return scope[CREDENTIAL] if CREDENTIAL in scope else credential_of(request.headers)


class Door:
    """Refuses held-back addresses and over-busy keys (429), and counts failed authentications (see the module)."""

    def __init__(
        self,
        app: Any,
        throttle: AuthThrottle | None,
        max_in_flight_per_key: int,
        login_paths: Collection[str] = (),
    ) -> None:
        self.app = app
        self.throttle = throttle
        self.max_in_flight = max_in_flight_per_key
        self.login_paths = frozenset(login_paths)
        self._in_flight: dict[bytes, int] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.serve(scope, receive, send, self.app)

    async def serve(self, scope: Any, receive: Any, send: Any, app: Any) -> None:
        """Let the HTTP request ``scope`` through to ``app`` (this door's own ``app``, or an endpoint the
        application dispatches straight to), or refuse it."""
        credential = scope[CREDENTIAL] = credential_of(Headers(raw=scope["headers"]))
        login = scope["method"] == "POST" and scope["path"] in self.login_paths
        if credential is None and not login:
            await app(scope, receive, send)
            return
        address = client_address(scope)
        if self.throttle is not None:
            wait = await self.throttle.retry_after(address)
            if wait is not None:
                message = (
                    f"too many failed authentications from this address: at most {self.throttle.failures} in "
                    f"{self.throttle.window} s ([gateway] auth_failures); retry later"
                )
                await _refuse(scope, send, GatewayError(429, message, code="rate_limit_exceeded", retry_after=wait))
                return
        if credential is None:
            await self._serve(scope, receive, send, address, app)
            return
        digest = hashlib.sha256(credential.encode("utf-8", "surrogatepass")).digest()
        count = self._in_flight.get(digest, 0)
        if count >= self.max_in_flight:
            message = (
                f"this API key has {count} requests in flight at this gateway process, its "
                "[gateway] max_in_flight_per_key; retry shortly"
            )
            await _refuse(scope, send, GatewayError(429, message, code="rate_limit_exceeded", retry_after=1))
            return
        self._in_flight[digest] = count + 1
        try:
            await self._serve(scope, receive, send, address, app)
        finally:
            left = self._in_flight[digest] - 1
            if left:
                self._in_flight[digest] = left
            else:
                del self._in_flight[digest]

    async def _serve(self, scope: Any, receive: Any, send: Any, address: str, app: Any) -> None:
        """Serve a request that presented a credential or a login: a 401 (or a marked answer) counts as failed."""
        throttle = self.throttle
        if throttle is None:
            await app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def counted(message: Any) -> None:
            await throttle.failed(address)
            await send(message)

        def counting_send(message: Any) -> Awaitable[None]:  # what to await: no coroutine of its own for a message
            if message["type"] == "http.response.start" and (
                message["status"] == 401 or state.get(FAILED_AUTHENTICATION)
            ):
                return counted(message)
            return send(message)  # type: ignore[no-any-return]

        await app(scope, receive, counting_send)


async def _refuse(scope: Any, send: Any, error: GatewayError) -> None:
    dialect: Dialect = "anthropic" if scope["path"].startswith("/v1/messages") else "openai"
    body = dumps(error.body(dialect))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers.append((b"connection", b"close"))
    headers += [(k.encode(), v.encode()) for k, v in error.response_headers().items()]
    arrived = scope.get(ARRIVED)
    if arrived is not None:
        headers.append((b"x-llmplex-overhead-ms", f"{(time.perf_counter() - arrived) * 1000:.3f}".encode()))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
