"""The agent-runtime LLM adapter contract (seed 001) on llmplex: change its imports to this module.

    from llmplex.compat.agent_runtime import GeminiAdapter, LLMMessage, get_tool_declarations

    TOOL_DECLARATIONS.extend(MY_TOOLS)                        # the application's registry
    adapter = GeminiAdapter(api_key=os.environ["GEMINI_API_KEY"])
    tools = adapter.get_tool_declarations(["add_task", "list_tasks"])
    response = await adapter.generate([LLMMessage(role="user", content="Add milk")], tools)
    response.function_calls  # [FunctionCall(name="add_task", arguments={"description": "milk"})]

``adapter_for(model)`` gives the same adapter over any llmplex model string.
Calls go through llmplex's engine (routing, retries, deadline, events); its
errors come out as this contract's classes, the llmplex error as ``__cause__``.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import llmplex
from llmplex.compat._sampling import options_for
from llmplex.errors import LLMError as _CoreError
from llmplex.errors import LLMOutputParseError, LLMRateLimitError
from llmplex.errors import LLMTimeoutError as _CoreTimeoutError
from llmplex.types import Message, Response, ToolCall

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = [
    "TOOL_DECLARATIONS",
    "FunctionCall",
    "FunctionResponse",
    "GeminiAdapter",
    "InvalidResponseError",
    "LLMAdapter",
    "LLMConfig",
    "LLMError",
    "LLMMessage",
    "LLMPlexAdapter",
    "LLMResponse",
    "LLMTimeoutError",
    "RateLimitError",
    "TimeoutError",
    "TokenUsage",
    "ToolDeclaration",
    "ToolNotFoundError",
    "adapter_for",
    "get_tool_declarations",
]

DEFAULT_MODEL = "gemini-2.0-flash"
FinishReason = Literal["stop", "tool_calls", "max_tokens", "error"]
_FINISH: Mapping[str, FinishReason] = {"stop": "stop", "tool_calls": "tool_calls", "length": "max_tokens"}

TOOL_DECLARATIONS: list[dict[str, Any]] = []
"""The application's tool registry (the contract's ``TOOL_DECLARATIONS``): fill it with
``{"name", "description", "parameters"}`` dicts; ``get_tool_declarations`` answers from it."""


# -- messages and answers ------------------------------------------------------------------------


@dataclass
class FunctionCall:
    """A tool the model asked to run, with its parsed arguments."""

    name: str
    arguments: dict[str, Any]


@dataclass
class FunctionResponse:
    """A tool's result, sent back to the model in a ``"function"`` message."""

    name: str
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class TokenUsage:
    """Tokens one answer consumed."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass
class LLMMessage:
    """One turn: ``user`` text, ``assistant`` text and/or a function call, or a ``function`` result."""

    role: Literal["user", "assistant", "function"]
    content: str | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None


@dataclass
class LLMResponse:
    """An answer: text and/or function calls; ``finish_reason`` is stop, tool_calls, max_tokens or error."""

    content: str | None
    function_calls: list[FunctionCall] | None
    finish_reason: Literal["stop", "tool_calls", "max_tokens", "error"]
    usage: TokenUsage | None = None
    error: str | None = None


@dataclass
class ToolDeclaration:
    """A tool the model may call: name, description and JSON-Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class LLMConfig:
    """The contract's configuration; ``from_env`` reads ``GEMINI_API_KEY`` and ``GEMINI_MODEL``."""

    api_key: str
    model: str = DEFAULT_MODEL
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_seconds: int = 30
    max_retries: int = 1

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """``api_key`` from ``GEMINI_API_KEY`` (required), ``model`` from ``GEMINI_MODEL`` when set."""
        key = os.environ.get("GEMINI_API_KEY")
        if not key:
            raise LLMError("GEMINI_API_KEY is not set: export it, or build LLMConfig(api_key=...)", "configuration")
        model = os.environ.get("GEMINI_MODEL") or DEFAULT_MODEL
        return cls(**{"api_key": key, "model": model, **overrides})


# -- errors ----------------------------------------------------------------------------------------


