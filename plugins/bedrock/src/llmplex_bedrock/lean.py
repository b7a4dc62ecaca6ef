"""ConverseStream's events without botocore's per-event response parser: the same dicts, a fraction of the work.

``converse_stream`` still goes through boto3 whole (parameters, endpoint,
SigV4 signing, an HTTP error before the stream as botocore's ``ClientError``);
only the reading of its event stream changes. botocore's ``EventStream`` turns
each message into a response dict and walks the ConverseStream model's shapes
through its parser's generic dispatch for every event. ``lean_events`` reads
the same body with ``FrameReader`` (botocore's ``EventStreamBuffer``'s checks
and errors, less work per message; see ``llmplex_bedrock.frames``), decodes each payload as the parser
does (``json``: orjson would turn a 20-digit integer into a float) and converts
it with converters compiled once from the same shapes, doing what
``BaseJSONParser`` does (members by their wire names, ``null`` members left
out, unknown keys such as the service's ``p`` padding dropped, lists copied):
the events equal boto3's. What a converter does not reproduce (a blob, a
timestamp, a tagged union without exactly one known member, a payload that is
not a JSON object, a value of an unexpected type) goes to botocore's parser
for that message, and an ``exception``/``error`` message is parsed and raised
as ``EventStreamError`` exactly as ``EventStream`` does, so errors keep their
codes and messages. A stream or parser that is not botocore's own is read by
boto3 as before.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.eventstream import EventStream
from botocore.exceptions import EventStreamError
from botocore.parsers import EventStreamJSONParser

from llmplex_bedrock.frames import FrameReader
from llmplex_bedrock.shapes import Convert, ShapeCompiler

__all__ = ["EventDecoder", "aread_events", "lean_events", "stream_decoder"]


class _ParserNeededError(Exception):
    """This value needs botocore's parser."""


def _same(value: Any) -> Any:
    return value


def _slow(value: Any) -> Any:
    raise _ParserNeededError


class _Compiler(ShapeCompiler):
    """Converters for the shapes of one parser: identity where the parser returns the value as it is."""

    def __init__(self, parser: EventStreamJSONParser) -> None:
        super().__init__()
        self._parser = parser

    def _build(self, shape: Any) -> Convert:
        kind = shape.type_name
        if kind == "structure":
            return _same if shape.is_document_type else self._structure(shape)
        if kind == "list":
            return _list(self.convert(shape.member))
        if kind == "map":
            return _map(self.convert(shape.key), self.convert(shape.value))
        if getattr(self._parser, f"_handle_{kind}", None) is not None:  # a blob, a timestamp: converted
            return _slow
        return _same

    def _structure(self, shape: Any) -> Convert:
        members = [
            (name, member.serialization.get("name", name), self.convert(member))
            for name, member in shape.members.items()
        ]
        union = frozenset(wire for _, wire, _ in members) if shape.is_tagged_union else None

        def structure(value: Any) -> Any:
            if value is None:
                return None
            if type(value) is not dict:
                raise _ParserNeededError
            if union is not None:
                present = [key for key, item in value.items() if item is not None and key != "__type"]
                if len(present) != 1 or present[0] not in union:
                    raise _ParserNeededError
            out = {}
            for name, wire, convert in members:
                item = value.get(wire)
                if item is not None:
                    out[name] = convert(item)
            return out

        return structure


def _list(convert: Convert) -> Convert:
    def convert_list(value: Any) -> Any:
        if type(value) is not list:
            raise _ParserNeededError
        if convert is _same:
            return list(value)
        return [None if item is None else convert(item) for item in value]

    return convert_list


def _map(key: Convert, convert: Convert) -> Convert:
    def convert_map(value: Any) -> Any:
        if type(value) is not dict:
            raise _ParserNeededError
        return {key(name): convert(item) for name, item in value.items()}

    return convert_map


@dataclass(frozen=True)
class EventDecoder:
    """The events of one event-stream shape, as its parser gives them."""

    parser: EventStreamJSONParser
    shape: Any
    operation: str
    events: dict[str, Convert]

    def decode(self, headers: dict[str, Any], payload: bytes) -> Any:
        """The event of one message (``{}`` for one boto3 skips); an exception or error message raised."""
        kind = headers.get(":event-type")
        convert = None if kind is None else self.events.get(kind)
        failed = headers.get(":message-type") in ("error", "exception")
        if convert is not None and not failed:
            try:  # decoded as the parser decodes it (``_parse_body_as_json``), so numbers come out the same
                body = json.loads(payload.decode()) if payload else {}
                if type(body) is dict:  # anything else fails in the parser, which then raises its own error
                    return {kind: convert(body)}
            except (_ParserNeededError, ValueError):
                pass
        response = {"status_code": 400 if failed else 200, "headers": headers, "body": payload}  # to_response_dict
        parsed = self.parser.parse(response, self.shape)
        if failed:
            raise EventStreamError(parsed, self.operation)
        return parsed


_DECODERS: weakref.WeakKeyDictionary[Any, EventDecoder] = weakref.WeakKeyDictionary()


def _decoder(parser: Any, shape: Any, operation: str) -> EventDecoder | None:
    """The decoder of ``shape`` for ``parser`` (compiled once per parser), or ``None`` where it would not be exact."""
    known = _DECODERS.get(parser)
    if known is not None and known.shape is shape and known.operation == operation:
        return known
    if type(parser) is not EventStreamJSONParser or not shape.serialization.get("eventstream"):
        return None
    compiler = _Compiler(parser)
    events = {}
    for kind, event in shape.members.items():
        plain = event.serialization.get("event") and not any(
            member.serialization.get("eventheader") or member.serialization.get("eventpayload")
            for member in event.members.values()
        )
        if plain:
            events[kind] = compiler.convert(event)
    decoder = EventDecoder(parser, shape, operation, events)
    _DECODERS[parser] = decoder
    return decoder


def lean_events(stream: Any) -> Iterator[Any] | None:
    """The events of botocore's ``EventStream`` ``stream`` read the lean way, or ``None`` (read ``stream`` itself).

    Reading them reads ``stream``'s body; closing it stays the caller's (``stream.close()``).
    """
    if type(stream) is not EventStream:
        return None
    state = vars(stream)
    raw, parser, shape = state.get("_raw_stream"), state.get("_parser"), state.get("_output_shape")
    operation = state.get("_operation_name")
    if raw is None or parser is None or shape is None or not isinstance(operation, str):
        return None
    decoder = _decoder(parser, shape, operation)
    return None if decoder is None else _read(raw, decoder)


def _read(raw: Any, decoder: EventDecoder) -> Iterator[Any]:
    frames = FrameReader()
    for chunk in raw.stream():
        for headers, payload in frames.feed(chunk):
            event = decoder.decode(headers, payload)
            if event:
                yield event


def stream_decoder(parser: Any, shape: Any, operation: str) -> EventDecoder | None:
    """The decoder of ``shape``'s events for ``parser`` (compiled once per parser), or ``None`` where it would not
    give ``parser``'s events exactly."""
    return _decoder(parser, shape, operation)


async def aread_events(chunks: AsyncIterable[bytes], decoder: EventDecoder) -> AsyncIterator[Any]:
    """The events of an event-stream body arriving as ``chunks``, read the lean way as ``lean_events`` reads them."""
    frames = FrameReader()
    async for chunk in chunks:
        for headers, payload in frames.feed(chunk):
            event = decoder.decode(headers, payload)
            if event:
                yield event
