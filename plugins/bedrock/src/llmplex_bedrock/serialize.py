"""botocore's validating REST-JSON serializer for one operation, compiled once from its shapes.

``client._serializer.serialize_to_request`` walks the input shape twice per call
(``ParamValidator``, then ``RestJSONSerializer``), dispatching on each shape's
type by name. ``RequestSerializer`` does both in one walk with checks and
converters built once per shape, and gives the request dict botocore gives
(the same ``json.dumps`` of the same dict, in the caller's key order; the URI
path rendered by botocore's serializer once per label value). It only answers
what it is sure of: a value of a type the validator would accept but convert
(a ``bool`` as an integer, a ``Decimal``, a float that is not finite, a
timestamp, a file-like blob), any ``None`` outside a document, and anything
the validator would report go to ``client._serializer`` itself, which then
answers or raises ``ParamValidationError`` exactly as boto3 does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from botocore.serialize import RestJSONSerializer
from botocore.utils import is_json_value_header
from botocore.validate import ParamValidationDecorator

from llmplex_bedrock.shapes import Convert, ShapeCompiler

__all__ = ["RequestSerializer"]


_LABELS = 256
"""URI paths kept per serializer (one per model id sent): beyond, the cache starts again."""


_LARGEST = sys.float_info.max
"""Numbers beyond (infinities, NaN, integers too large for a float) go to botocore, which converts or refuses them."""


class _BotocoreNeededError(Exception):
    """This value needs botocore's serializer (and its validator)."""


def _slow(value: Any) -> Any:
    raise _BotocoreNeededError


def _document(value: Any) -> Any:
    """A document as the validator accepts it (``None``, text, numbers, booleans, lists and dicts of them)."""
    kind = type(value)
    if kind is dict:
        for item in value.values():
            _document(item)
    elif kind is list:
        for item in value:
            _document(item)
    elif value is not None and not isinstance(value, (str, int, bool, float)):
        raise _BotocoreNeededError
    return value


def _least(shape: Any) -> Any:
    """The ``min`` the validator checks, or ``None``."""
    return shape.metadata.get("min")


class _Compiler(ShapeCompiler):
    """Converters (validate, then serialize) for the shapes of one serializer."""

    def __init__(self, serializer: Any) -> None:
        super().__init__()
        self._serializer = serializer

    def _build(self, shape: Any) -> Convert:
        kind = shape.type_name
        if is_json_value_header(shape) or shape.serialization.get("hostLabel"):
            return _slow
        if kind == "structure":
            return _document if shape.is_document_type else self._structure(shape)
        if kind == "list":
            return _list(self.convert(shape.member), _least(shape))
        if kind == "map":
            return _map(self.convert(shape.key), self.convert(shape.value))
        if kind == "string":
            return _string(_least(shape))
        if kind in ("integer", "long"):
            return _integer(_least(shape))
        if kind in ("float", "double"):
            return _float(_least(shape))
        if kind == "boolean":
            return _boolean
        if kind == "blob":
            return self._blob
        return _slow

    def _blob(self, value: Any) -> Any:
        if type(value) not in (bytes, bytearray, str):
            raise _BotocoreNeededError
        return self._serializer._get_base64(value)

    def _structure(self, shape: Any) -> Convert:
        members = {name: (_wire_name(member, name), self.convert(member)) for name, member in shape.members.items()}
        required = tuple(shape.metadata.get("required", ()))
        union = shape.is_tagged_union

        def structure(value: Any) -> Any:
            if type(value) is not dict or (union and len(value) != 1):
                raise _BotocoreNeededError
            for name in required:
                if name not in value:
                    raise _BotocoreNeededError
            out = {}
            for name, item in value.items():
                known = members.get(name)
                if known is None:
                    raise _BotocoreNeededError
                out[known[0]] = known[1](item)
            return out

        return structure


def _string(least: Any) -> Convert:
    def string(value: Any) -> Any:
        if type(value) is not str or (least is not None and len(value) < least):
            raise _BotocoreNeededError
        return value

    return string


def _integer(least: Any) -> Convert:
    def integer(value: Any) -> Any:
        if type(value) is not int or (least is not None and value < least):
            raise _BotocoreNeededError
        return value

    return integer


def _float(least: Any) -> Convert:
    def number(value: Any) -> Any:
        kind = type(value)
        if (
            not (kind is int or kind is float)
            or not -_LARGEST <= value <= _LARGEST
            or (least is not None and value < least)
        ):
            raise _BotocoreNeededError
        return value

    return number


