"""A minimal OpenAI- and Anthropic-compatible HTTP/1.1 server for benchmarks (standard library only).

It answers, at once and on keep-alive connections, with one fixed body per route:

* ``POST .../chat/completions``: a ``chat.completion``; with ``"stream": true`` in
  the body, the same answer as ``STREAM_CHUNKS`` server-sent ``chat.completion.chunk``
  events then ``[DONE]``;
* ``POST .../responses``: a Responses API ``response``; streamed, the documented
  ``response.created`` ... ``response.completed`` events with ``STREAM_CHUNKS`` text deltas;
* ``POST .../messages``: an Anthropic ``message``; streamed, the documented
  ``message_start`` ... ``message_stop`` events with ``STREAM_CHUNKS`` text deltas;
* ``POST .../converse-stream``: Bedrock's ConverseStream, ``application/vnd.amazon.eventstream``
  frames ``messageStart``, ``STREAM_CHUNKS`` ``contentBlockDelta`` texts, ``contentBlockStop``,
  ``messageStop``, ``metadata`` (payloads padded with ``p`` as the service pads them);
* ``POST .../models/{model}:streamGenerateContent?alt=sse``: Gemini's stream, ``STREAM_CHUNKS``
  ``GenerateContentResponse`` events (text, usage, model and response id on each, the finish on the last);
* ``POST .../models/{model}:generateContent``: Gemini's whole answer, one ``GenerateContentResponse``.

Azure OpenAI's deployment URL (``/openai/deployments/{deployment}/chat/completions?api-version=...``)
ends like Chat Completions and gets its answer.

Anything else gets 404. It binds 127.0.0.1 on an ephemeral port, prints
``PORT <n>`` on stdout, and stops when stdin closes or after ``--lifetime``
seconds, whichever comes first. ``--cpu N`` pins it to CPU ``N``.

    python bench/openai_stub_server.py --lifetime 300 --cpu 1
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import struct
import sys
import threading
import zlib
from typing import Any

STREAM_CHUNKS = 32
"""Text deltas in a streamed answer."""

CHAT_COMPLETION = {
    "id": "chatcmpl-bench0000000000000000000000000",
    "object": "chat.completion",
    "created": 1741569952,
    "model": "stub-model",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello! How can I help?", "refusal": None, "annotations": []},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 9,
        "completion_tokens": 7,
        "total_tokens": 16,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    },
    "service_tier": "default",
    "system_fingerprint": "fp_bench",
}

RESPONSE = {
    "id": "resp_bench000000000000000000000000000000000000000000",
    "object": "response",
    "created_at": 1741569952,
    "status": "completed",
    "background": False,
    "completed_at": 1741569953,
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "model": "stub-model",
    "output": [
        {
            "id": "msg_bench000000000000000000000000000000000000000000",
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello! How can I help?", "annotations": [], "logprobs": []}],
        }
    ],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "service_tier": "default",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "metadata": {},
    "usage": {
        "input_tokens": 9,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 16,
    },
}

MESSAGE = {
    "id": "msg_bench00000000000000000000",
    "type": "message",
    "role": "assistant",
    "model": "stub-model",
    "content": [{"type": "text", "text": "Hello! How can I help?", "citations": None}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 9,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "server_tool_use": None,
        "service_tier": "standard",
    },
}


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _chat_stream() -> bytes:
    base = {k: CHAT_COMPLETION[k] for k in ("id", "created", "model", "system_fingerprint")}
    chunk = {**base, "object": "chat.completion.chunk"}

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return f"data: {_json({**chunk, 'choices': [choice]})}\n\n"

    events = [event({"role": "assistant", "content": ""})]
    events += [event({"content": f"w{i} "}) for i in range(STREAM_CHUNKS)]
    events.append(event({}, "stop"))
    events.append("data: [DONE]\n\n")
    return "".join(events).encode()


def _messages_stream() -> bytes:
    start = {**MESSAGE, "content": [], "stop_reason": None, "usage": {"input_tokens": 9, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
    ]
    events += [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"w{i} "}},
        )
        for i in range(STREAM_CHUNKS)
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 7},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {_json(data)}\n\n" for name, data in events).encode()


def _responses_stream() -> bytes:
    message = RESPONSE["output"][0]
    item = {"id": message["id"], "output_index": 0, "content_index": 0}
    running = {**RESPONSE, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": running},
        {"type": "response.in_progress", "response": running},
        {"type": "response.output_item.added", "output_index": 0, "item": {**message, "content": []}},
        {**item, "type": "response.content_part.added", "part": {"type": "output_text", "text": "", "annotations": []}},
    ]
    delta = {**item, "type": "response.output_text.delta", "logprobs": []}
    events += [{**delta, "delta": f"w{i} "} for i in range(STREAM_CHUNKS)]
    text = "".join(f"w{i} " for i in range(STREAM_CHUNKS))
    part = {"type": "output_text", "text": text, "annotations": []}
    done = {**message, "content": [{**part, "logprobs": []}]}
    events += [
        {**item, "type": "response.output_text.done", "text": text, "logprobs": []},
        {**item, "type": "response.content_part.done", "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": {**RESPONSE, "output": [done]}},
    ]
    numbered = [{**event, "sequence_number": number} for number, event in enumerate(events)]
    return "".join(f"event: {e['type']}\ndata: {_json(e)}\n\n" for e in numbered).encode()


def _frame(event_type: str, body: dict[str, Any]) -> bytes:
    """One event-stream message: prelude (total and header lengths, their CRC32), string headers, JSON, CRC32."""
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    head = b"".join(
        bytes([len(name)]) + name.encode() + struct.pack("!BH", 7, len(value)) + value.encode()
        for name, value in headers.items()
    )
    payload = _json({**body, "p": "abcdefghijkl"}).encode()
    prelude = struct.pack("!II", 12 + len(head) + len(payload) + 4, len(head))
    message = prelude + struct.pack("!I", zlib.crc32(prelude)) + head + payload
    return message + struct.pack("!I", zlib.crc32(message))


def _converse_stream() -> bytes:
    frames = [_frame("messageStart", {"role": "assistant"})]
    frames += [
        _frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": f"w{i} "}}) for i in range(STREAM_CHUNKS)
    ]
    frames += [
        _frame("contentBlockStop", {"contentBlockIndex": 0}),
        _frame("messageStop", {"stopReason": "end_turn"}),
        _frame(
            "metadata", {"usage": {"inputTokens": 9, "outputTokens": 7, "totalTokens": 16}, "metrics": {"latencyMs": 1}}
        ),
    ]
    return b"".join(frames)


GENERATE_CONTENT = {
    "candidates": [
        {
            "content": {"parts": [{"text": "Hello! How can I help?"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 7, "totalTokenCount": 16},
    "modelVersion": "stub-model",
    "responseId": "bench",
}
"""Gemini's whole answer (``generateContent``)."""


