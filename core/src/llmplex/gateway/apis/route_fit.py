"""A call fitted to the provider it is routed to, before admission: hints that provider cannot use are left out
and named; what would change the answer and cannot be carried is refused, unless that provider drops unsupported
things; system messages in the middle of a conversation are folded into the next user turn where the provider
has no such turn.

Only the first route is fitted (a fallback to another provider is held to core's own rules).
"""

from __future__ import annotations

import asyncio
from typing import Any

from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.gateway.calls import CallSpec
from llmplex.gateway.errors import GatewayError
from llmplex.provider import Capabilities
from llmplex.types import Message

__all__ = ["FOLDING_PROVIDERS", "OPENAI_PLUGINS", "afit", "fit", "fold_system"]

OPENAI_PLUGINS = frozenset({"openai", "azure"})
"""Providers speaking OpenAI's own APIs: ``store``, ``include``, ``prompt_cache_key`` go to them as sent."""

_CARRIED_INCLUDES = frozenset({"reasoning.encrypted_content"})
"""``include`` values every provider honours: the gateway itself carries any provider's reasoning in
``encrypted_content``."""

FOLDING_PROVIDERS = frozenset({"anthropic", "gemini", "vertex", "bedrock", "claude-code"})
"""Providers whose wire has one system prompt, at the top: a later system turn is folded into the next user turn.
Every other provider speaks a wire (Chat Completions, Responses) that takes a system turn anywhere."""

_MARK = "<system>\n{}\n</system>"
"""How a folded system message is marked in the user turn that carries it."""


async def afit(spec: CallSpec, client: Client, drop_hints: bool) -> CallSpec:
    """``fit`` from the event loop: in a worker thread when the model was never routed (routing it the first
    time imports its provider plugin and SDK, seconds that would stall every other request)."""
    if client.router.is_cached(spec.model):
        return fit(spec, client, drop_hints)
    return await asyncio.to_thread(fit, spec, client, drop_hints)


def fit(spec: CallSpec, client: Client, drop_hints: bool) -> CallSpec:
    """``spec`` as the provider of its model can take it (``spec`` itself, changed in place).

    Raises a 400 naming what cannot be carried (``spec.unsupported``, and the hints too when not
    ``drop_hints``) unless the provider drops unsupported things. A model that does not route is left to
    core, which refuses it with its own message.
    """
    try:
        route = client.route(spec.model)
    except LLMError:
        return spec
    provider = route.provider
    capabilities = provider.capabilities_for(route.model)
    if drop_hints:
        _strip_hints(spec, capabilities)
    else:
        spec.unsupported[:0] = spec.dropped
        spec.dropped = []
    if spec.unsupported:
        if not client.config.drops_unsupported(provider.name):
            raise GatewayError(
                400,
                f"provider {provider.name!r} cannot honour {', '.join(spec.unsupported)}; nothing was sent. "
                f"Leave it out, or set drop_unsupported = true (top level, or in [providers.{provider.name}]) "
                "to drop it and have it named in x-llmplex-dropped",
                kind="invalid_request",
            )
        spec.dropped += spec.unsupported
        spec.unsupported = []
    openai = provider.info.name in OPENAI_PLUGINS
    # the API is read only where it matters: another plugin's settings have no ``api`` (an AttributeError, 1.7 us)
    _openai_family(spec, openai, getattr(provider.settings, "api", "chat") if openai else "chat")
    if provider.info.name in FOLDING_PROVIDERS:
        spec.messages = fold_system(spec.messages)
    return spec


def _openai_family(spec: CallSpec, openai: bool, api: str) -> None:
    """OpenAI's own options and the privacy fields: carried to OpenAI's APIs (the built-in tools to its Responses
    API only). Elsewhere the hints and built-in tools are named as dropped, ``store: false`` and the reasoning
    include are honoured (nothing is kept; reasoning travels in ``encrypted_content``) and any other privacy ask
    is refused."""
    responses = openai and api == "responses"
    if not responses:
        spec.dropped += [
            f"{where} ({tool['type']}: run only by OpenAI's Responses API)" for where, tool in spec.builtin_tools
        ]
    if openai:
        options = {**spec.openai_options, **spec.privacy}
        if not responses:
            options.pop("include", None)  # Chat Completions returns no reasoning: nothing to include
        elif spec.builtin_tools:
            options["tools"] = [tool for _, tool in spec.builtin_tools]  # added to the function tools
        if options:
            spec.kwargs["provider_options"] = {**spec.kwargs.get("provider_options", {}), **options}
        return
    spec.dropped += [f"{name} (OpenAI's own)" for name in spec.openai_options]
    if spec.privacy.get("store"):
        raise GatewayError(
            400,
            f"store: true asks the provider to keep this conversation, and model {spec.model!r} is not served by "
            "OpenAI's API, which alone keeps them; send store: false or leave store out",
            param="store",
        )
    others = [value for value in spec.privacy.get("include") or () if value not in _CARRIED_INCLUDES]
    if others:
        raise GatewayError(
            400,
            f"include {', '.join(map(str, others))} cannot be honoured for model {spec.model!r} (only "
            "reasoning.encrypted_content is carried on every provider); leave it out",
            param="include",
        )


def _strip_hints(spec: CallSpec, capabilities: Capabilities) -> None:
    """Cache marks on a provider without a prompt cache, an effort on one without reasoning: left out, named."""
    options = capabilities.sampling_options
    if options is not None and "reasoning_effort" not in options and "reasoning_effort" in spec.kwargs:
        spec.kwargs.pop("reasoning_effort")
        spec.dropped.append("reasoning effort (the model has none)")
    if capabilities.prompt_cache:
        return
    marks = 0
    tools = spec.kwargs.get("tools")
    if tools:
        marks += sum(1 for tool in tools if tool.get("cache"))
        spec.kwargs["tools"] = [{**tool, "cache": False} for tool in tools]
    unmarked: list[Message] = []
    for message in spec.messages:
        count, plain = _unmarked(message)
        marks += count
        unmarked.append(plain)
    spec.messages = unmarked
    if marks:
        spec.dropped.append(f"prompt-cache marks ({marks}, the provider has no prompt cache)")


def _unmarked(message: Message) -> tuple[int, Message]:
    count = int(message.cache)
    update: dict[str, Any] = {"cache": False} if message.cache else {}
    if isinstance(message.content, tuple):
        marked = [piece for piece in message.content if not isinstance(piece, str) and piece.cache]
        if marked:
            count += len(marked)
            update["content"] = tuple(
                piece if isinstance(piece, str) or not piece.cache else piece.model_copy(update={"cache": False})
                for piece in message.content
            )
    return count, message.model_copy(update=update) if update else message


def fold_system(messages: list[Message]) -> list[Message]:
    """System messages after the conversation began, folded into the next user turn (a new one at the end
    when none follows), each marked ``<system>...</system>``; the leading ones stay the system prompt."""
    out: list[Message] = []
    pending: list[str] = []
    begun = False
    for message in messages:
        if message.role == "system" and begun:
            pending.append(_MARK.format(message.text))
            continue
        if message.role != "system":
            begun = True
        if pending and message.role == "user":
            out.append(message.model_copy(update={"content": (*pending, *message.pieces)}))
            pending = []
            continue
        out.append(message)
    if pending:
        out.append(Message(role="user", content=tuple(pending)))
    return out
