"""What a provider's settings table accepts, in TOML words, for ``llmplex providers --check``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, SecretStr

from llmplex.masking.values import REDACTED, mask_setting
from llmplex.provider import ProviderSettings

__all__ = ["SettingRow", "setting_rows"]

_TOML_TYPES = {"string": "string", "integer": "integer", "number": "float", "boolean": "boolean", "object": "table"}
_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


@dataclass(frozen=True)
class SettingRow:
    """One key of a ``[providers.<prefix>]`` table."""

    name: str
    type: str
    default: str
    environment: str
    value: str
    description: str


def setting_rows(
    model: type[ProviderSettings],
    *,
    own_prefix: bool,
    current: ProviderSettings | None = None,
    sources: Mapping[str, str] | None = None,
) -> list[SettingRow]:
    """Every field of ``model``: TOML type, default, environment variables and the value in use (secrets masked).

    ``own_prefix``: whether the instance is the plugin's own prefix, the only one
    environment variables fill. ``sources`` names where each set value came from.
    """
    try:
        properties = model.model_json_schema()["properties"]
    except Exception:  # a field type without a JSON Schema still lists, untyped
        properties = {}
    rows = []
    for name, field in model.model_fields.items():
        secret = _is_secret(properties.get(name, {}))
        default = field.get_default(call_default_factory=True)
        if current is None:
            value = ""
        elif name in current.model_fields_set:
            value = _shown(name, getattr(current, name), secret)
            source = (sources or {}).get(name)
            value += f" ({source})" if source else ""
        else:
            value = _default_in_use(name, current)
        rows.append(
            SettingRow(
                name=name,
                type=_toml_type(properties.get(name, {})),
                default=_shown(name, default, secret),
                environment=", ".join(model.env_vars.get(name, ())) if own_prefix else "-",
                value=value,
                description=field.description or "",
            )
        )
    return rows


def _default_in_use(name: str, current: ProviderSettings) -> str:
    """``default``; for an unset ``base_url``, with the URL requests go to when the settings know it (a preset's
    local server: ``default (http://127.0.0.1:11434/v1)``)."""
    url = getattr(current, "url", None) if name == "base_url" else None
    return f"default ({mask_setting(name, url)})" if isinstance(url, str) and url else "default"


def _is_secret(schema: Mapping[str, Any]) -> bool:
    """A ``SecretStr`` field (JSON Schema format ``password``), optional or not."""
    return any(option.get("format") == "password" for option in [schema, *schema.get("anyOf", [])])


def _shown(name: str, value: Any, secret: bool) -> str:
    """A value as TOML would write it; unset is ``-``; a secret, or anything under a secret name or shaped
    like a key, is ``***``."""
    if value is None:
        return "-"
    if secret or isinstance(value, SecretStr):
        return REDACTED
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    text = json.dumps(mask_setting(name, value), default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _toml_type(schema: Mapping[str, Any]) -> str:
    """``string``, ``float > 0``, ``"responses" | "chat"``, ``array of string``... from a field's JSON Schema."""
    options = [o for o in schema.get("anyOf", [schema]) if o.get("type") != "null"]
    return " or ".join(_one_type(o) for o in options) or "any"


def _one_type(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items", {})
        return f"array of {_toml_type(items)}" if items else "array"
    text = _TOML_TYPES.get(str(kind), "table" if "$ref" in schema else "any")
    if schema.get("format") == "password":
        text += " (secret)"
    if "pattern" in schema:
        text += f" matching {schema['pattern']}"
    bounds = [f"{sign} {schema[key]}" for key, sign in _BOUNDS.items() if key in schema]
    return " ".join([text, *bounds])
