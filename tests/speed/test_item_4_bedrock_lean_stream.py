"""Issue 34 item 4: Bedrock's ConverseStream read lean. boto3 still sends the request (SigV4, endpoint, an HTTP
error before the stream); the event stream is decoded with botocore's own frame decoder, orjson and converters
compiled from the ConverseStream model (``llmplex_bedrock.lean``) instead of botocore's per-event parser. Each case
runs both ways (boto3's ``EventStream``, the lean reader) against a local server writing the documented
``application/vnd.amazon.eventstream`` frames (tests/plugins/bedrock/wire.py) and compares: the same events, the
same final response, the same SDK exception (code and message) and the same typed llmplex error per fault."""

from __future__ import annotations

import asyncio
import itertools
import json
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError, EventStreamError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import frames as bedrock_frames
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock import lean as bedrock_lean

import llmplex
from llmplex import Deadline, LLMConnectionError, LLMDeadlineExceededError, LLMError
from llmplex.testing import Reply
from llmplex.types import ToolCall, Usage
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)
from tests.plugins.bedrock.wire import event_frame, exception_frame, frame, stream_frames
from tests.support.fault_server import Fault, FaultServer
from tests.support.standing_clock import StandingClock
from tests.support.stream_server import Reply as Answer
from tests.support.stream_server import StreamServer

KEY_ID = "AKIAIOSFODNN7LEANTEST"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiLEANSECRET"
TOKEN = "session-token-lean-never-shown"
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
EVENTSTREAM = "application/vnd.amazon.eventstream"


def _event(kind: str, payload: bytes) -> bytes:
    return frame({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, payload)


START = event_frame("messageStart", {"role": "assistant"})
HI = [event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in ("Hi", "!")]
REPLY = Reply(
    "Hi there friend",
    tool_calls=(ToolCall(id="tooluse_1", name="add", arguments='{"a": 1, "b": 2}'),),
    usage=Usage(input_tokens=12, output_tokens=7, cached_tokens=4),
    finish_reason="tool_calls",
)

EVERY_SHAPE = [
    START,
    event_frame("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}),
    event_frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a":'}}}),
    event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "é ☃ \\u0000", "extra": None}}),
    event_frame("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"reasoningContent": {"text": "hmm"}}}),
    event_frame("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"reasoningContent": {"signature": "s"}}}),
    event_frame(
        "contentBlockDelta", {"contentBlockIndex": 2, "delta": {"reasoningContent": {"redactedContent": "AAE="}}}
    ),
    event_frame("contentBlockDelta", {"contentBlockIndex": 3, "delta": {"somethingNew": {"x": 1}}}),
    event_frame("contentBlockStop", {"contentBlockIndex": 1}),
    event_frame("messageStop", {"stopReason": "end_turn", "additionalModelResponseFields": {"k": [1, {"n": None}]}}),
    event_frame(
        "metadata", {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}, "metrics": {"latencyMs": 9}}
    ),
    event_frame("metadata", {"usage": None, "trace": {"guardrail": {"modelOutput": ["x", None]}}}),
    event_frame("somethingUnknown", {"a": 1}),
    _event("messageStart", b""),
    _event("messageStart", b"{not json"),
    _event("messageStart", b'{"role": "assistant", "role": "user"}'),
    _event("metadata", b'{"usage": {"inputTokens": 123456789012345678901234567890}}'),
]
"""Every ConverseStream event, with what the converters hand back to botocore's parser (a blob, a union member
this botocore does not know, a payload that is not JSON), a 97-bit integer, and padding, nulls and unknown keys."""


Server = StreamServer | FaultServer


def _serve(*replies: Answer) -> StreamServer:
    """The shared scripted stream server answering with ``replies`` in order (the last one repeated)."""
    server = StreamServer()
    server.script(*replies)
    return server


def _stream(body: bytes, **options: Any) -> Answer:
    """A 200 event stream of ``body``, sent chunked in two halves (``options``: ``ending``: cut, stall)."""
    half = len(body) // 2
    pieces = tuple(piece for piece in (body[:half], body[half:]) if piece)  # an empty chunk would end the body
    return Answer(200, pieces, EVENTSTREAM, **options)


