"""The dashboard behind a key (``guarded``): what the gateway mounts at ``/ui`` behind its master key.

A request is let in when it carries the key (``Authorization: Bearer KEY`` or
``x-api-key: KEY``) or the session cookie a browser gets by typing the key into
the login form. The cookie holds an HMAC of the key, never the key, so no
answer ever carries the key itself. Anything else is a 401: the login form for a
page, a JSON error for the API.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response

from llmplex.dashboard.app import SECURITY_HEADERS

__all__ = ["COOKIE", "guarded"]

COOKIE = "llmplex_ui"
"""The session cookie's name."""

_LOGIN_LIMIT = 8192

_LOGIN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>llmplex call log: sign in</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="{base}static/app.css"></head>
<body><main class="login"><h1>llmplex call log</h1>
<form method="post" action="{base}login">
<label>Gateway master key <input type="password" name="key" autocomplete="current-password" required autofocus></label>
<button type="submit">Open the dashboard</button></form>
<p class="error" role="alert">{message}</p></main></body></html>
"""


def _session(key: bytes) -> str:
    return hmac.new(key, b"llmplex dashboard session", hashlib.sha256).hexdigest()


def _credential(headers: Mapping[str, str]) -> str | None:
    authorization = headers.get("authorization", "")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key", "").strip() or None


class _Guard:
    def __init__(self, app: Any, key: str) -> None:
        self.app = app
        self._key = key.encode("utf-8", "surrogatepass")
        self._session = _session(self._key)

    def __repr__(self) -> str:
        return "guarded(dashboard)"

    def _holds_key(self, request: Request) -> bool:
        credential = _credential(request.headers)
        if credential is not None:
            return hmac.compare_digest(credential.encode("utf-8", "surrogatepass"), self._key)
        cookie = SimpleCookie()
        try:
            cookie.load(request.headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no session
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self._session.encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        root = scope.get("root_path", "")
        base = f"{root}/"
        path = scope["path"][len(root) :] if scope["path"].startswith(root) else scope["path"]
        if path == "/static/app.css":  # the login form's styles: nothing of the log
            await self.app(scope, receive, send)
            return
        if path == "/login" and request.method == "POST":
            response = await self._login(request, base)
        elif self._holds_key(request):
            await self.app(scope, receive, send)
            return
        elif path.startswith("/api/"):
            body = b'{"error":"send the gateway master key (Authorization: Bearer KEY) or sign in at the dashboard"}'
            response = Response(body, 401, headers=SECURITY_HEADERS, media_type="application/json")
        else:
            response = _login_page(base, "", 401)
        await response(scope, receive, send)

    async def _login(self, request: Request, base: str) -> Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > _LOGIN_LIMIT:
                return _login_page(base, "That is not the master key.", 401)
        typed = parse_qs(body.decode("utf-8", "replace")).get("key", [""])[0]
        if not hmac.compare_digest(typed.encode("utf-8", "surrogatepass"), self._key):
            return _login_page(base, "That is not the master key.", 401)
        response = Response(status_code=303, headers={**SECURITY_HEADERS, "location": base})
        secure = request.url.scheme == "https"
        response.set_cookie(COOKIE, self._session, path=base, httponly=True, samesite="strict", secure=secure)
        return response


def _login_page(base: str, message: str, status: int) -> Response:
    return Response(_LOGIN.format(base=base, message=message), status, headers=SECURITY_HEADERS, media_type="text/html")


def guarded(app: Any, key: str) -> Any:
    """``app`` (the dashboard) letting in only requests that carry ``key`` or the session its login form gives."""
    return _Guard(app, key)
