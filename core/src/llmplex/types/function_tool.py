"""What ``Tool.from_function`` reads from a typed Python function: name, description, JSON Schema, handler."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, NamedTuple, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from llmplex.errors import LLMConfigurationError
from llmplex.types.tool_context import ToolContext

__all__ = ["FunctionHandler", "FunctionTool", "context_parameter", "describe_function"]

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


class FunctionHandler:
    """A tool handler built from a function: validates arguments with the function's own types."""

    def __init__(self, fn: Callable[..., Any], arguments: type[BaseModel], context_param: str | None) -> None:
        self.fn = fn
        self.arguments = arguments
        self.context_param = context_param
        self.is_async = inspect.iscoroutinefunction(fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionHandler({getattr(self.fn, '__qualname__', self.fn)!r})"

    def keyword_arguments(self, data: Any) -> dict[str, Any]:
        """The validated keyword arguments for ``data`` (raises pydantic's ValidationError)."""
        model = self.arguments.model_validate(data)
        return {name: getattr(model, name) for name in type(model).model_fields}


def context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s parameter annotated ``ToolContext``, if it has one."""
    for name, hint in _hints(fn).items():
        if isinstance(hint, type) and issubclass(hint, ToolContext):
            return name
    return None


class FunctionTool(NamedTuple):
    """The parts of a tool read from a function; ``Tool.from_function`` builds the Tool from them."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: FunctionHandler


def describe_function(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionTool:
    """A tool's parts from ``fn``: parameters from its signature, descriptions from its docstring.

    Google-style ``Args:`` sections and Sphinx ``:param x:`` lines describe the
    parameters; the text before them describes the tool. A parameter annotated
    ``ToolContext`` receives the loop's context and is not shown to the model.
    """
    if not callable(fn):
        raise LLMConfigurationError(f"Tool.from_function needs a function, got {fn!r}")
    tool_name = name or str(getattr(fn, "__name__", ""))
    summary, param_docs = _parse_docstring(inspect.getdoc(fn) or "")
    hints = _hints(fn)
    context_param = context_parameter(fn)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.name == context_param:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise LLMConfigurationError(
                f"tool function {tool_name!r} takes *{param.name}: declare every argument by name so it has a schema"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise LLMConfigurationError(
                f"tool function {tool_name!r} has positional-only parameter {param.name!r}; tools are called by keyword"
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), Field(default, description=param_docs.get(param.name)))
    try:
        arguments = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        schema = arguments.model_json_schema()
    except KeyError as exc:  # pydantic's own $defs lookup: a json_schema_extra $ref to a model it never saw
        raise LLMConfigurationError(
            f"tool function {tool_name!r} has a parameter type whose JSON Schema has a $ref to nothing ({exc}); "
            "define the referenced model or remove the reference"
        ) from None
    except (TypeError, ValueError, ValidationError) as exc:
        raise LLMConfigurationError(
            f"tool function {tool_name!r} has a parameter type without JSON Schema: {exc}"
        ) from exc
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return FunctionTool(tool_name, description or summary, schema, FunctionHandler(fn, arguments, context_param))


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return get_type_hints(target)
    except (NameError, TypeError) as exc:
        raise LLMConfigurationError(f"cannot read the type hints of tool function {fn!r}: {exc}") from exc


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and each parameter's description."""
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in doc.splitlines():
        indent = len(line) - len(line.lstrip())
        sphinx = _SPHINX_PARAM.match(line)
        header = _SECTION.match(line)
        arg = _ARG_LINE.match(line)
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
        elif header:
            section, current, arg_indent = header.group(1).lower(), None, None
        elif line.lstrip().startswith(":"):
            section, current = "sphinx", None
        elif section is None:
            summary.append(line)
        elif section in ("args", "arguments", "parameters", "params") and arg and indent <= (arg_indent or indent):
            arg_indent, current = indent, arg.group(1)
            params[current] = arg.group(2).strip()
        elif section in ("args", "arguments", "parameters", "params", "sphinx") and current and line.strip():
            params[current] = f"{params[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), params