def _boolean(value: Any) -> Any:
    if type(value) is not bool:
        raise _BotocoreNeededError
    return value


def _list(convert: Convert, least: Any) -> Convert:
    def convert_list(value: Any) -> Any:
        if type(value) not in (list, tuple) or (least is not None and len(value) < least):
            raise _BotocoreNeededError
        return [convert(item) for item in value]

    return convert_list


def _map(key: Convert, convert: Convert) -> Convert:
    def convert_map(value: Any) -> Any:
        if type(value) is not dict:
            raise _BotocoreNeededError
        out = {}
        for name, item in value.items():
            key(name)
            out[name] = convert(item)
        return out

    return convert_map


class RequestSerializer:
    """``client._serializer.serialize_to_request(params, operation)`` of one client and operation (see the
    module's docstring)."""

    def __init__(self, client_serializer: Any, operation: Any) -> None:
        self._client_serializer = client_serializer
        self._operation = operation
        self._inner: Any = None
        self._members: dict[str, tuple[str, bool, Convert]] = {}
        self._required: tuple[str, ...] = ()
        self._paths: dict[tuple[tuple[str, Any], ...], str] = {}
        inner = _compilable(client_serializer, operation)
        if inner is not None:
            self._inner, shape, compiler = inner, operation.input_shape, _Compiler(inner)
            self._members = {
                name: (
                    _wire_name(member, name),
                    member.serialization.get("location") == "uri",
                    compiler.convert(member),
                )
                for name, member in shape.members.items()
            }
            self._required = tuple(shape.metadata.get("required", ()))

    def __call__(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The request dict of ``params`` (``ParamValidationError`` as botocore's)."""
        try:
            return self._serialize(params)
        except (_BotocoreNeededError, RecursionError, TypeError, ValueError):  # botocore raises its own errors
            request: dict[str, Any] = self._client_serializer.serialize_to_request(params, self._operation)
            return request

    @property
    def compiled(self) -> bool:
        """Whether values are serialized here (else always by botocore's serializer)."""
        return self._inner is not None

    def _serialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        if self._inner is None or type(params) is not dict:
            raise _BotocoreNeededError
        for name in self._required:
            if name not in params:
                raise _BotocoreNeededError
        members = self._members
        labels: list[tuple[str, Any]] = []
        body = {}
        for name, value in params.items():
            known = members.get(name)
            if known is None:
                raise _BotocoreNeededError
            wire, in_uri, convert = known
            converted = convert(value)
            if value is None:  # a top-level document left out, as the serializer leaves out every None
                continue
            if in_uri:
                labels.append((wire, converted))
            else:
                body[wire] = converted
        if not body:
            raise _BotocoreNeededError
        return {
            "url_path": self._path(tuple(labels)),
            "query_string": {},
            "method": self._operation.http.get("method", RestJSONSerializer.DEFAULT_METHOD),
            "headers": {"Content-Type": "application/json"},
            "body": json.dumps(body).encode("utf-8"),
        }

    def _path(self, labels: tuple[tuple[str, Any], ...]) -> str:
        path = self._paths.get(labels)
        if path is None:
            if len(self._paths) >= _LABELS:
                self._paths.clear()
            template = self._operation.http["requestUri"]
            path = self._paths[labels] = self._inner._render_uri_template(template, dict(labels))
        return path


def _wire_name(member: Any, name: str) -> str:
    """A member's name in the request (its ``name`` trait, else its own)."""
    return str(member.serialization.get("name", name))


def _compilable(serializer: Any, operation: Any) -> RestJSONSerializer | None:
    """botocore's own REST-JSON serializer under ``serializer``, when ``operation``'s input is compiled here (no
    header, query or payload member, no auth path, labels that are strings), else ``None``."""
    inner: Any = (
        getattr(serializer, "_serializer", None) if type(serializer) is ParamValidationDecorator else serializer
    )
    shape = operation.input_shape
    if type(inner) is not RestJSONSerializer or inner.MAP_TYPE is not dict or shape is None:
        return None
    if shape.serialization.get("payload") or "authPath" in operation.http:
        return None
    for member in shape.members.values():
        location = member.serialization.get("location")
        if location not in (None, "uri") or (location == "uri" and member.type_name != "string"):
            return None
    return inner