def _served(body: bytes, **options: Any) -> StreamServer:
    """The server answering every request with the event stream ``body`` (``_stream``'s ``options``)."""
    return _serve(_stream(body, **options))


read_lean: list[bool] = []


@pytest.fixture
def via(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """Choose boto3 whole (``True``: its request, its ``EventStream``) or the lean request and reader; each lean
    read is recorded in ``read_lean``."""
    read_lean.clear()

    def counted(stream: Any) -> Any:
        events = bedrock_lean.lean_events(stream)
        read_lean.append(events is not None)
        return events

    def acounted(*args: Any) -> Any:
        events = bedrock_lean.aread_events(*args)
        read_lean.append(events is not None)
        return events

    def choose(sdk: bool) -> None:
        monkeypatch.setattr(bedrock_hooks, "lean_events", (lambda stream: None) if sdk else counted)
        monkeypatch.setattr(bedrock_hooks, "aread_events", acounted)
        # boto3's way is boto3's request too (the lean request is tests/speed/test_item_4_bedrock_lean_request.py's)
        monkeypatch.setattr(
            bedrock_hooks, "lean_request", (lambda client: None) if sdk else bedrock_direct.lean_request
        )

    return choose


def _config(url: str) -> dict[str, Any]:
    keys = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET, "aws_session_token": TOKEN}
    return {"providers": {"bedrock": {"endpoint_url": url, "region": "eu-west-3", **keys}}}


def _run(url: str, mode: str, warm: bool = False, **kwargs: Any) -> tuple[Any, ...]:
    """How one stream ends: ``("ok", text, usage, finish, tool calls)`` or ``("error", type, message, text)``.

    ``warm``: one stream is read through before (the client and its connection built, outside any deadline), and
    the ``deadline`` counts from the first text event (its clock stands still until then: on a loaded machine the
    first event may come later than the deadline, and the test is about what comes after it).
    """
    client = llmplex.Client(_config(url), throttle={"max_attempts": 1})
    seen: list[Any] = []
    held = StandingClock()
    if warm:
        list(client.stream(f"bedrock:{HAIKU}", "hi"))
        kwargs = {**kwargs, "deadline": Deadline.after(kwargs["deadline"], held.as_clock())}

    def keep(event: Any) -> None:
        seen.append(event)
        if event.type == "text":
            held.run()

    async def read() -> None:
        async for event in client.astream(f"bedrock:{HAIKU}", "hi", **kwargs):
            keep(event)

    try:
        if mode == "stream":
            for event in client.stream(f"bedrock:{HAIKU}", "hi", **kwargs):
                keep(event)
        else:
            asyncio.run(read())
    except LLMError as error:
        text = "".join(e.text or "" for e in seen if e.type == "text")
        assert SECRET not in repr(error) and TOKEN not in repr(error) and SECRET not in str(error.__cause__)
        return ("error", type(error), str(error), text)
    finally:
        client.close()
    final = seen[-1].response
    calls = [(c.id, c.name, c.arguments) for c in final.tool_calls]
    return ("ok", final.text, final.usage, final.finish_reason, calls)


def _both(via: Callable[[bool], None], server: Server, mode: str, **kwargs: Any) -> tuple[Any, ...]:
    """The outcome through boto3 and through the lean reader, checked equal; the lean one returned."""
    outcomes = []
    for sdk in (True, False):
        via(sdk)
        outcomes.append(_run(server.url, mode, **kwargs))
    if mode == "astream" and outcomes[1][:2] == ("error", LLMConnectionError):
        # aiohttp words a broken connection its own way (the lean async stream is on aiohttp, boto3 on httpx's h11)
        assert (outcomes[0][:2], outcomes[0][3]) == (outcomes[1][:2], outcomes[1][3])
        return outcomes[1]
    assert outcomes[0] == outcomes[1]
    return outcomes[1]


def _sdk_events(server: Server) -> Iterator[Any]:
    """boto3's ``converse_stream`` against ``server``: its ``EventStream`` (one attempt: no backoff sleeps)."""
    client = boto3.client(
        "bedrock-runtime",
        region_name="eu-west-3",
        endpoint_url=server.url,
        aws_access_key_id=KEY_ID,
        aws_secret_access_key=SECRET,
        config=Config(retries={"total_max_attempts": 1}),
    )
    messages = [{"role": "user", "content": [{"text": "hi"}]}]
    stream = client.converse_stream(modelId=HAIKU, messages=messages)["stream"]
    return stream  # type: ignore[no-any-return]