def _gemini_stream() -> bytes:
    def chunk(i: int) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": f"w{i} "}], "role": "model"}, "index": 0}
        if i == STREAM_CHUNKS - 1:
            candidate["finishReason"] = "STOP"
        usage = {"promptTokenCount": 9, "candidatesTokenCount": i + 1, "totalTokenCount": 10 + i}
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "stub-model", "responseId": "bench"}

    return "".join(f"data: {_json(chunk(i))}\r\n\r\n" for i in range(STREAM_CHUNKS)).encode()


def _reply(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
        "x-request-id: req_bench\r\nrequest-id: req_bench\r\nconnection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


def _ok(value: Any) -> bytes:
    return _reply("200 OK", _json(value).encode())


OK = _ok(CHAT_COMPLETION)
ROUTES: dict[tuple[bytes, bool], bytes] = {
    (b"/chat/completions", False): OK,
    (b"/chat/completions", True): _reply("200 OK", _chat_stream(), "text/event-stream"),
    (b"/responses", False): _ok(RESPONSE),
    (b"/responses", True): _reply("200 OK", _responses_stream(), "text/event-stream"),
    (b"/messages", False): _ok(MESSAGE),
    (b"/messages", True): _reply("200 OK", _messages_stream(), "text/event-stream"),
    (b"/converse-stream", False): _reply("200 OK", _converse_stream(), "application/vnd.amazon.eventstream"),
    (b":streamGenerateContent", False): _reply("200 OK", _gemini_stream(), "text/event-stream"),
    (b":generateContent", False): _ok(GENERATE_CONTENT),
}
NOT_FOUND = _reply("404 Not Found", b'{"error":{"message":"not found","type":"invalid_request_error"}}')


def _answer(request_line: bytes, body: bytes) -> bytes:
    parts = request_line.split(b" ")
    if len(parts) < 2 or parts[0] != b"POST":
        return NOT_FOUND
    path = parts[1].partition(b"?")[0]
    streamed = b'"stream":true' in body or b'"stream": true' in body
    for (suffix, stream), answer in ROUTES.items():
        if stream == streamed and path.endswith(suffix):
            return answer
    return NOT_FOUND


async def _serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.split(b"\r\n")
            length = 0
            for line in header_lines:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b""
            writer.write(_answer(request_line, body))
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, asyncio.CancelledError):
        pass  # the client went away, or the server is stopping
    finally:
        writer.close()


def _watch_stdin(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    sys.stdin.read()
    loop.call_soon_threadsafe(stop.set)


async def serve(lifetime: float) -> None:
    """Serve until stdin closes or ``lifetime`` seconds pass."""
    server = await asyncio.start_server(_serve_connection, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    stop = asyncio.Event()
    threading.Thread(target=_watch_stdin, args=(asyncio.get_running_loop(), stop), daemon=True).start()
    async with server:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=lifetime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=float, default=300.0, help="stop after this many seconds")
    parser.add_argument("--cpu", type=int, default=None, help="pin the server to this CPU")
    args = parser.parse_args()
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    asyncio.run(serve(args.lifetime))


if __name__ == "__main__":
    main()
