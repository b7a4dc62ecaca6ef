"""A minimal OpenAI-compatible HTTP/1.1 server for benchmarks (standard library only).

``POST /v1/chat/completions`` answers with one fixed ``chat.completion`` body and
``POST /v1/responses`` with one fixed Responses API ``response``, at once, on
keep-alive connections; anything else gets 404. It binds 127.0.0.1 on an
ephemeral port, prints ``PORT <n>`` on stdout, and stops when stdin closes or
after ``--lifetime`` seconds, whichever comes first.

    python bench/openai_stub_server.py --lifetime 300
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading

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
    "id": "resp_bench0000000000000000000000000000",
    "object": "response",
    "created_at": 1741569952,
    "status": "completed",
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "model": "stub-model",
    "output": [
        {
            "type": "message",
            "id": "msg_bench0000000000000000000000000000",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello! How can I help?", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": {
        "input_tokens": 9,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 16,
    },
    "user": None,
    "metadata": {},
}


def _reply(status: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "x-request-id: req_bench\r\nconnection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


OK = _reply("200 OK", json.dumps(CHAT_COMPLETION, separators=(",", ":")).encode())
OK_RESPONSES = _reply("200 OK", json.dumps(RESPONSE, separators=(",", ":")).encode())
NOT_FOUND = _reply("404 Not Found", b'{"error":{"message":"not found","type":"invalid_request_error"}}')


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
            if length:
                await reader.readexactly(length)
            parts = request_line.split(b" ")
            path = parts[1].partition(b"?")[0] if len(parts) > 1 and parts[0] == b"POST" else b""
            if path.endswith(b"/chat/completions"):
                writer.write(OK)
            elif path.endswith(b"/responses"):
                writer.write(OK_RESPONSES)
            else:
                writer.write(NOT_FOUND)
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
    server = await asyncio.start_server(_serve_connection, "127.0.0.1", 0, backlog=256)
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
    asyncio.run(serve(parser.parse_args().lifetime))


if __name__ == "__main__":
    main()
