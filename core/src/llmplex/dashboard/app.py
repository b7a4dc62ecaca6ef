"""The dashboard's ASGI application (``create_dashboard``): the page, its static files, its JSON API.

- ``GET /``: the page; ``GET /static/{app.js,app.css}``: its script and styles (nothing from the network).
- ``GET /api/summary``: totals, and calls/tokens/cost per day, model, provider and key.
- ``GET /api/calls?q=&model=&provider=&status=&key=&cid=&since=&until=&page=&per_page=``: one page of calls.
- ``GET /api/calls/{id}``: one call with its whole conversation (messages, tool calls, results, answer).

Every read is one aggregated or index-bounded query on a connection of its own,
run on Starlette's thread pool. A log that does not exist yet reads as empty.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from llmplex.errors import LLMConfigurationError
from llmplex.masking.values import redact

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from llmplex.store.queries import CallFilter

__all__ = ["SECURITY_HEADERS", "create_dashboard"]

log = logging.getLogger("llmplex.dashboard")

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
"""Headers on every answer: the page may load and fetch only from its own origin."""

_STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "index.html": "text/html; charset=utf-8",
}


class _BadRequestError(Exception):
    """A query parameter the API cannot use; its message says which and why."""


class _Log:
    """The call log's engine, opened on first use (a log that does not exist yet is opened once it does)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def connect(self) -> Connection | None:
        from llmplex.store.database import open_database

        with self._lock:
            if self._engine is None:
                try:
                    self._engine = open_database(self.url, create=False)
                except FileNotFoundError:
                    return None
            return self._engine.connect()

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None


