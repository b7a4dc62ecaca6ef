"""Validate payloads against the vendored OpenAI OpenAPI spec's component schemas."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.contract.openapi_compat import to_json_schema_2020_12
from tests.contract.spec_cache import load_yaml_cached

OPENAI_SPEC = Path(__file__).parent / "specs" / "openai-openapi.yaml"
_SPEC_URI = "urn:llmplex:openai-openapi"


@functools.cache
def openai_spec() -> dict[str, Any]:
    """The parsed spec, converted to JSON Schema 2020-12; loaded once per process."""
    loaded = load_yaml_cached(OPENAI_SPEC)
    if not isinstance(loaded, dict):
        raise TypeError(f"{OPENAI_SPEC} is not a mapping")
    return to_json_schema_2020_12(loaded)


@functools.cache
def _registry() -> Registry[Any]:
    resource: Resource[Any] = Resource.from_contents(openai_spec(), default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(_SPEC_URI, resource)
    return registry


@functools.cache
def _validator(schema_name: str) -> Draft202012Validator:
    if schema_name not in openai_spec()["components"]["schemas"]:
        raise KeyError(f"no schema #/components/schemas/{schema_name} in {OPENAI_SPEC.name}")
    schema = {"$ref": f"{_SPEC_URI}#/components/schemas/{schema_name}"}
    return Draft202012Validator(schema, registry=_registry())


def validate_openai(schema_name: str, instance: object) -> None:
    """Assert ``instance`` matches ``#/components/schemas/<schema_name>``.

    Raises AssertionError listing every violation as ``<json path>: <message>``;
    for ``anyOf``/``oneOf`` failures the best-matching branch's errors are listed too.
    """
    errors = sorted(_validator(schema_name).iter_errors(instance), key=lambda e: e.json_path)
    if errors:
        lines = [line for error in errors for line in _describe(error)]
        raise AssertionError(f"{len(errors)} violation(s) of {schema_name}:\n" + "\n".join(lines))


def _describe(error: ValidationError, depth: int = 0) -> list[str]:
    indent = "  " * (depth + 1)
    lines = [f"{indent}{error.json_path}: {_shorten(error.message)}"]
    if error.context and depth < 3:
        lines += [line for sub in _best_branch(error) for line in _describe(sub, depth + 1)]
    return lines


def _best_branch(error: ValidationError) -> list[ValidationError]:
    """Errors of the anyOf/oneOf branch the instance most likely meant.

    Branches whose type does not even fit the instance, or that reject its
    discriminator (``type`` unless the schema names another), are the wrong
    variant; among the rest, the one with the fewest errors wins.
    """
    schema = error.schema if isinstance(error.schema, dict) else {}
    key = (schema.get("discriminator") or {}).get("propertyName", "type")
    branches: dict[str | int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)

    def wrong_variant(sub: ValidationError) -> bool:
        path = list(sub.relative_path)
        return (path == [] and sub.validator == "type") or (path == [key] and sub.validator in ("enum", "const"))

    return min(branches.values(), key=lambda errs: (any(map(wrong_variant, errs)), len(errs)))


def _shorten(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
