"""The Responses API's tools as llmplex function tools, and their calls back in the shapes the client sent.

- ``function`` tools are carried as they are;
- ``custom`` (freeform) tools, such as Codex's ``apply_patch``, become function tools with one string argument,
  ``input`` (a grammar they declare goes into the description); their calls come back as ``custom_tool_call``
  items whose ``input`` is that string;
- tools come in ``tools`` or in ``additional_tools`` input items (Codex declares them there for its own models),
  read alike;
- ``namespace`` tools are flattened into their function and custom tools; a call of one comes back naming its
  namespace;
- the web search tools go to OpenAI's Responses API, which runs them; on any other API they are left out and
  named in ``x-llmplex-dropped`` (llmplex runs no web search);
- any other built-in tool (``file_search``, ``code_interpreter``, ``mcp``...) would change the answer: refused
  unless the provider drops unsupported things.
"""

from __future__ import annotations

import json
from typing import Any

from llmplex.gateway.calls import CallSpec
from llmplex.gateway.errors import GatewayError
from llmplex.types import ToolCall

__all__ = ["call_item", "custom_input", "read_tools"]

_WEB_SEARCH = frozenset({"web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"})
_INPUT = "input"


def _name(tool: dict[str, Any], where: str) -> str:
    name = tool.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 64:
        raise GatewayError(400, f"{where}.name must be a name of 1 to 64 characters", param=f"{where}.name")
    return name


def _description(tool: dict[str, Any], namespace: str | None) -> str:
    text = tool.get("description") if isinstance(tool.get("description"), str) else ""
    return f"[{namespace}] {text}".strip() if namespace else str(text)


def _custom(tool: dict[str, Any], where: str, namespace: str | None) -> dict[str, Any]:
    """A custom tool as a function tool taking one string, ``input``; its grammar told in the description."""
    form = tool.get("format")
    about = "The tool's whole input, as one string."
    if isinstance(form, dict) and form.get("type") == "grammar" and isinstance(form.get("definition"), str):
        about += f" It must follow this {form.get('syntax', 'grammar')} grammar:\n{form['definition']}"
    parameters = {
        "type": "object",
        "properties": {_INPUT: {"type": "string", "description": about}},
        "required": [_INPUT],
    }
    return {"name": _name(tool, where), "description": _description(tool, namespace), "parameters": parameters}


def _function(tool: dict[str, Any], where: str, namespace: str | None) -> dict[str, Any]:
    parameters = tool.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise GatewayError(400, f"{where}.parameters must be a JSON Schema object", param=f"{where}.parameters")
    return {
        "name": _name(tool, where),
        "description": _description(tool, namespace),
        "parameters": parameters or {"type": "object", "properties": {}},
    }


def read_tools(tools: list[tuple[str, Any]], spec: CallSpec) -> list[dict[str, Any]]:
    """The function tools declared by ``tools``, each given with where it was declared (``tools.3``, or
    ``input.0.tools.1`` for an ``additional_tools`` input item); ``spec`` learns the custom ones, the namespaces and
    what was left out."""
    out: list[dict[str, Any]] = []
    for where, tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise GatewayError(400, f"{where} must be an object with a type", param=where)
        kind = tool["type"]
        if kind == "namespace":
            namespace = _name(tool, where)
            inner = tool.get("tools")
            if not isinstance(inner, list):
                raise GatewayError(400, f"{where}.tools must be a list of tools", param=f"{where}.tools")
            for position, member in enumerate(inner):
                out.append(_member(member, f"{where}.tools.{position}", namespace, spec))
        elif kind in ("function", "custom"):
            out.append(_member(tool, where, None, spec))
        elif kind in _WEB_SEARCH:  # carried or dropped once the provider is known
            spec.builtin_tools.append((where, tool))
        else:
            spec.unsupported.append(f"{where} ({kind}: a built-in tool llmplex does not run)")
    names = [tool["name"] for tool in out]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise GatewayError(400, f"tools declare {', '.join(twice)} more than once (namespaces included)", param="tools")
    return out


def _member(tool: Any, where: str, namespace: str | None, spec: CallSpec) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") not in ("function", "custom"):
        raise GatewayError(400, f"{where} must be a function or custom tool", param=where)
    declared = _custom(tool, where, namespace) if tool["type"] == "custom" else _function(tool, where, namespace)
    if tool["type"] == "custom":
        spec.custom_tools.add(declared["name"])
    if namespace is not None:
        spec.namespaces[declared["name"]] = namespace
    return declared


def custom_input(arguments: str) -> str:
    """The string a custom tool's call carries in its one argument (the arguments themselves when they are not
    that object: a model that wrote the input bare)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return arguments
    if isinstance(value, dict) and isinstance(value.get(_INPUT), str):
        return str(value[_INPUT])
    return arguments


def call_item(call: ToolCall, spec: CallSpec, status: str = "completed") -> dict[str, Any]:
    """A tool call as the output item the client's tool was declared for."""
    if call.name in spec.custom_tools:
        item: dict[str, Any] = {
            "type": "custom_tool_call",
            "id": f"ctc_{call.id}",
            "call_id": call.id,
            "name": call.name,
            "input": custom_input(call.arguments) if status == "completed" else "",
            "status": status,
        }
    else:
        item = {
            "type": "function_call",
            "id": f"fc_{call.id}",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
            "status": status,
        }
    if call.name in spec.namespaces:
        item["namespace"] = spec.namespaces[call.name]
    return item
