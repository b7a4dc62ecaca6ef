"""Make a JSON Schema acceptable to OpenAI's strict structured output and strict tools."""

from __future__ import annotations

from typing import Any

__all__ = ["strict_json_schema"]

_NESTED_LISTS = ("anyOf", "allOf", "prefixItems")
_NESTED_MAPS = ("properties", "$defs", "definitions")


def strict_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` in the subset strict mode accepts.

    Every object is closed (``additionalProperties: false``) and lists all its
    properties as required (optional fields stay nullable through their own type);
    ``default: null`` is dropped, and a ``$ref`` with sibling keywords is inlined.
    """
    strict: dict[str, Any] = _strict(schema, schema)
    return strict


def _strict(node: Any, root: dict[str, Any]) -> Any:
    if not isinstance(node, dict):
        return node
    if "$ref" in node and len(node) > 1:
        node = {**_resolve(node["$ref"], root), **{k: v for k, v in node.items() if k != "$ref"}}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NESTED_MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub, root) for name, sub in value.items()}
        elif key in _NESTED_LISTS and isinstance(value, list):
            out[key] = [_strict(sub, root) for sub in value]
        elif key == "items" or (key == "additionalProperties" and isinstance(value, dict)):
            out[key] = _strict(value, root)
        elif key == "default" and value is None:
            continue
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        out.setdefault("additionalProperties", False)
        out["required"] = list(out.get("properties", {}))
    return out


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref can be inlined for strict mode, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    if not isinstance(node, dict):
        raise ValueError(f"$ref {ref!r} does not point at a schema")
    return node
