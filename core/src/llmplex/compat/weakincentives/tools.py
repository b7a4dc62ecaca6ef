"""weakincentives' ``Tool`` and ``ToolResult``, run by llmplex's tool loop (see ``tool_run`` for the running).

Each tool becomes an llmplex ``Tool`` whose JSON Schema is
its params dataclass's; llmplex validates the model's arguments, and the
handler gets the params dataclass and a ``ToolContext``. A handler that raises
or returns ``success=False`` tells the model so and the evaluation goes on;
every call publishes ``ToolInvoked`` on the session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, get_type_hints

import pydantic_core
from pydantic import PydanticUserError, TypeAdapter, ValidationError

from llmplex.compat.weakincentives.errors import PromptValidationError
from llmplex.types import Tool as EngineTool

__all__ = ["Tool", "ToolResult", "render_tool_payload"]

ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")


@dataclass
class ToolResult(Generic[ResultT]):
    """What a handler returns: a message for the model, a typed value, and whether it succeeded."""

    message: str
    value: ResultT | None
    success: bool = True
    exclude_value_from_context: bool = False

    @classmethod
    def ok(cls, value: ResultT, message: str = "OK") -> ToolResult[ResultT]:
        """A successful result carrying ``value``."""
        return cls(message=message, value=value, success=True)

    @classmethod
    def error(cls, message: str) -> ToolResult[Any]:
        """A failed result with no value."""
        return cls(message=message, value=None, success=False)

    def render(self) -> str:
        """The value as text (its ``render()`` if it has one, else JSON)."""
        return render_tool_payload(self.value)

    def tool_message(self) -> str:
        """What the model is sent back: the message, then the rendered value."""
        rendered = "" if self.exclude_value_from_context else self.render()
        if rendered and self.message:
            return f"{self.message}\n\n{rendered}"
        return rendered or self.message


def render_tool_payload(value: object) -> str:
    """A tool value as text: ``""`` for ``None``, a dataclass's ``render()`` or JSON, strings as they are."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    render = getattr(value, "render", None)
    if dataclasses.is_dataclass(value) and callable(render):
        return str(render())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {k: v for k, v in dataclasses.asdict(value).items() if v is not None}
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return pydantic_core.to_json(value, fallback=str).decode()


class Tool(Generic[ParamsT, ResultT]):
    """A function the model may call: ``Tool[Params, Result](name=, description=, handler=)``.

    ``handler(params, *, context)`` receives the params dataclass (``None`` for
    ``Tool[None, Result]``) and returns a ``ToolResult``.
    """

    _params_spec: ClassVar[Any] = dataclasses.MISSING

    def __class_getitem__(cls, item: Any) -> Any:
        params = item[0] if isinstance(item, tuple) else item
        if isinstance(params, TypeVar):
            return cls  # a generic subclass being declared
        return type(cls.__name__, (cls,), {"_params_spec": params, "__module__": cls.__module__})

    def __init__(
        self,
        name: str,
        description: str,
        handler: Callable[..., ToolResult[Any]] | None,
        examples: Sequence[Any] = (),
        accepts_overrides: bool = True,
    ) -> None:
        if not isinstance(description, str) or not description.strip():
            raise PromptValidationError(f"tool {name!r} needs a non-empty description")
        self.name = name
        self.description = description
        self.handler = handler
        self.examples = tuple(examples)
        self.accepts_overrides = accepts_overrides
        self.params_type: type[Any] | None = self._resolve_params(handler)
        try:
            self._adapter: TypeAdapter[Any] | None = None if self.params_type is None else TypeAdapter(self.params_type)
            self.parameters = self._schema()
        except PydanticUserError as exc:
            raise PromptValidationError(f"tool {name!r} params have no JSON Schema: {exc}") from None

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"

    def _resolve_params(self, handler: Callable[..., Any] | None) -> type[Any] | None:
        spec = self._params_spec
        if spec is dataclasses.MISSING and handler is not None:
            try:
                hints = get_type_hints(handler)
            except (NameError, TypeError) as exc:
                raise PromptValidationError(
                    f"tool {self.name!r}: cannot read the handler's params type ({exc}); "
                    "write Tool[Params, Result](...)"
                ) from None
            spec = next((hint for key, hint in hints.items() if key not in ("return", "context")), None)
        if spec is None or spec is type(None) or spec is dataclasses.MISSING:
            return None
        if not (isinstance(spec, type) and dataclasses.is_dataclass(spec)):
            raise PromptValidationError(f"tool {self.name!r} params must be a dataclass type or None, got {spec!r}")
        return spec

    def _schema(self) -> dict[str, Any]:
        if self._adapter is None:
            return {"type": "object", "properties": {}, "additionalProperties": False}
        schema = self._adapter.json_schema()
        schema.pop("title", None)
        return schema

    def engine_tool(self, invoke: Callable[[Tool[Any, Any], Mapping[str, Any]], str]) -> EngineTool:
        """This tool for llmplex's tool loop; ``invoke(tool, arguments)`` runs it and returns the tool message."""
        try:
            return EngineTool(
                name=self.name,
                description=self.description,
                parameters=self.parameters,
                handler=_Handler(self, invoke),
            )
        except ValidationError:
            raise PromptValidationError(
                f"tool name {self.name!r} is invalid: use 1-64 letters, digits, '_' or '-'"
            ) from None

    def parse_params(self, arguments: Mapping[str, Any]) -> Any:
        """The params dataclass for the model's (already schema-checked) ``arguments``."""
        return None if self._adapter is None else self._adapter.validate_python(dict(arguments))


class _Handler:
    """The callable llmplex runs for a tool call: keyword arguments in, tool message out."""

    def __init__(self, tool: Tool[Any, Any], invoke: Callable[[Tool[Any, Any], Mapping[str, Any]], str]) -> None:
        self.tool = tool
        self.invoke = invoke

    def __call__(self, **arguments: Any) -> str:
        return self.invoke(self.tool, arguments)
