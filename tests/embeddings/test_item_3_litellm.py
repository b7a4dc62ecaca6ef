"""Issue 16 item 3: litellm embeddings — ``litellm.embedding`` on its OpenAI-compatible route against a local
server recording the exact ``POST /embeddings`` bodies (whatever transport LiteLLM picks, httpx or aiohttp),
replies validated against OpenAI's OpenAPI spec."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import llmplex
from tests.contract.openapi import validate_openai

KEY = "sk-test-litellm-embed-7a6b5c"


def reply(texts: list[str]) -> dict[str, object]:
    body = {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": [float(len(t)), 0.25]} for i, t in enumerate(texts)],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
    }
    validate_openai("CreateEmbeddingResponse", body)
    return body


class Server(ThreadingHTTPServer):
    """Answers ``POST /v1/embeddings`` (or ``status`` with an error body) and records each request."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.bodies.append(body)
        self.server.headers.append({k.lower(): v for k, v in self.headers.items()})
        if self.path != "/v1/embeddings" or self.server.status != 200:
            status = 404 if self.path != "/v1/embeddings" else self.server.status
            answer: dict[str, Any] = {
                "error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}
            }
        else:
            status, answer = 200, reply(body["input"])
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[Server]:
    server = Server()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def llm(api: Server) -> llmplex.Client:
    return llmplex.Client(providers={"litellm": {"api_base": api.base, "api_key": KEY}}, throttle={"max_attempts": 1})


def test_item_3_litellm_sends_the_openai_body_and_reads_vectors(api: Server, llm: llmplex.Client) -> None:
    result = llm.embed("litellm:", ["ab", "abcd"], dimensions=2)
    (body,) = api.bodies
    assert body["input"] == ["ab", "abcd"] and body["model"] == "text-embedding-3-small" and body["dimensions"] == 2
    assert api.headers[0]["authorization"] == f"Bearer {KEY}"
    assert result.vectors == [[2.0, 0.25], [4.0, 0.25]]
    assert result.provider == "litellm" and result.usage.input_tokens == 2


def test_item_3_litellm_batches_keep_order_async(api: Server, llm: llmplex.Client) -> None:
    texts = ["a" * n for n in range(1, 6)]
    result = asyncio.run(llm.aembed("litellm:openai/text-embedding-3-small", texts, batch_size=2))
    assert [b["input"] for b in api.bodies] == [texts[0:2], texts[2:4], texts[4:]]
    assert [v[0] for v in result.vectors] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert result.usage.input_tokens == 5


def test_item_3_litellm_server_errors_are_typed(api: Server, llm: llmplex.Client) -> None:
    api.status = 503
    with pytest.raises(llmplex.LLMServerError) as caught:
        llm.embed("litellm:openai/text-embedding-3-small", "hi")
    assert KEY not in str(caught.value) and len(api.bodies) == 1