@dataclass(eq=False)
class LLMError(Exception):
    """Any failure: ``message``, a short ``code`` and, for rate limits, ``retry_after`` in whole seconds."""

    message: str
    code: str
    retry_after: int | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


@dataclass(eq=False)
class RateLimitError(LLMError):
    """The provider rate-limited the request (retries included); ``retry_after`` is its wait, rounded up."""

    message: str = "Rate limit exceeded"  # the runtime's errors module raises RateLimitError() bare
    code: str = "rate_limited"


@dataclass(eq=False)
class TimeoutError(LLMError, builtins.TimeoutError):  # the contract names it so
    """The request timed out (also a built-in ``TimeoutError``; the runtime's errors module calls it
    ``LLMTimeoutError``)."""

    message: str = "Request timed out"
    code: str = "timeout"


@dataclass(eq=False)
class InvalidResponseError(LLMError):
    """The model's output could not be read (e.g. function-call arguments that are not a JSON object)."""

    message: str = "Invalid LLM response"
    code: str = "invalid_response"


@dataclass(eq=False)
class ToolNotFoundError(LLMError):
    """A tool name the registry does not know; ``tool_name`` is that name.

    ``ToolNotFoundError("delete_database")`` (the runtime's own way) names the tool: ``tool_name`` is the
    message when not given.
    """

    code: str = "tool_not_found"
    tool_name: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tool_name is None:
            self.tool_name = self.message


LLMTimeoutError = TimeoutError
"""The runtime's errors module's name for ``TimeoutError``."""


def _seed_error(error: _CoreError) -> LLMError:
    kind = type(error).__name__.removeprefix("LLM").removesuffix("Error")
    code = re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower() or "llm_error"
    if isinstance(error, LLMRateLimitError):
        wait = error.retry_after
        return RateLimitError(f"rate limited: {error}", code, math.ceil(wait) if wait is not None else None)
    if isinstance(error, _CoreTimeoutError):
        return TimeoutError(str(error), code)
    if isinstance(error, LLMOutputParseError):
        return InvalidResponseError(str(error), code)
    return LLMError(str(error), code)


# -- tools -----------------------------------------------------------------------------------------


def get_tool_declarations(
    tools: Sequence[str], registry: Sequence[Mapping[str, Any]] | None = None
) -> list[ToolDeclaration]:
    """The declarations of the named tools, in the order asked, from ``registry`` (default:
    ``TOOL_DECLARATIONS``); an unknown name raises ``ToolNotFoundError``."""
    known = {str(entry.get("name")): entry for entry in (TOOL_DECLARATIONS if registry is None else registry)}
    declared = []
    for name in tools:
        entry = known.get(name)
        if entry is None:
            raise ToolNotFoundError(f"no tool named {name!r} in the registry (known: {sorted(known)})", tool_name=name)
        declared.append(
            ToolDeclaration(
                name=name,
                description=str(entry.get("description", "")),
                parameters=dict(entry.get("parameters") or {"type": "object", "properties": {}}),
            )
        )
    return declared


# -- the adapter -----------------------------------------------------------------------------------


@runtime_checkable
class LLMAdapter(Protocol):
    """The contract every adapter meets (``isinstance`` checks its two methods)."""

    async def generate(
        self,
        messages: list[LLMMessage],
        tools: list[ToolDeclaration],
        temperature: float = 0.0,
        max_tokens: int = 1024,
    ) -> LLMResponse:
        """Answer ``messages``, possibly with calls to ``tools``."""
        ...

    def get_tool_declarations(self, tools: list[str]) -> list[ToolDeclaration]:
        """The declarations of the named tools."""
        ...


