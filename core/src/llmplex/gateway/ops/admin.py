"""The admin API, open only to the master key: ``/admin/keys`` (make, list, change, revoke) and ``/admin/spend``.

``POST /admin/keys`` takes ``{"name", "budget_usd", "budget_period", "rpm", "tpm",
"max_parallel", "models", "expires", "metadata", "team"}`` (durations as ``90s``, ``12h``,
``30d``) and answers the record with ``"key"``, shown this once. ``GET /admin/keys/{name}``
adds, for a key with a budget, ``"budget"``: what its current window spent and what requests in
flight hold. ``PATCH /admin/keys/{name}`` changes the same fields (``null`` clears a cap); ``DELETE``
revokes. ``GET /admin/spend?by=key|model|day&key=&model=&since=`` sums the spend log.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from llmplex.errors import LLMConfigurationError
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.guard.door import credential_presented, mark_failed_authentication
from llmplex.gateway.keys.access import unauthorized
from llmplex.gateway.keys.auth import KeyAuthenticator
from llmplex.gateway.keys.store import parse_duration, parse_money
from llmplex.gateway.spend.log import spend_json, spend_totals
from llmplex.gateway.wire import dumps

__all__ = ["admin_routes", "key_options"]

_Handler = Callable[[Request], Awaitable[Any]]


def key_options(body: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    """``KeyStore.create``/``update`` arguments from an admin request's (or the CLI's) fields."""
    known = {"name", "budget_usd", "budget_period", "rpm", "tpm", "max_parallel", "models", "expires", "metadata"}
    if creating:
        known.add("team")  # fixed when the key is made: a key cannot join another team's state later
    unknown = set(body) - known
    if unknown:
        raise LLMConfigurationError(
            f"unknown key field(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
        )
    options: dict[str, Any] = {}
    if body.get("team") is not None:
        options["team"] = body["team"]
    for name in ("rpm", "tpm", "max_parallel"):
        if name in body:
            options[name] = body[name]
    if "budget_usd" in body:
        options["budget_usd"] = None if body["budget_usd"] is None else parse_money(body["budget_usd"], "budget_usd")
    if "budget_period" in body:
        period = body["budget_period"]
        options["budget_period_seconds"] = None if period is None else parse_duration(period, "budget_period")
    if "models" in body:
        models = body["models"] or []
        if isinstance(models, str):
            models = models.split(",")
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise LLMConfigurationError("models must be a list of model patterns such as ['openai:*', 'mock:echo']")
        options["models"] = models
    if "metadata" in body:
        if not isinstance(body["metadata"], dict):
            raise LLMConfigurationError("metadata must be a JSON object")
        options["metadata"] = body["metadata"]
    if "expires" in body and body["expires"] is not None:
        seconds = parse_duration(body["expires"], "expires")
        if creating:
            options["expires_in_seconds"] = seconds
        else:
            from datetime import timedelta

            options["expires_at"] = datetime.now(UTC).replace(tzinfo=None, microsecond=0) + timedelta(seconds=seconds)
    elif "expires" in body and not creating:
        options["expires_at"] = None
    return options


def _json(body: Any, status: int = 200) -> Response:
    return Response(dumps(body), status, media_type="application/json")


def _error(error: GatewayError) -> Response:
    return Response(dumps(error.body("openai")), error.status, error.response_headers(), media_type="application/json")


async def body_of(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise GatewayError(400, "the body is not JSON: send a JSON object") from None
    if not isinstance(body, dict):
        raise GatewayError(400, "the body must be a JSON object")
    return body


def admin_routes(authenticator: KeyAuthenticator, master_key: str) -> list[Route]:
    """The ``/admin`` routes over ``authenticator``'s key store, behind ``master_key``."""
    keys = authenticator.keys
    master = master_key.encode()

    def guarded(handler: _Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            credential = credential_presented(request)
            if credential is None:
                return _error(unauthorized("the admin API needs the master key"))
            if not hmac.compare_digest(credential.encode("utf-8", "surrogatepass"), master):
                mark_failed_authentication(request.scope)  # guessing the master key here is throttled too
                return _error(GatewayError(403, "the admin API needs the master key, not this key", kind="forbidden"))
            try:
                answer: Response = await handler(request)
                return answer
            except LLMConfigurationError as exc:
                return _error(GatewayError(400, exc.message))
            except GatewayError as exc:
                return _error(exc)

        return endpoint

    async def list_keys(request: Request) -> Response:
        records = await asyncio.to_thread(keys.list)
        return _json({"object": "list", "data": [r.as_json() for r in records]})

    async def create_key(request: Request) -> Response:
        body = await body_of(request)
        name = body.get("name")
        if not isinstance(name, str):
            raise GatewayError(400, 'give the key a name: {"name": "my-app"}', param="name")
        options = key_options({k: v for k, v in body.items() if k != "name"}, creating=True)
        key, record = await asyncio.to_thread(lambda: keys.create(name, **options))
        return _json({**record.as_json(), "key": key}, 201)

    async def show_key(request: Request) -> Response:
        record = await asyncio.to_thread(keys.get, request.path_params["name"])
        shown = record.as_json()
        if record.budget_usd is not None:  # spent and held (reserved by requests in flight), as admission sees them
            shown["budget"] = await authenticator.limits.budgets.status(record)
        return _json(shown)

    async def update_key(request: Request) -> Response:
        name = request.path_params["name"]
        options = key_options(await body_of(request), creating=False)
        record = await asyncio.to_thread(lambda: keys.update(name, **options))
        authenticator.forget(name)
        return _json(record.as_json())

    async def revoke_key(request: Request) -> Response:
        name = request.path_params["name"]
        record = await asyncio.to_thread(keys.revoke, name)
        authenticator.forget(name)
        return _json(record.as_json())

    async def spend(request: Request) -> Response:
        params = request.query_params
        since_text = params.get("since")
        since = None
        if since_text:
            try:
                since = datetime.fromisoformat(since_text)
            except ValueError:
                raise GatewayError(
                    400, f"since={since_text!r} is not a date: write 2026-11-26", param="since"
                ) from None
        by = params.get("by", "key")
        rows = await asyncio.to_thread(
            lambda: spend_totals(keys.reader, by=by, key=params.get("key"), model=params.get("model"), since=since)
        )
        return _json({"object": "list", "by": by, "data": spend_json(rows, by)})

    return [
        Route("/admin/keys", guarded(list_keys), methods=["GET"]),
        Route("/admin/keys", guarded(create_key), methods=["POST"]),
        Route("/admin/keys/{name}", guarded(show_key), methods=["GET"]),
        Route("/admin/keys/{name}", guarded(update_key), methods=["PATCH"]),
        Route("/admin/keys/{name}", guarded(revoke_key), methods=["DELETE"]),
        Route("/admin/keys/{name}/revoke", guarded(revoke_key), methods=["POST"]),
        Route("/admin/spend", guarded(spend), methods=["GET"]),
    ]
