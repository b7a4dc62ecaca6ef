"""Conversation messages and the tool calls an assistant message may carry."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from llmplex.errors import LLMConfigurationError
from llmplex.types.parts import Audio, ContentPart, Document, Image, MediaPart
from llmplex.types.reasoning import ReasoningPart
from llmplex.types.refusals import Refusing
from llmplex.types.trusted import assembled

__all__ = ["JSONNestingError", "Message", "Role", "ToolCall", "decode_json"]

Role = Literal["system", "user", "assistant", "tool"]


class JSONNestingError(ValueError):
    """JSON nested too deeply for Python to read."""


def decode_json(text: str) -> Any:
    """``json.loads(text)``; JSON nested too deeply to read raises ``JSONNestingError``, a ``ValueError``
    like any other unreadable JSON, instead of ``RecursionError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONNestingError("the JSON is nested too deeply to read (more than about 1000 levels)") from None


class ToolCall(Refusing):
    """A request from the model to run one tool with JSON arguments.

    A wrong or unknown argument is an ``LLMConfigurationError`` naming it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    arguments: str = Field(default="{}", description="The arguments as the model sent them: a JSON text.")

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON (raises ``ValueError`` when they are not JSON or nest too deeply)."""
        return decode_json(self.arguments or "{}")

    def arguments_object(self, index: int) -> dict[str, Any]:
        """The arguments as a JSON object, for provider wires that carry them as one; an
        ``LLMConfigurationError`` naming ``messages[index]`` when they are not JSON or not an object."""
        try:
            value = self.parsed_arguments()
        except ValueError as exc:
            raise LLMConfigurationError(f"messages[{index}] has tool call arguments that are not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise LLMConfigurationError(f"messages[{index}] has tool call arguments that are not a JSON object")
        return value


_PART_TYPES: dict[str, type[MediaPart]] = {"image": Image, "document": Document, "audio": Audio}


def _piece(item: Any, index: int) -> Any:
    if isinstance(item, (str, MediaPart)):
        return item
    kind = item.get("type") if isinstance(item, dict) else None
    if kind not in _PART_TYPES:
        got = f"a dict of type {kind!r}" if isinstance(item, dict) else type(item).__name__
        raise LLMConfigurationError(
            f"Message: content[{index}]: Input should be text, or an Image, Document or Audio part (or a dict "
            f"whose type is image, document or audio) (got {got})"
        )
    try:
        return _PART_TYPES[kind].model_validate(item)
    except LLMConfigurationError as exc:
        raise LLMConfigurationError(f"Message: content[{index}]: {exc.message}") from None


class Message(Refusing):
    """One turn of a conversation.

    ``content`` is text, or — on a user message — a sequence mixing text with
    ``Image``, ``Document``
    and ``Audio`` parts, sent in that order.

    ``reasoning`` (assistant messages only) is the opaque reasoning state the
    answer came with, replayed to the provider that made it. ``cache=True``
    asks providers with explicit prompt caching (Anthropic) to cache the
    conversation up to the end of this message. A wrong or unknown argument,
    here or in the constructors below, is an ``LLMConfigurationError`` naming it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str | tuple[ContentPart, ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = Field(default=None, description="On a tool message: the call it answers.")
    name: str | None = Field(default=None, description="On a tool message: the tool's name.")
    reasoning: tuple[ReasoningPart, ...] = Field(default=(), repr=False)
    cache: bool = False

    @field_validator("content", mode="before")
    @classmethod
    def _content_shape(cls, value: Any) -> Any:
        """Text, or a list whose items are text, parts, or parts as data (``{"type": "image", ...}``)."""
        if value is None or isinstance(value, str):
            return value
        if not isinstance(value, (list, tuple)):
            raise LLMConfigurationError(
                "Message: content: Input should be text, or a list of text and Image, Document or Audio parts "
                f"(got {type(value).__name__})"
            )
        return tuple(_piece(item, index) for index, item in enumerate(value))

    @model_validator(mode="after")
    def _parts_only_from_users(self) -> Message:
        if isinstance(self.content, tuple) and self.role != "user":
            raise LLMConfigurationError(
                f"a {self.role} message's content must be text; only user messages take a list of text, "
                "images, documents and audio"
            )
        if self.reasoning and self.role != "assistant":
            raise LLMConfigurationError(
                f"a {self.role} message cannot carry reasoning parts; only assistant messages (answers) do"
            )
        return self

    @property
    def text(self) -> str:
        """The message's text: ``content`` itself, or the text pieces of a list joined by blank lines."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return "\n\n".join(piece for piece in self.content if isinstance(piece, str))

    @property
    def pieces(self) -> tuple[ContentPart, ...]:
        """``content`` as a sequence, in order: text pieces and parts (empty when there is no content)."""
        if self.content is None:
            return ()
        return (self.content,) if isinstance(self.content, str) else self.content

    @property
    def parts(self) -> tuple[Image | Document | Audio, ...]:
        """The images, documents and audio clips the message carries."""
        return tuple(piece for piece in self.pieces if not isinstance(piece, str))

    @classmethod
    def system(cls, content: str, *, cache: bool = False) -> Message:
        """A system prompt; ``cache=True`` marks it for the provider's prompt cache."""
        return cls(role="system", content=content, cache=cache)

    @classmethod
    def user(cls, content: str | Sequence[ContentPart], *, cache: bool = False) -> Message:
        """A user turn: text, or a list mixing text with images, documents and audio."""
        return cls(role="user", content=tuple(content) if isinstance(content, list) else content, cache=cache)

    @classmethod
    def assistant(
        cls,
        content: str | None = None,
        tool_calls: tuple[ToolCall, ...] = (),
        reasoning: tuple[ReasoningPart, ...] = (),
    ) -> Message:
        """An assistant turn, with optional tool calls and the reasoning state it came with."""
        return cls(role="assistant", content=content, tool_calls=tool_calls, reasoning=reasoning)

    @classmethod
    def tool(cls, tool_call_id: str, content: str, name: str | None = None) -> Message:
        """The result of a tool call, sent back to the model."""
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)


_DEFAULTS: dict[str, Any] = {name: spec.default for name, spec in Message.model_fields.items()}


def checked_message(values: dict[str, Any], fields_set: frozenset[str]) -> Message:
    """``Message(**values)`` with ``fields_set`` as its fields set, built without pydantic's validation: for
    values the caller already checked (a text turn's role and string). Equal to the validated message in every
    way (fields, fields set, ``==``, dump) when ``fields_set`` is what the validated one would hold."""
    return assembled(Message, {**_DEFAULTS, **values}, set(fields_set))
