"""An output type (pydantic model, dataclass, TypedDict or raw JSON Schema) as an OutputSpec."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, PydanticUserError, TypeAdapter, ValidationError
from typing_extensions import is_typeddict

from llmplex.errors import LLMConfigurationError
from llmplex.types import OutputSchema
from llmplex.types.schema_refs import dangling_ref

__all__ = [
    "OutputInvalidError",
    "OutputSpec",
    "describe_errors",
    "json_schema_validator",
    "output_spec",
    "pydantic_errors",
    "request_output",
    "schema_problem",
]


class OutputInvalidError(Exception):
    """A value did not match its schema (an output's, or a tool's parameters); ``errors`` lists what was wrong."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(describe_errors(errors))
        self.errors = errors


def describe_errors(errors: Sequence[Mapping[str, Any]], root: str = "(root)") -> str:
    """``{"path", "message"}`` items as one line: ``path: message; ...`` (``root`` names the empty path)."""
    return "; ".join(f"{e.get('path') or root}: {e.get('message')}" for e in errors)


@dataclass(frozen=True)
class OutputSpec:
    """What the answer must look like (``schema``) and how to turn JSON data into the value."""

    schema: OutputSchema
    validate: Callable[[Any], Any]


def output_spec(output: Any) -> OutputSpec:
    """The spec for ``output=``: a pydantic model, dataclass, TypedDict, JSON Schema dict or OutputSchema."""
    if isinstance(output, OutputSpec):
        return output
    if isinstance(output, OutputSchema):
        return OutputSpec(output, json_schema_validator(output.json_schema))
    if isinstance(output, Mapping):
        schema = dict(output)
        _check_json_schema(schema)
        name = _safe_name(str(schema.get("title") or "output"))
        return OutputSpec(
            OutputSchema(name=name, json_schema=schema, strict=is_strict(schema)), json_schema_validator(schema)
        )
    if isinstance(output, type) and (
        issubclass(output, BaseModel) or dataclasses.is_dataclass(output) or is_typeddict(output)
    ):
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(output)
            schema = adapter.json_schema()
        except PydanticUserError as exc:
            raise LLMConfigurationError(f"output type {output.__name__} cannot be used: {exc.message}") from None
        schema.pop("title", None)
        name = _safe_name(output.__name__)
        return OutputSpec(
            OutputSchema(name=name, json_schema=schema, strict=is_strict(schema)), _pydantic_validator(adapter)
        )
    raise LLMConfigurationError(
        f"output must be a pydantic model, a dataclass, a TypedDict or a JSON Schema dict; got {output!r}"
    )


def request_output(output: Any) -> OutputSchema | None:
    """The schema to put on a Request for ``output=`` (``None`` when none was asked for)."""
    return None if output is None else output_spec(output).schema


def is_strict(schema: Mapping[str, Any]) -> bool:
    """Whether every object in ``schema`` forbids extra keys and requires all its properties.

    Providers with a strict JSON-schema mode (OpenAI) accept only such schemas.
    """
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", ())) != set(properties):
            return False
    children: list[Any] = []
    for key in ("properties", "$defs", "definitions"):
        children += list(schema.get(key, {}).values())
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            children.append(schema[key])
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        children += list(schema.get(key, ()))
    return all(is_strict(child) for child in children if isinstance(child, Mapping))


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-]", "_", name)[:64] or "output"


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (naming where), or ``None`` when it is."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "the top level"
        return f"not a valid JSON Schema at {where}: {exc.message}"
    except RecursionError:
        return "not a usable JSON Schema: it is nested too deeply"
    return dangling_ref(schema)


def _check_json_schema(schema: dict[str, Any]) -> None:
    problem = schema_problem(schema)
    if problem:
        raise LLMConfigurationError(f"output is {problem}")


def json_schema_validator(schema: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A function returning its argument when it matches ``schema``, raising OutputInvalidError otherwise."""
    from jsonschema.validators import validator_for

    validator = validator_for(schema)(schema)

    def validate(data: Any) -> Any:
        try:
            errors = [
                {"path": "/".join(str(p) for p in e.absolute_path), "message": e.message}
                for e in validator.iter_errors(data)
            ]
        except RecursionError:  # a recursive schema ($ref) walking data nested hundreds of levels deep
            errors = [{"path": "", "message": "the value is nested too deeply to check against the schema"}]
        if errors:
            raise OutputInvalidError(errors)
        return data

    return validate


def _pydantic_validator(adapter: TypeAdapter[Any]) -> Callable[[Any], Any]:
    def validate(data: Any) -> Any:
        try:
            return adapter.validate_python(data)
        except ValidationError as exc:
            raise OutputInvalidError(pydantic_errors(exc)) from None

    return validate


def pydantic_errors(error: ValidationError) -> list[dict[str, Any]]:
    """A pydantic ValidationError as ``{"path", "message"}`` items."""
    return [{"path": "/".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in error.errors(include_url=False)]