def test_item_4_bedrock_test_frames_decode_with_botocores_decoder() -> None:
    """The test encoder writes what botocore's decoder reads: headers, payload, both CRCs."""
    buffer = EventStreamBuffer()
    buffer.add_data(event_frame("metadata", {"usage": {"inputTokens": 1}}) + _event("messageStart", b""))
    first, second = list(buffer)
    assert first.headers == {":event-type": "metadata", ":content-type": "application/json", ":message-type": "event"}
    assert json.loads(first.payload)["usage"] == {"inputTokens": 1}
    assert (second.headers[":event-type"], second.payload) == ("messageStart", b"")


def test_item_4_bedrock_lean_events_equal_boto3s_for_every_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"".join(EVERY_SHAPE)
    with _served(body) as server:
        expected = list(_sdk_events(server))
        stream = _sdk_events(server)
        parsed: list[str] = []
        parse = stream._parser.parse
        monkeypatch.setattr(
            stream._parser, "parse", lambda r, s: (parsed.append(r["headers"][":event-type"]), parse(r, s))[1]
        )
        lean = bedrock_lean.lean_events(stream)
        assert lean is not None
        got = list(lean)
    assert got == expected and len(got) == len(EVERY_SHAPE) - 1  # the unknown event is skipped both ways
    assert got[0] == {"messageStart": {"role": "assistant"}}  # the service's "p" padding dropped, as boto3 drops it
    assert got[6]["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"] == b"\x00\x01"
    # only what the converters hand back went through botocore's parser: a blob, an unknown union member, the
    # unknown event, a payload that is not JSON (a 97-bit integer stays an int on the lean path too)
    assert parsed == ["contentBlockDelta"] * 2 + ["somethingUnknown", "messageStart"]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_bedrock_stream_gives_the_same_response_both_ways(mode: str, via: Callable[[bool], None]) -> None:
    with _served(b"".join(stream_frames(REPLY))) as server:
        outcome = _both(via, server, mode)
    assert read_lean == [True]
    assert outcome[:2] == ("ok", "Hi there friend") and outcome[3] == "tool_calls"
    assert outcome[2].input_tokens == 12 and outcome[2].cached_tokens == 4 and outcome[2].output_tokens == 7
    assert outcome[4] == [("tooluse_1", "add", '{"a": 1, "b": 2}')]


def _http_error(status: int, name: str) -> StreamServer:
    headers = {"x-amzn-ErrorType": f"{name}:http://internal.amazon.com/"}
    return _serve(Answer.json(status, json.dumps({"message": f"{name} said no"}).encode(), headers))


def _crafted(headers_length: int, body: bytes) -> bytes:
    """A frame whose prelude announces ``headers_length`` over ``body``, both CRCs right (flipped bytes never are)."""
    prelude = struct.pack("!II", 16 + len(body), headers_length)
    message = prelude + struct.pack("!I", zlib.crc32(prelude)) + body
    return message + struct.pack("!I", zlib.crc32(message))


