"""What core hands to a provider plugin: one fully resolved request."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.types.messages import Message, checked_message
from llmplex.types.tools import Tool
from llmplex.types.trusted import assembled

__all__ = ["LLMConfig", "OutputSchema", "ReasoningEffort", "Request", "ToolChoice"]

ToolChoice = Literal["auto", "none", "required"] | str
ReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]


class LLMConfig(BaseModel):
    """Sampling options; only the fields that are set reach the wire.

    ``reasoning_effort`` (``"minimal"``, ``"low"``, ``"medium"``, ``"high"``,
    ``"xhigh"``, ``"max"``) is how hard a reasoning model thinks, mapped by each
    provider to the nearest level it has (Anthropic's thinking, Gemini's
    thinking config, OpenAI's reasoning effort).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    reasoning_effort: ReasoningEffort | None = None

    def set_options(self) -> dict[str, Any]:
        """The options that were given, by name (``model_dump(exclude_none=True)``: read from the fields themselves,
        which hold no model, on every call's format; a subclass is dumped by pydantic)."""
        if type(self) is not LLMConfig:
            return self.model_dump(exclude_none=True)
        values = self.__dict__
        if values == _NO_OPTIONS:  # most calls: nothing set (one comparison at C speed)
            return {}
        return {name: value for name, value in values.items() if value is not None}


_NO_OPTIONS: dict[str, Any] = dict.fromkeys(LLMConfig.model_fields)
"""An ``LLMConfig``'s fields when none is set."""


class OutputSchema(BaseModel):
    """A JSON Schema the answer must follow (structured output)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    json_schema: dict[str, Any]
    strict: bool = True


class Request(BaseModel):
    """One request as core resolved it: the model name is without its provider prefix.

    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or the name of one tool.
    ``cache`` and ``cache_key`` are read by the response cache, never sent.
    ``prompt_cache="auto"`` lets the provider place its prompt-cache breakpoints
    on the stable prefix (tools, system prompt, the conversation so far).
    """

    model_config = ConfigDict(frozen=True)

    model: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice | None = None
    output: OutputSchema | None = None
    config: LLMConfig = LLMConfig()
    provider_options: dict[str, Any] = Field(default_factory=dict)
    previous_response_id: str | None = None
    stream: bool = False
    cache: bool | None = None
    cache_key: str | None = None
    prompt_cache: Literal["auto"] | None = None


_USER_SET = frozenset({"role", "content"})
_PLAIN: dict[str, Any] = {name: field.default for name, field in Request.model_fields.items()}
_PLAIN_SET = frozenset(_PLAIN) - {"prompt_cache"}


def plain_request(model: str, text: str, stream: bool) -> Request:
    """``Request(model=model, messages=(Message(role="user", content=text),), stream=stream)`` with every other
    field at its default, as ``build_request`` makes it for a prompt without keyword arguments, built without
    pydantic's validation (``text`` is a string the caller checked; ``model`` a routed model name). Equal to the
    validated request in every way (fields, fields set, ``==``, dump)."""
    message = checked_message({"role": "user", "content": text}, _USER_SET)
    request = assembled(
        Request,
        {**_PLAIN, "model": model, "messages": (message,), "provider_options": {}, "stream": stream},
        set(_PLAIN_SET),
    )
    return request