def _json(data: Any, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    return Response(body, status, headers=SECURITY_HEADERS, media_type="application/json")


def _when(request: Request, name: str) -> datetime | None:
    text = request.query_params.get(name) or None
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _BadRequestError(f"{name}={text[:40]!r} is not a date: write 2026-11-26 or 2026-11-26T14:30") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _number(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise _BadRequestError(f"{name}={text[:20]!r} is not a whole number from 1 to 999999999")
    return int(text)


def _filter(request: Request) -> CallFilter:
    from llmplex.store.queries import CallFilter

    params = request.query_params
    status = params.get("status") or None
    if status not in (None, "ok", "error"):
        raise _BadRequestError(f"status={status[:20]!r} is not ok or error")
    return CallFilter(
        query=params.get("q") or None,
        model=params.get("model") or None,
        provider=params.get("provider") or None,
        conversation_id=params.get("cid") or None,
        status=status,
        since=_when(request, "since"),
        until=_when(request, "until"),
        key_name=params.get("key") or None,
    )


class _Summaries:
    """The last summaries read, per filter, with the log's version they were read at: reloading the
    page over a log that did not change costs one indexed query instead of a pass over every call."""

    KEPT = 32

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[tuple[tuple[str, str], ...], tuple[tuple[int, int], Any]] = {}

    def __call__(self, connection: Connection | None, request: Request) -> Any:
        where = _filter(request)
        if connection is None:
            return {"totals": None, "by_day": [], "by_model": [], "by_provider": [], "by_key": []}
        return self.read(connection, tuple(sorted(request.query_params.items())), where)

    def read(self, connection: Connection, key: tuple[tuple[str, str], ...], where: CallFilter) -> Any:
        """The summary of ``where`` (named ``key``): the one kept when the log did not change, else read anew."""
        from llmplex.store.dashboard_queries import log_version, summary

        version = log_version(connection)
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and kept[0] == version:
            return kept[1]
        data = summary(connection, where)
        with self._lock:
            if len(self._kept) >= self.KEPT:
                self._kept.clear()
            self._kept[key] = (version, data)
        return data


def _calls(connection: Connection | None, request: Request) -> Any:
    from llmplex.store.dashboard_queries import calls_page

    page, per_page = _number(request, "page", 1), _number(request, "per_page", 50)
    where = _filter(request)
    if connection is None:
        return {"total": 0, "page": page, "per_page": per_page, "calls": []}
    try:
        result = calls_page(connection, where, page, per_page)
    except LLMConfigurationError as exc:
        raise _BadRequestError(exc.message) from None
    return {"total": result.total, "page": result.page, "per_page": result.per_page, "calls": result.rows}


class _Api:
    """The JSON endpoints over one call log."""

    def __init__(self, calllog: _Log, groups: Callable[[Connection | None], Any] | None = None) -> None:
        self.calllog = calllog
        self._summaries = _Summaries()
        self._groups = groups

    def _answer(self, request: Request, read: Callable[[Connection | None, Request], Any]) -> Response:
        connection = None
        try:
            connection = self.calllog.connect()
            data = read(connection, request)
        except _BadRequestError as exc:
            return _json({"error": str(exc)}, 400)
        except Exception as exc:
            reason = f"{type(exc).__name__}: {redact(str(exc)).strip().splitlines()[0][:200] if str(exc) else ''}"
            log.warning("the call log cannot be read: %s", reason)
            return _json({"error": f"the call log cannot be read ({type(exc).__name__}); see the server's log"}, 503)
        finally:
            if connection is not None:
                connection.close()
        if data is None:
            return _json({"error": "no such call"}, 404)
        return _json(data)

    def warm(self) -> None:
        """Open the log and read its whole summary once, so that the first page is drawn from it at once."""
        from llmplex.store.queries import CallFilter

        try:
            connection = self.calllog.connect()
            if connection is not None:
                with connection:
                    self._summaries.read(connection, (), CallFilter())
        except Exception as exc:  # the API answers 503 saying so; starting is not the place to fail
            log.warning("the call log cannot be read yet: %s", type(exc).__name__)

    def summary(self, request: Request) -> Response:
        return self._answer(request, self._summaries)

    def calls(self, request: Request) -> Response:
        return self._answer(request, _calls)

    def groups(self, request: Request) -> Response:
        """The model groups' split and health (none when the dashboard runs without a client)."""
        view = self._groups
        if view is None:
            return _json({"groups": []})
        return self._answer(request, lambda connection, _: view(connection))

    def call(self, request: Request) -> Response:
        from llmplex.store.dashboard_queries import call_with_conversation

        text = request.path_params["call_id"]
        if not (text.isascii() and text.isdigit()) or len(text) > 18:
            return _json({"error": f"{text[:20]!r} is not a call id (a whole number)"}, 400)
        call_id = int(text)
        return self._answer(request, lambda c, r: None if c is None else call_with_conversation(c, call_id))


def _static(name: str) -> Callable[[Request], Awaitable[Response]]:
    body = (files("llmplex.dashboard") / "static" / name).read_bytes()

    async def serve(request: Request) -> Response:
        return Response(body, headers=SECURITY_HEADERS, media_type=_STATIC[name])

    return serve


async def _no_icon(request: Request) -> Response:
    """No icon (a browser asks for one; a 404 would be an error in its console)."""
    return Response(status_code=204, headers=SECURITY_HEADERS)


async def _not_found(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    return _json({"error": f"no page {request.method} {request.url.path}"}, status)


def create_dashboard(url: str, groups: Callable[[Connection | None], Any] | None = None) -> Starlette:
    """The dashboard over the call log at ``url`` (``sqlite:///PATH`` or ``postgresql://...``), read-only.

    ``groups`` (the gateway's) reads the model groups' split and health for ``/api/groups``.

    When it runs with its lifespan, it reads the log's summary before it takes requests (and closes
    the log when it stops); mounted without one (the gateway's ``/ui``), it reads on the first request.
    """
    calllog = _Log(url)
    api = _Api(calllog, groups)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await run_in_threadpool(api.warm)
        yield
        calllog.close()

    app = Starlette(
        routes=[
            Route("/", _static("index.html"), methods=["GET"]),
            Route("/favicon.ico", _no_icon, methods=["GET"]),
            *(Route(f"/static/{name}", _static(name), methods=["GET"]) for name in ("app.js", "app.css")),
            Route("/api/summary", api.summary, methods=["GET"]),
            Route("/api/calls", api.calls, methods=["GET"]),
            Route("/api/calls/{call_id}", api.call, methods=["GET"]),
            Route("/api/groups", api.groups, methods=["GET"]),
        ],
        exception_handlers={404: _not_found, 405: _not_found},
        lifespan=lifespan,
    )
    return app
