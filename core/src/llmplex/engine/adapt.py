"""What a provider instance cannot honour, found before anything is sent: refused, or dropped when configured.

Each request is held against the instance's ``Capabilities``: sampling options
(``reasoning_effort`` included), tools, a stored response chain, content
parts, prompt-cache marks. Whatever the instance cannot take is an
``LLMConfigurationError`` naming it and the instance, unless the instance drops
unsupported things (``drop_unsupported = true``, top level or in its
``[providers.NAME]`` table): then it is left out and named in
``Response.dropped``. Reasoning parts made by another provider's format are
always left out (they mean nothing elsewhere), and named the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.provider import Capabilities
from llmplex.types import LLMConfig, Message, Request

__all__ = ["Adapted", "adapt", "plain"]


@dataclass(frozen=True)
class Adapted:
    """The request an instance is sent, and what was left out of it (empty: nothing)."""

    request: Request
    dropped: tuple[str, ...] = ()


@dataclass
class _Findings:
    name: str
    refused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    changes: dict[str, Any] = field(default_factory=dict)

    def refuse(self, why: str, what: str) -> None:
        """Note that the instance cannot honour ``what``, and why (a sentence about ``provider 'NAME'``)."""
        self.refused.append(f"provider {self.name!r} {why}")
        self.dropped.append(what)


def adapt(request: Request, name: str, capabilities: Capabilities, drop_unsupported: bool) -> Adapted:
    """``request`` as provider instance ``name`` can honour it; raises ``LLMConfigurationError`` for what it
    cannot, unless ``drop_unsupported``."""
    found = _Findings(name)
    _options(request, capabilities, found)
    _features(request, capabilities, found)
    messages = _messages(request.messages, capabilities, found)
    if found.refused and not drop_unsupported:
        raise LLMConfigurationError(
            " ".join(found.refused) + f" Nothing was sent. Leave it out, send it to a provider that takes it (see "
            f"llmplex providers), or set drop_unsupported = true (top level, or in [providers.{name}]) to drop it "
            "and have it listed in Response.dropped"
        )
    if messages is not None:
        found.changes["messages"] = messages
    if not found.changes:
        return Adapted(request)
    return Adapted(request.model_copy(update=found.changes), tuple(found.dropped))


def plain(request: Request) -> bool:
    """Whether ``request`` holds nothing ``adapt`` looks at (no options, tools, stored response, prompt-cache
    mark, reasoning or content parts), so that every instance takes it as it is: what most requests are."""
    if (
        request.config is not _NO_OPTIONS
        or request.tools
        or request.previous_response_id is not None
        or request.prompt_cache is not None
    ):
        return False
    for message in request.messages:
        if isinstance(message.content, tuple) or message.reasoning or message.cache:
            return False
    return True


def _options(request: Request, capabilities: Capabilities, found: _Findings) -> None:
    allowed = capabilities.sampling_options
    config = request.config
    if allowed is None or config is _NO_OPTIONS or config == _NO_OPTIONS:
        return
    given = request.config.set_options()
    unsupported = [option for option in given if option not in allowed]
    if not unsupported:
        return
    takes = ", ".join(sorted(allowed)) or "none"
    note = f" {capabilities.options_note}." if capabilities.options_note else ""
    for option in unsupported:
        found.refuse(f"cannot honour option {option!r} (it takes: {takes}).{note}", f"option {option}")
    found.changes["config"] = LLMConfig(**{k: v for k, v in given.items() if k not in unsupported})


_NO_OPTIONS: LLMConfig = Request.model_fields["config"].default
"""The ``Request``'s default options (none), which most requests hold: found by identity before equality."""


def _features(request: Request, capabilities: Capabilities, found: _Findings) -> None:
    if request.tools and not capabilities.tools:
        found.refuse("does not support tools; drop tools=, or use a provider that calls tools.", "tools")
        found.changes.update(tools=(), tool_choice=None)
    if request.previous_response_id is not None and not capabilities.response_chains:
        found.refuse(
            "keeps no stored responses, so previous_response_id cannot continue one; "
            "send the whole conversation instead.",
            "previous_response_id",
        )
        found.changes["previous_response_id"] = None
    if not capabilities.prompt_cache:
        if request.prompt_cache is not None:
            found.changes["prompt_cache"] = None  # "auto" asks for caching where the provider has it
        cached = [f"tools[{i}]" for i, tool in enumerate(request.tools) if tool.cache]
        if cached and "tools" not in found.changes:
            for where in cached:
                found.refuse(f"has no prompt cache to honour cache=True on {where}.", f"cache=True on {where}")
            found.changes["tools"] = tuple(t.model_copy(update={"cache": False}) for t in request.tools)


def _messages(
    messages: tuple[Message, ...], capabilities: Capabilities, found: _Findings
) -> tuple[Message, ...] | None:
    """The messages with what the instance cannot take left out (``None``: nothing to leave out)."""
    changed: list[Message] | None = None
    for index, message in enumerate(messages):
        updated = _message(message, index, capabilities, found)
        if updated is not message:
            if changed is None:
                changed = list(messages)
            changed[index] = updated
    return None if changed is None else tuple(changed)


def _message(message: Message, index: int, capabilities: Capabilities, found: _Findings) -> Message:
    update: dict[str, Any] = {}
    if message.reasoning:
        kept = tuple(part for part in message.reasoning if part.format in capabilities.reasoning_formats)
        if len(kept) != len(message.reasoning):
            formats = sorted({part.format for part in message.reasoning} - capabilities.reasoning_formats)
            found.dropped.append(f"reasoning of messages[{index}] ({', '.join(formats)})")
            update["reasoning"] = kept
    where = f"messages[{index}]"
    if not capabilities.prompt_cache and message.cache:
        found.refuse(f"has no prompt cache to honour cache=True on {where}.", f"cache=True on {where}")
        update["cache"] = False
    if isinstance(message.content, tuple):
        pieces = _pieces(message, where, capabilities, found)
        if pieces is not None:
            update["content"] = pieces
    return message.model_copy(update=update) if update else message


def _pieces(message: Message, where: str, capabilities: Capabilities, found: _Findings) -> tuple[Any, ...] | None:
    assert isinstance(message.content, tuple)
    pieces: list[Any] = []
    changed = False
    for piece in message.content:
        if isinstance(piece, str):
            pieces.append(piece)
            continue
        if piece.kind not in capabilities.input_parts:
            takes = ", ".join(sorted(capabilities.input_parts)) or "text only"
            found.refuse(
                f"cannot take {piece.kind} parts ({where} has {type(piece).__name__}: {piece.describe()}); "
                f"it takes: {takes}.",
                f"{piece.kind} part of {where}",
            )
            changed = True
            continue
        if piece.cache and not capabilities.prompt_cache:
            found.refuse(
                f"has no prompt cache to honour cache=True on a part of {where}.", f"cache=True on a part of {where}"
            )
            pieces.append(piece.model_copy(update={"cache": False}))
            changed = True
            continue
        pieces.append(piece)
    if not changed:
        return None
    if not pieces:
        pieces.append("")  # every part was left out: the turn stays, empty, so the conversation keeps its shape
    return tuple(pieces)
