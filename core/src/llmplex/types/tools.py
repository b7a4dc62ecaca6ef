"""Tool declarations the model may call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Tool"]


class Tool(BaseModel):
    """A function the model may call: a name, a description and JSON-Schema parameters.

    ``handler`` is the Python callable core runs when the model asks for the tool;
    tools without a handler are only declared, and their calls are returned to you.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    handler: Callable[..., Any] | None = Field(default=None, exclude=True, repr=False)

    @model_validator(mode="after")
    def _refs_resolve(self) -> Tool:
        """Refuse a ``$ref`` to nothing now, not when the model first calls the tool."""
        from llmplex.structured.schema import dangling_ref  # imported late: it sits above this layer

        problem = dangling_ref(self.parameters)
        if problem:
            from llmplex.errors import LLMConfigurationError

            raise LLMConfigurationError(f"tool {self.name!r} parameters are not usable: {problem}")
        return self

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> Tool:
        """A tool that runs ``fn``: JSON Schema from its signature, descriptions from its docstring.

        See :func:`llmplex.tooling.function_tool.tool_from_function`.
        """
        from llmplex.tooling.function_tool import tool_from_function

        return tool_from_function(fn, name=name, description=description)