def _core_messages(messages: Sequence[LLMMessage]) -> list[Message]:
    """The contract's messages as llmplex's: function calls get ids, and each result answers the last open call."""
    converted: list[Message] = []
    open_calls: dict[str, list[str]] = {}
    for index, message in enumerate(messages):
        if message.role == "function":
            result = message.function_response
            if result is None:
                raise LLMError(f"messages[{index}] has role 'function' but no function_response", "invalid_request")
            pending = open_calls.get(result.name) or [f"call_{index}_{result.name}"]
            call_id = pending.pop(0)
            converted.append(Message.tool(call_id, _json(result.response), name=result.name))
        elif message.function_call is not None:
            call = message.function_call
            call_id = f"call_{index}_{call.name}"
            open_calls.setdefault(call.name, []).append(call_id)
            calls = (ToolCall(id=call_id, name=call.name, arguments=_json(call.arguments)),)
            converted.append(Message.assistant(message.content, calls))
        else:
            converted.append(Message(role=message.role, content=message.content or ""))
    return converted


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _seed_response(response: Response) -> LLMResponse:
    calls: list[FunctionCall] = []
    for call in response.tool_calls:
        try:
            arguments = call.parsed_arguments()
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            raise InvalidResponseError(
                f"the model called {call.name!r} with arguments that are not a JSON object: {call.arguments!r:.200}",
                "invalid_response",
            )
        calls.append(FunctionCall(name=call.name, arguments=arguments))
    finish: FinishReason = "tool_calls" if calls else _FINISH.get(response.finish_reason, "error")
    usage = response.usage
    return LLMResponse(
        content=response.text or None,
        function_calls=calls or None,
        finish_reason=finish,
        usage=TokenUsage(usage.input_tokens, usage.output_tokens, usage.total_tokens),
        error=None if finish != "error" else f"the answer ended with finish reason {response.finish_reason!r}",
    )


class LLMPlexAdapter:
    """The contract over any llmplex model string (``"openai:gpt-4o-mini"``, ``"gemini:"``, a config instance).

    ``timeout_seconds`` bounds each ``generate`` (retries included) and
    ``max_retries`` is how many times a transient failure is retried; both
    default to ``LLMConfig``'s. ``registry`` replaces ``TOOL_DECLARATIONS``.
    """

    def __init__(
        self,
        model: str,
        *,
        timeout_seconds: float = 30,
        max_retries: int = 1,
        registry: Sequence[Mapping[str, Any]] | None = None,
        client: Client | None = None,
    ) -> None:
        self.client = client if client is not None else llmplex.default_client()
        self.model = model
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self.registry = registry
        try:
            self.route = self.client.route(model)
        except _CoreError as error:
            raise _seed_error(error) from error

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"

    async def generate(
        self,
        messages: list[LLMMessage],
        tools: list[ToolDeclaration],
        temperature: float = 0.0,
        max_tokens: int = 1024,
    ) -> LLMResponse:
        """Send the conversation with the tools declared; the model's calls come back, none is run."""
        declared = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
        try:
            response = await self.client.acomplete(
                self.model,
                _core_messages(messages),
                tools=declared or None,
                timeout=self.timeout_seconds,
                throttle={"max_attempts": self.max_retries + 1},
                **options_for(self.route, {"temperature": temperature, "max_tokens": max_tokens}),
            )
        except _CoreError as error:
            raise _seed_error(error) from error
        return _seed_response(response)

    def get_tool_declarations(self, tools: list[str]) -> list[ToolDeclaration]:
        """The named tools from this adapter's registry (default ``TOOL_DECLARATIONS``)."""
        return get_tool_declarations(tools, self.registry)


class GeminiAdapter(LLMPlexAdapter):
    """Gemini with this ``api_key`` and ``model`` (llmplex's ``gemini`` provider)."""

    def __init__(self, api_key: str, model: str = DEFAULT_MODEL, **options: Any) -> None:
        from llmplex.client import Client

        if not isinstance(api_key, str) or not api_key:
            raise LLMError("GeminiAdapter needs an api_key (GEMINI_API_KEY)", "configuration")
        super().__init__(f"gemini:{model}", client=Client(providers={"gemini": {"api_key": api_key}}), **options)

    @classmethod
    def from_config(cls, config: LLMConfig, **options: Any) -> GeminiAdapter:
        """The adapter an ``LLMConfig`` describes (its timeout and retries included)."""
        return cls(
            config.api_key,
            config.model,
            timeout_seconds=config.timeout_seconds,
            max_retries=config.max_retries,
            **options,
        )


def adapter_for(model: str, **options: Any) -> LLMPlexAdapter:
    """An adapter over any llmplex model string, with the default client's config (instances, aliases)."""
    return LLMPlexAdapter(model, **options)
