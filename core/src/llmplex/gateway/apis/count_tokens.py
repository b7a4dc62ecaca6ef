"""``POST /v1/messages/count_tokens``: the input tokens a Messages request would count, on any model.

The provider's own count where it has one (its plugin implements ``llmplex_acount_tokens`` with
``"provider"``), else the model's own tokenizer (``"tokenizer"``), else the estimate budget reservations
make of a prompt (``"estimate"``: ``spend.estimate.prompt_tokens``, about four characters a token). The answer
is the API's ``{"input_tokens": N}``; the ``x-llmplex-token-count`` header says which of the three it is.
The provider's count is held to the config's ``timeout``, as a call is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import Response

from llmplex.client import Client
from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMDeadlineExceededError, LLMError
from llmplex.gateway.apis.anthropic_messages import MessagesRequest, messages_call
from llmplex.gateway.calls import CallSpec
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.guard.door import close_if_unread
from llmplex.gateway.pipeline import Pipeline, upstream_error
from llmplex.gateway.spend.estimate import prompt_tokens
from llmplex.gateway.wire import MAX_TOKENS, parse_body
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import await_before

__all__ = ["CountTokensRequest", "count_tokens", "count_tokens_route"]

log = logging.getLogger("llmplex.gateway")


class CountTokensRequest(MessagesRequest):
    """A count_tokens request: a Messages request without ``max_tokens``."""

    max_tokens: int = Field(default=MAX_TOKENS, ge=1, le=MAX_TOKENS)


async def count_tokens(client: Client, spec: CallSpec) -> tuple[int, str]:
    """The input tokens of ``spec``'s call and how they were counted (provider, tokenizer or estimate)."""
    route = client.route(spec.model) if client.router.is_cached(spec.model) else None
    if route is None:  # a first use imports the provider's plugin and SDK: not on the event loop
        route = await asyncio.to_thread(client.route, spec.model)
    provider = route.provider
    hooks = provider.hooks
    if hooks.implements("acount_tokens"):
        kwargs: dict[str, Any] = {k: v for k, v in spec.kwargs.items() if k != "output"}
        _, request = client.build_request(spec.model, spec.messages, **kwargs)
        timeout = client.config.timeout
        deadline = None if timeout is None else Deadline.after(timeout, client.clock)

        def expired() -> LLMDeadlineExceededError:
            return LLMDeadlineExceededError(
                f"the provider's token count did not answer within the timeout ({timeout} s, the config's "
                "timeout: raise it if the provider is slow)",
                provider=provider.name,
                model=route.model,
            )

        try:
            counted = await await_before(
                lambda: hooks.acount_tokens(request=request, settings=provider.settings, client=provider.client(True)),
                deadline,
                expired,
            )
        except LLMError:
            raise
        except Exception as exc:  # the SDK's own exception (the hook's contract): classified, its secrets masked
            raise Attempt(route).classify(exc) from None
        if counted is not None:
            tokens, how = counted
            return int(tokens), str(how)
    return max(1, prompt_tokens(spec.messages, spec.kwargs)), "estimate"


def count_tokens_route(pipeline: Pipeline) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint over ``pipeline``: authenticate, read, check the key may use the model, count."""

    async def endpoint(request: Request) -> Response:
        exchange = pipeline.begin("messages.count_tokens", "anthropic")
        body: bytes | None = None
        try:
            caller = await pipeline.authenticate(exchange, request)  # before the body: no key, no read
            body = await pipeline.read_body(request)
            spec = messages_call(parse_body(body, CountTokensRequest))
            exchange.model = spec.model
            if not caller.may_use(spec.model):
                raise GatewayError(403, f"this key may not use model {spec.model!r}", kind="permission")
            try:
                tokens, how = await count_tokens(pipeline.client, spec)
            except LLMError as exc:
                raise upstream_error(exc, "anthropic") from None
            return pipeline.answer(exchange, {"input_tokens": tokens}, None, {"x-llmplex-token-count": how})
        except GatewayError as exc:
            return close_if_unread(pipeline.fail(exchange, exc), body)
        except ConnectionError:
            pipeline.finish(exchange, 499, GatewayError(499, "client disconnected", kind="client_disconnected"), None)
            return Response(status_code=499, headers=pipeline.headers(exchange))
        except ValueError as exc:
            return pipeline.fail(exchange, GatewayError(400, f"invalid request: {exc}"))
        except Exception:
            log.exception("unexpected failure of %s", exchange.request_id)
            return pipeline.fail(exchange, GatewayError(500, "internal gateway error", kind="internal"))

    return endpoint