ERROR_FRAME = frame({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "it broke"}, b"")
FAULTS: dict[str, Callable[[], Server]] = {
    "HTTP 429 before the stream": lambda: _http_error(429, "ThrottlingException"),
    "HTTP 400 before the stream": lambda: _http_error(400, "ValidationException"),
    "throttlingException mid-stream": lambda: _served(
        START + HI[0] + exception_frame("throttlingException", "Too many tokens, slow down")
    ),
    "exception echoing the credentials": lambda: _served(
        START + HI[0] + exception_frame("throttlingException", f"no: {KEY_ID} {SECRET} {TOKEN}")
    ),
    "modelStreamErrorException mid-stream": lambda: _served(
        START + HI[0] + exception_frame("modelStreamErrorException", "the model broke")
    ),
    "unmodelled error message": lambda: _served(START + HI[0] + ERROR_FRAME),
    "event with two union members": lambda: _served(
        START
        + HI[0]
        + event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "a", "toolUse": {}}})
    ),
    "bad CRC": lambda: _served(START + HI[0] + HI[1][:-1] + bytes([HI[1][-1] ^ 1])),
    "bad prelude CRC": lambda: _served(START + HI[0][:8] + b"\x00\x00\x00\x00" + HI[0][12:]),
    "payload over 24 MB announced": lambda: _served(START + _prelude(24 * 1024 * 1024 + 17, 0) + b"x" * 64),
    "connection cut mid-frame": lambda: _served(START + HI[0] + HI[1][:20], ending="cut"),
    "connection reset": lambda: FaultServer(Fault.reset(), any_path=True),
    "header name not UTF-8": lambda: _served(START + HI[0] + _crafted(3, b"\x01\xff\x07")),
    "header cut short": lambda: _served(START + HI[0] + _crafted(4, b"\x05abc")),
    "unknown header type": lambda: _served(START + HI[0] + _crafted(6, b"\x01a\x63\x00\x00\x00")),
}


def _prelude(total: int, headers: int) -> bytes:
    head = struct.pack("!II", total, headers)
    return head + struct.pack("!I", zlib.crc32(head))


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(FAULTS))
def test_item_4_bedrock_faults_are_the_same_typed_errors(name: str, mode: str, via: Callable[[bool], None]) -> None:
    with FAULTS[name]() as server:
        outcome = _both(via, server, mode)
    assert outcome[0] == "error" and outcome[1] is not LLMError, outcome
    opened = "before the stream" not in name and name != "connection reset"
    assert read_lean == ([True] if opened else [])
    assert outcome[3] == ("" if not opened or name in ("bad prelude CRC", "payload over 24 MB announced") else "Hi")


@pytest.mark.parametrize(
    "name", ["throttlingException mid-stream", "modelStreamErrorException mid-stream", "unmodelled error message"]
)
def test_item_4_bedrock_exception_event_is_botocores_event_stream_error(name: str) -> None:
    """At the SDK's level: the same ``EventStreamError`` (code, message, text) both ways."""
    raised = []
    with FAULTS[name]() as server:
        for lean in (False, True):
            stream = _sdk_events(server)
            events = bedrock_lean.lean_events(stream) if lean else stream
            with pytest.raises(EventStreamError) as caught:
                list(events)  # type: ignore[arg-type]
            raised.append((str(caught.value), caught.value.response["Error"]))
    assert raised[0] == raised[1]
    assert raised[1][1]["Code"] in ("throttlingException", "modelStreamErrorException", "InternalFailure")


def test_item_4_bedrock_http_error_stays_botocores_client_error() -> None:
    with _http_error(429, "ThrottlingException") as server, pytest.raises(ClientError) as caught:
        _sdk_events(server)
    assert caught.value.response["Error"]["Code"] == "ThrottlingException"


def test_item_4_bedrock_truncated_last_frame_and_big_payload_read_the_same(via: Callable[[bool], None]) -> None:
    """A stream whose last frame is cut short ends as boto3's does; a 1 MB text delta passes whole."""
    big = event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x" * 1_000_000}})
    ended = [START, *HI, big, event_frame("messageStop", {"stopReason": "end_turn"})]
    with _served(b"".join(ended)[:-10]) as server:
        outcome = _both(via, server, "stream")
    assert read_lean == [True]
    assert outcome[0] == "ok" and len(outcome[1]) == 1_000_003


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_bedrock_stalled_stream_ends_at_the_deadline(mode: str, via: Callable[[bool], None]) -> None:
    """The server stops in the middle of a frame (its prelude sent, the rest held) and holds it until it stops.
    The deadline counts from the first event (``_run``'s ``warm``): 0.6 s, then 2 s from the call's start, failed
    on loaded machines before the first event arrived."""
    held = _stream(START + HI[0] + HI[1][:16], ending="stall")
    with _serve(_stream(b"".join(stream_frames(REPLY))), held) as server:
        via(False)
        outcome = _run(server.url, mode, warm=True, deadline=2.0)
    assert read_lean == [True, True]
    assert outcome[:2] == ("error", LLMDeadlineExceededError) and outcome[3] == "Hi"


