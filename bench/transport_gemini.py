"""The Gemini rows of bench/transport.py: ``streamGenerateContent?alt=sse`` on the stub server.

The yardstick posts the same JSON with raw ``httpx`` and reads the event stream by hand (each ``data:`` line's
JSON decoded, the chunks with text yielded); beside it the google-genai SDK's ``generate_content_stream``
and llmplex's stream through the ``localg`` instance (llmplex-gemini's lean stream), sync and async.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from transport_cases import MODEL, PROMPT, AsyncStream, Cases, _atext

BODY = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
HEADERS = {"x-goog-api-key": "bench", "content-type": "application/json"}


def _text(line: str) -> Any:
    """The decoded chunk of a ``data:`` line that carries text, else ``None``."""
    if not line.startswith("data:"):
        return None
    chunk = json.loads(line[5:])
    candidates = chunk.get("candidates") or ()
    parts = (candidates[0].get("content") or {}).get("parts") or () if candidates else ()
    return chunk if any(part.get("text") for part in parts) else None


def _raw(client: Any, url: str) -> Iterator[object]:
    with client.stream("POST", url, json=BODY) as response:
        for line in response.iter_lines():
            if (chunk := _text(line)) is not None:
                yield chunk


async def _araw(client: Any, url: str) -> AsyncIterator[object]:
    async with client.stream("POST", url, json=BODY) as response:
        async for line in response.aiter_lines():
            if (chunk := _text(line)) is not None:
                yield chunk


def add(root: str, cases: Cases) -> None:
    """The Gemini stream rows: raw httpx (the yardstick), the google-genai SDK, llmplex."""
    import httpx
    from google import genai
    from google.genai import types

    import llmplex

    url = f"{root}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    client = httpx.Client(headers=HEADERS)
    cases.closers.append(client.close)
    cases.streams["raw httpx SSE (gemini)"] = lambda: _raw(client, url)

    def araw() -> AsyncStream:
        aclient = httpx.AsyncClient(headers=HEADERS)
        cases.aclosers.append(aclient.aclose)
        return lambda: _araw(aclient, url)

    cases.astreams["raw httpx SSE (async gemini)"] = araw
    options = types.HttpOptions(base_url=root, retry_options=types.HttpRetryOptions(attempts=1))
    sdk = genai.Client(api_key="bench", http_options=options)
    cases.closers.append(sdk.close)
    cases.streams["google-genai SDK gemini"] = lambda: (
        chunk for chunk in sdk.models.generate_content_stream(model=MODEL, contents=PROMPT) if chunk.text
    )

    def asdk() -> AsyncStream:
        aio = genai.Client(api_key="bench", http_options=options).aio
        cases.aclosers.append(aio.aclose)

        async def chunks() -> AsyncIterator[object]:
            async for chunk in await aio.models.generate_content_stream(model=MODEL, contents=PROMPT):
                if chunk.text:
                    yield chunk

        return chunks

    cases.astreams["google-genai SDK gemini"] = asdk
    model = f"localg:{MODEL}"
    cases.streams["llmplex gemini"] = lambda: (event for event in llmplex.stream(model, PROMPT) if event.type == "text")
    cases.astreams["llmplex gemini"] = lambda: lambda: _atext(llmplex.astream(model, PROMPT))
