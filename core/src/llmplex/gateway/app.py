"""The gateway's ASGI application: the API routes, health, metrics (``create_app``)."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.gateway.apis.anthropic_messages import (
    MessagesRequest,
    MessagesStreamEncoder,
    messages_call,
    messages_response,
)
from llmplex.gateway.apis.count_tokens import count_tokens_route
from llmplex.gateway.apis.embeddings import EmbeddingsRequest, embeddings_response
from llmplex.gateway.apis.openai_chat import ChatRequest, ChatStreamEncoder, chat_call, chat_response
from llmplex.gateway.apis.openai_responses import (
    ResponsesRequest,
    ResponsesStreamEncoder,
    responses_call,
    responses_response,
)
from llmplex.gateway.apis.route_fit import afit
from llmplex.gateway.calls import CallSpec, StreamEncoder
from llmplex.gateway.errors import Dialect, GatewayError
from llmplex.gateway.guard.door import ARRIVED, Door, close_if_unread
from llmplex.gateway.guard.throttle import AuthThrottle
from llmplex.gateway.keys.access import Authenticator
from llmplex.gateway.ops.health import readiness_checks
from llmplex.gateway.ops.metrics import MetricLabels, Metrics
from llmplex.gateway.pipeline import Exchange, Pipeline, upstream_error
from llmplex.gateway.records import Recorder
from llmplex.gateway.wire import dumps, now, parse_body
from llmplex.types import Response as LLMResponse
from llmplex.types.pricing import price_key, price_of

__all__ = ["ReadinessCheck", "create_app"]

log = logging.getLogger("llmplex.gateway")

ReadinessCheck = Callable[[], Awaitable[str | None]]
"""A readiness probe: ``None`` when the part it checks is ready, else what is wrong."""

_Parse = Callable[[bytes, Request], CallSpec]
_Whole = Callable[[LLMResponse, CallSpec], dict[str, Any]]
_Encoder = Callable[[CallSpec], StreamEncoder]


def _chat_parse(body: bytes, request: Request) -> CallSpec:
    return chat_call(parse_body(body, ChatRequest))


def _responses_parse(body: bytes, request: Request) -> CallSpec:
    return responses_call(parse_body(body, ResponsesRequest))


def _messages_parse(body: bytes, request: Request) -> CallSpec:
    return messages_call(parse_body(body, MessagesRequest), request.headers.get("anthropic-beta", ""))


def _ascii(text: str) -> str:
    """``text`` as a header value (what is not ASCII becomes ``?``)."""
    return text.encode("ascii", "replace").decode("ascii")


def _dropped(names: list[str]) -> dict[str, str] | None:
    """The ``x-llmplex-dropped`` header naming what was left out (none when nothing was)."""
    return {"x-llmplex-dropped": _ascii("; ".join(dict.fromkeys(names)))} if names else None


class _Routes:
    """The endpoint functions over one pipeline."""

    def __init__(self, pipeline: Pipeline, checks: Sequence[ReadinessCheck]) -> None:
        self.pipeline = pipeline
        self.checks = list(checks)

    async def _call(
        self, request: Request, endpoint: str, dialect: Dialect, parse: _Parse, whole: _Whole, encoder: _Encoder
    ) -> Response:
        pipeline = self.pipeline
        exchange = pipeline.begin(endpoint, dialect)
        body: bytes | None = None
        try:
            await pipeline.authenticate(exchange, request)  # before the body: a request without a key costs no read
            body = await pipeline.read_body(request)
            spec = await afit(parse(body, request), pipeline.client, pipeline.settings.drop_hints)
            exchange.model, exchange.stream = spec.model, spec.stream
            admission = await pipeline.admit(exchange, spec)
            if spec.stream:
                return pipeline.stream(exchange, request, spec, admission, encoder(spec), _dropped(spec.dropped))
            answer = await pipeline.complete(exchange, request, spec, admission)
            return pipeline.answer(exchange, whole(answer, spec), answer, _dropped([*spec.dropped, *answer.dropped]))
        except GatewayError as exc:
            return close_if_unread(pipeline.fail(exchange, exc), body)
        except LLMError as exc:  # refused before anything was sent (an unknown model, a bad tool schema)
            return pipeline.fail(exchange, GatewayError(400, exc.message, kind="invalid_request"))
        except ConnectionError:
            return _gone(pipeline, exchange)
        except ValueError as exc:  # a value the core types refuse (pydantic's ValidationError included)
            return pipeline.fail(exchange, GatewayError(400, f"invalid request: {_first_line(exc)}"))
        except Exception:
            log.exception("unexpected failure of %s", exchange.request_id)
            return pipeline.fail(exchange, GatewayError(500, "internal gateway error", kind="internal"))

    async def chat(self, request: Request) -> Response:
        return await self._call(
            request,
            "chat.completions",
            "openai",
            _chat_parse,
            lambda answer, spec: chat_response(answer, spec.model),
            lambda spec: ChatStreamEncoder(spec.model, spec.include_usage),
        )

    async def responses(self, request: Request) -> Response:
        return await self._call(
            request,
            "responses",
            "openai",
            _responses_parse,
            responses_response,
            ResponsesStreamEncoder,
        )

    async def messages(self, request: Request) -> Response:
        return await self._call(
            request,
            "messages",
            "anthropic",
            _messages_parse,
            lambda answer, spec: messages_response(answer, spec.model),
            lambda spec: MessagesStreamEncoder(spec.model),
        )

    async def embeddings(self, request: Request) -> Response:
        pipeline = self.pipeline
        exchange = pipeline.begin("embeddings", "openai")
        body: bytes | None = None
        try:
            await pipeline.authenticate(exchange, request)
            body = await pipeline.read_body(request)
            parsed = parse_body(body, EmbeddingsRequest)
            spec = CallSpec(model=parsed.model, messages=[])
            admission = await pipeline.admit(exchange, spec)
            exchange.called = time.perf_counter()
            kwargs: dict[str, Any] = dict(admission.call_args)
            kwargs.pop("fallbacks", None)
            if parsed.dimensions is not None:
                kwargs["dimensions"] = parsed.dimensions
            try:
                result = await pipeline.client.aembed(parsed.model, parsed.texts(), **kwargs)
            except LLMError as exc:
                raise upstream_error(exc, "openai") from None
            exchange.answered = time.perf_counter()
            answer = LLMResponse(usage=result.usage, model=result.model, provider=result.provider)
            return pipeline.answer(exchange, embeddings_response(result, parsed), answer)
        except GatewayError as exc:
            return close_if_unread(pipeline.fail(exchange, exc), body)
        except LLMError as exc:
            return pipeline.fail(exchange, GatewayError(400, exc.message, kind="invalid_request"))
        except ConnectionError:
            return _gone(pipeline, exchange)
        except Exception:
            log.exception("unexpected failure of %s", exchange.request_id)
            return pipeline.fail(exchange, GatewayError(500, "internal gateway error", kind="internal"))

    async def models(self, request: Request) -> Response:
        pipeline = self.pipeline
        exchange = pipeline.begin("models", "openai")
        try:
            caller = await pipeline.authenticate(exchange, request)
        except GatewayError as exc:
            return pipeline.fail(exchange, exc)
        config = pipeline.client.config
        listed = dict.fromkeys([*config.groups, *config.aliases, *config.gateway.models, config.default_model])
        created = now()
        data = [
            {"id": model, "object": "model", "created": created, "owned_by": _owner(config.aliases.get(model, model))}
            for model in listed
            if caller.may_use(model)
        ]
        return pipeline.answer(exchange, {"object": "list", "data": data}, None)

    async def liveness(self, request: Request) -> Response:
        return Response(b'{"status":"ok"}', media_type="application/json")

    async def readiness(self, request: Request) -> Response:
        problems: dict[str, str] = {}
        degraded: dict[str, str] = {}
        for check in self.checks:
            problem = await check()
            if problem is not None:  # a check marked ``degrades`` (the gateway still serves) answers 200
                found = degraded if getattr(check, "degrades", False) else problems
                found[getattr(check, "__name__", "check")] = problem
        if problems:
            body = {"status": "unavailable", "problems": {**problems, **degraded}}
            return Response(dumps(body), 503, media_type="application/json")
        if degraded:
            return Response(dumps({"status": "degraded", "problems": degraded}), media_type="application/json")
        return Response(b'{"status":"ready"}', media_type="application/json")

    async def metrics(self, request: Request) -> Response:
        metrics = self.pipeline.metrics
        if metrics is None:
            return Response(b"metrics are off\n", 404, media_type="text/plain")
        body, content_type = metrics.exposition()
        return Response(body, media_type=content_type)


def warm_up(client: Client) -> None:
    """Load the plugins and build the async SDK clients the config names, before the first request.

    A provider's first use imports its SDK (a second or more), a client's first call imports the observer
    plugins, and the first priced answer loads genai-prices' data: done inside a request, each would stall
    every stream and request of the worker. A provider that cannot be prepared (a missing key) is logged and
    left to fail on its own requests.
    """
    config = client.config
    client.host.load_observers(config.disabled)
    for prefix in config.providers:
        try:
            client.provider_client(prefix, asynchronous=True)
        except LLMError as exc:
            log.warning("provider %s not prepared: %s", prefix, exc)
    deployments = [d.model for group in config.groups.values() for d in group.deployments]
    for model in dict.fromkeys([*config.gateway.models, *config.aliases.values(), *deployments]):
        try:
            route = client.route(model)
            route.provider.client(True)
        except LLMError as exc:
            log.warning("provider of %s not prepared: %s", model, exc)
            continue
        key = price_key(route.provider.info.name, route.model)
        if key is not None:  # genai-prices' data (half a second, seconds on a loaded host): else the first answer's
            price_of(key, 1, 0, 0, 1, 0)


def _gone(pipeline: Pipeline, exchange: Exchange) -> Response:
    """A request whose client left: recorded as 499 (nginx's "client closed request"); nobody reads the answer."""
    pipeline.finish(exchange, 499, GatewayError(499, "client disconnected", kind="client_disconnected"), None)
    return Response(status_code=499, headers=pipeline.headers(exchange))


def _owner(model: str) -> str:
    return model.partition(":")[0] if ":" in model else "llmplex"


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _timed(send: Any) -> Any:
    """``send``, putting ``x-llmplex-overhead-ms`` (the time since now) on an answer that has none."""
    arrived = time.perf_counter()

    async def timed_send(message: Any) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", [])
            if not any(name == b"x-llmplex-overhead-ms" for name, _ in headers):
                spent = f"{(time.perf_counter() - arrived) * 1000:.3f}".encode()
                message = {**message, "headers": [*headers, (b"x-llmplex-overhead-ms", spent)]}
        await send(message)

    return timed_send


class _OverheadHeader:
    """Puts ``x-llmplex-overhead-ms`` on every answer that has none (health, metrics, unknown routes, refusals).

    The API routes set their own, which leaves out the time spent waiting for the provider.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _timed(send))


_Endpoint = Callable[[Request], Awaitable[Response]]
_Responder = Callable[[Any, Any, Any], Awaitable[None]]


class _Gateway(Starlette):
    """Starlette, with the API's POST routes (``hot``) dispatched by their path straight to the ``Door`` and the
    endpoint, past Starlette's error, exception and routing layers and ``_OverheadHeader``: each is one more
    coroutine frame that every resumption of the request's task goes through, and one more wrapper of ``send``
    (a stream's every chunk passes each). The endpoints answer every failure themselves, with the gateway's
    headers; what escapes them goes to the server, as through those layers (a 500)."""

    hot: dict[str, _Responder]  # path -> its endpoint's responder, made once
    door: Door | None = None

    def build_middleware_stack(self) -> Any:
        stack = super().build_middleware_stack()
        layer: Any = stack
        while layer is not None and not isinstance(layer, Door):
            layer = getattr(layer, "app", None)
        self.door = layer
        return stack

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            responder = self.hot.get(scope["path"])
            if responder is not None:
                if self.middleware_stack is None:
                    self.middleware_stack = self.build_middleware_stack()
                if self.door is not None:  # its answers and refusals carry x-llmplex-overhead-ms: send unwrapped
                    scope["app"] = self
                    scope[ARRIVED] = time.perf_counter()
                    await self.door.serve(scope, receive, send, responder)
                    return
        await super().__call__(scope, receive, send)


async def _respond(endpoint: _Endpoint, scope: Any, receive: Any, send: Any) -> None:
    response = await endpoint(Request(scope, receive, send))
    await response(scope, receive, send)


async def _not_found(request: Request, exc: Exception) -> Response:
    dialect: Dialect = "anthropic" if request.url.path.startswith("/v1/messages") else "openai"
    status = getattr(exc, "status_code", 404)
    message = f"no route {request.method} {request.url.path}" if status == 404 else f"{request.method} not allowed"
    error = GatewayError(status, message, kind="not_found")
    return Response(dumps(error.body(dialect)), status, media_type="application/json")


def _dashboard(client: Client, key: str | None) -> list[Mount]:
    """``/ui``: the dashboard over the gateway's database (its spend log: ``[gateway] database``, else
    ``[log] database``), behind ``key``; nothing without a key."""
    if key is None:
        return []
    from llmplex.dashboard.app import create_dashboard
    from llmplex.dashboard.guard import guarded
    from llmplex.gateway.keys.store import database_url

    groups = None
    if client.config.groups:
        from llmplex.dashboard.groups import group_view

        groups = partial(group_view, client)
    return [Mount("/ui", app=guarded(create_dashboard(database_url(client.config), groups), key))]


def _door(client: Client, throttle: AuthThrottle, dashboard: bool) -> Middleware:
    """The ``Door``: failed authentications throttled by ``throttle``, keys' requests in flight capped
    (``[gateway] max_in_flight_per_key``)."""
    limit, login = client.config.gateway.max_in_flight_per_key, ("/ui/login",) if dashboard else ()
    return Middleware(Door, throttle=throttle, max_in_flight_per_key=limit, login_paths=login)


def create_app(
    client: Client,
    authenticator: Authenticator,
    *,
    recorders: Sequence[Recorder] = (),
    checks: Sequence[ReadinessCheck] | None = None,
    metrics: bool = True,
    dashboard_key: str | None = None,
) -> Starlette:
    """The gateway over ``client``: every request is let in by ``authenticator`` and handed to ``recorders``.

    ``checks`` are the readiness probes (default: the ``[limits]`` Redis when one is
    configured). The client is closed when the application shuts down. ``dashboard_key`` (the master key)
    mounts the call log's dashboard at ``/ui``, open only to requests carrying that key.
    """
    settings = client.config.gateway
    labels = MetricLabels.of(client) if metrics else None
    pipeline = Pipeline(client, settings, authenticator, recorders, Metrics(labels) if labels else None)
    if pipeline.metrics is not None and client.config.groups:
        from llmplex.gateway.ops.deployment_metrics import DeploymentMetrics

        client.host.register_observer(DeploymentMetrics(client, pipeline.metrics.registry))
    routes = _Routes(pipeline, readiness_checks(client.config) if checks is None else checks)

    throttle = AuthThrottle.of(client.config)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warm_up(client)
        await throttle.warm_up()
        yield
        await throttle.aclose()
        await client.aclose()

    hot: dict[str, _Endpoint] = {
        "/v1/chat/completions": routes.chat,
        "/v1/responses": routes.responses,
        "/v1/messages": routes.messages,
        "/v1/messages/count_tokens": count_tokens_route(pipeline),
        "/v1/embeddings": routes.embeddings,
    }
    app = _Gateway(
        routes=[
            *(Route(path, endpoint, methods=["POST"]) for path, endpoint in hot.items()),
            Route("/v1/models", routes.models, methods=["GET"]),
            Route("/health/liveness", routes.liveness, methods=["GET"]),
            Route("/health/readiness", routes.readiness, methods=["GET"]),
            Route("/metrics", routes.metrics, methods=["GET"]),
            *_dashboard(client, dashboard_key),
        ],
        exception_handlers={404: _not_found, 405: _not_found},
        middleware=[Middleware(_OverheadHeader), _door(client, throttle, dashboard_key is not None)],
        lifespan=lifespan,
    )
    app.hot = {path: partial(_respond, endpoint) for path, endpoint in hot.items()}
    app.state.pipeline = pipeline
    return app