def test_item_4_bedrock_other_streams_fall_back_to_boto3() -> None:
    """What is not botocore's own ``EventStream`` (a stubbed or wrapped stream) is left to be read as it is."""
    assert bedrock_lean.lean_events(iter([{"messageStart": {}}])) is None


def _read_all(feed: Callable[[bytes], Iterator[tuple[Any, bytes]]], chunks: list[bytes]) -> list[Any]:
    out: list[Any] = []
    try:
        for chunk in chunks:
            out.extend((dict(headers), payload) for headers, payload in feed(chunk))
    except Exception as error:  # the error itself is compared
        out.append((type(error), str(error)))
    return out


def _botocore_feed() -> Callable[[bytes], Iterator[tuple[Any, bytes]]]:
    buffer = EventStreamBuffer()

    def feed(chunk: bytes) -> Iterator[tuple[Any, bytes]]:
        buffer.add_data(chunk)
        return ((message.headers, message.payload) for message in buffer)

    return feed


FRAMES = [
    START,
    *HI,
    ERROR_FRAME,
    exception_frame("throttlingException", "slow"),
    _event("metadata", b""),
    *EVERY_SHAPE[:4],
]


@settings(derandomize=True, max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    picks=st.lists(st.integers(0, len(FRAMES) - 1), min_size=1, max_size=8),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=2),
    cut=st.integers(0, 10_000),
    splits=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_item_4_bedrock_frame_reader_reads_and_fails_as_botocores_buffer(
    picks: list[int], flips: list[tuple[int, int]], cut: int, splits: list[int]
) -> None:
    """Frames with flipped bytes (CRCs, lengths, headers), cut short, split anywhere: the same messages, then the
    same error (type and message), as botocore's ``EventStreamBuffer``."""
    data = bytearray(b"".join(FRAMES[i] for i in picks))
    for at, mask in flips:
        data[at % len(data)] ^= mask
    body = bytes(data[: len(data) - cut % 40])
    points = sorted({0, len(body), *(s % (len(body) + 1) for s in splits)})
    chunks = [body[a:b] for a, b in itertools.pairwise(points)]
    assert _read_all(bedrock_frames.FrameReader().feed, chunks) == _read_all(_botocore_feed(), chunks)


def test_item_4_bedrock_frame_reader_bounds_its_header_cache() -> None:
    """A server sending a new header block with every message gets each parsed, and the cache stays bounded."""
    reader = bedrock_frames.FrameReader()
    body = b"".join(frame({":event-type": "messageStart", "x": str(i)}, b"{}") for i in range(100))
    assert [h["x"] for h, _ in reader.feed(body)] == [str(i) for i in range(100)]
    assert 0 < len(bedrock_frames._KNOWN) <= bedrock_frames._CACHED_HEADERS


def test_item_4_bedrock_frame_reader_joins_a_big_frame_once() -> None:
    """An 8 MB frame arriving 1 KB at a time is joined once it is whole, not copied again with every chunk (that
    is about 32 GB of copying, tens of seconds of CPU, where joining once takes milliseconds)."""
    payload = b"x" * (8 * 1024 * 1024)
    body = frame({":event-type": "messageStart"}, payload)
    reader = bedrock_frames.FrameReader()
    started = time.process_time()
    got = [p for at in range(0, len(body), 1024) for _, p in reader.feed(body[at : at + 1024])]
    assert time.process_time() - started < 2.0  # CPU time: about 0.02 s joined once
    assert got == [payload]


@pytest.mark.parametrize(
    ("headers_length", "body"),
    [(128 * 1024 + 1, b"h" * (128 * 1024 + 1)), (10, b"1234"), (128 * 1024, b"\x00" * (128 * 1024))],
    ids=["headers over 128 KB", "headers longer than the frame", "headers at the limit"],
)
def test_item_4_bedrock_frame_reader_fails_crafted_lengths_as_botocores_buffer(
    headers_length: int, body: bytes
) -> None:
    """Lengths a hostile server announces under right CRCs: the same messages and error as botocore's buffer."""
    chunks = [START, _crafted(headers_length, body), HI[0]]
    assert _read_all(bedrock_frames.FrameReader().feed, chunks) == _read_all(_botocore_feed(), chunks)
