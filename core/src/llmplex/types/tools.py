"""Tool declarations the model may call."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from llmplex.errors import LLMConfigurationError
from llmplex.types.function_tool import describe_function
from llmplex.types.schema_refs import dangling_ref

__all__ = ["TOOL_NAME_RULE", "Tool"]

TOOL_NAME_RULE = "1 to 64 characters, each a letter, a digit, '_' or '-' (no spaces or dots), such as 'get_weather'"
_TOOL_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")


class Tool(BaseModel):
    """A function the model may call: a name, a description and JSON-Schema parameters.

    ``name`` is 1 to 64 letters, digits, ``_`` or ``-`` (what every provider
    accepts); another name raises ``LLMConfigurationError``.
    ``handler`` is the Python callable core runs when the model asks for the tool;
    tools without a handler are only declared, and their calls are returned to you.
    ``cache=True`` asks providers with explicit prompt caching to cache the tool
    declarations up to this one.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    handler: Callable[..., Any] | None = Field(default=None, exclude=True, repr=False)
    cache: bool = False

    @field_validator("name", mode="before")
    @classmethod
    def _valid_name(cls, name: Any) -> Any:
        """Refuse a name providers would reject, saying what a valid one is (not a pydantic ValidationError)."""
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            raise LLMConfigurationError(f"tool name {name!r} is invalid: a tool name is {TOOL_NAME_RULE}")
        return name

    @model_validator(mode="after")
    def _refs_resolve(self) -> Tool:
        """Refuse a ``$ref`` to nothing now, not when the model first calls the tool."""
        problem = dangling_ref(self.parameters)
        if problem:
            raise LLMConfigurationError(f"tool {self.name!r} parameters are not usable: {problem}")
        return self

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> Tool:
        """A tool that runs ``fn``: JSON Schema from its signature, descriptions from its docstring.

        Google-style ``Args:`` sections and Sphinx ``:param x:`` lines describe the
        parameters; the text before them describes the tool. A parameter annotated
        ``ToolContext`` receives the loop's context and is not shown to
        the model. ``name`` defaults to the function's name (pass ``name=`` for a lambda).
        """
        parts = describe_function(fn, name=name, description=description)
        if name is None and not _TOOL_NAME.fullmatch(parts.name):
            raise LLMConfigurationError(
                f"tool name {parts.name!r} is invalid: a tool name is {TOOL_NAME_RULE}; "
                "pass name=... to Tool.from_function"
            )
        return cls(name=parts.name, description=parts.description, parameters=parts.parameters, handler=parts.handler)
