"""Rewrite OpenAPI 3.0 leftovers in a 3.1 spec into plain JSON Schema 2020-12.

The OpenAI spec is declared 3.1 but still uses keywords that 2020-12 ignores or
reads differently, which would silently weaken (or wrongly tighten) validation:

- ``nullable: true`` (3.0): 2020-12 ignores it, so ``null`` would be rejected.
  Becomes ``"null"`` in ``type`` (and ``None`` in ``enum``), or an
  ``anyOf: [<schema>, {"type": "null"}]`` when the schema has no ``type``.
- ``exclusiveMinimum: true`` / ``exclusiveMaximum: true`` (3.0 booleans): in
  2020-12 they are numbers, and ``true`` would act as the bound ``1``.
  Becomes ``exclusiveMinimum: <minimum>`` (resp. maximum).
- ``oneOf`` with a ``discriminator``: OpenAPI validates only the branch the tag
  selects, but several branches share a tag or leave it optional (e.g. the
  Responses ``EasyInputMessage`` and ``InputMessage`` both match a plain
  ``{"role": "user", ...}``), so plain ``oneOf`` would reject valid payloads as
  "valid under each of". Becomes ``anyOf``: still at least one branch must match.
- ``$recursiveRef: "#"`` with ``$recursiveAnchor`` (2019-09): unknown to 2020-12,
  so the recursive branch would accept anything. Becomes a ``$ref`` to the
  component schema holding the anchor.
"""

from __future__ import annotations

from typing import Any

_CHILD_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_CHILD_SCHEMAS = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)


def to_json_schema_2020_12(spec: dict[str, Any]) -> dict[str, Any]:
    """Return ``spec`` with every ``components.schemas`` entry made 2020-12 clean."""
    schemas = spec["components"]["schemas"]
    converted = {
        name: _convert(schema, f"#/components/schemas/{name}" if _has_recursive_anchor(schema) else None)
        for name, schema in schemas.items()
    }
    return {**spec, "components": {**spec["components"], "schemas": converted}}


def _has_recursive_anchor(schema: object) -> bool:
    return isinstance(schema, dict) and schema.get("$recursiveAnchor") is True


def _convert(schema: object, anchor: str | None) -> object:
    """Convert one schema (a dict or a boolean schema) and its subschemas."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _CHILD_MAPS and isinstance(value, dict):
            out[key] = {name: _convert(sub, anchor) for name, sub in value.items()}
        elif key in _CHILD_LISTS and isinstance(value, list):
            union = "anyOf" if key == "oneOf" and "discriminator" in schema else key
            if union in out or (union != key and union in schema):
                raise ValueError(f"cannot turn a discriminated oneOf into anyOf beside another anyOf: {schema}")
            out[union] = [_convert(sub, anchor) for sub in value]
        elif key in _CHILD_SCHEMAS:
            out[key] = _convert(value, anchor)
        elif key == "$recursiveRef":
            if value != "#" or anchor is None:
                raise ValueError(f"unsupported $recursiveRef {value!r} (anchor {anchor!r})")
            out["$ref"] = anchor
        elif key not in ("$recursiveAnchor", "nullable"):
            out[key] = value
    _fix_exclusive_bound(out, "exclusiveMinimum", "minimum")
    _fix_exclusive_bound(out, "exclusiveMaximum", "maximum")
    return _make_nullable(out) if schema.get("nullable") is True else out


def _fix_exclusive_bound(schema: dict[str, Any], exclusive: str, inclusive: str) -> None:
    flag = schema.get(exclusive)
    if not isinstance(flag, bool):
        return
    del schema[exclusive]
    if flag:
        if inclusive not in schema:
            raise ValueError(f"{exclusive}: true without {inclusive}")
        schema[exclusive] = schema.pop(inclusive)


def _make_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if kind is None:
        constrained = any(key in schema for key in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const", "not"))
        return {"anyOf": [schema, {"type": "null"}]} if constrained else schema
    types = kind if isinstance(kind, list) else [kind]
    out = {**schema, "type": [*types, "null"] if "null" not in types else types}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out
