"""Issue 16 item 3: openai embeddings — ``POST /embeddings`` bodies recorded under the real SDK (respx), replies
validated against OpenAI's OpenAPI spec; batching, dimensions, order by index, typed errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from decimal import Decimal

import httpx
import pytest
import respx

import llmplex
from llmplex import LLMAuthenticationError, LLMConfigurationError
from llmplex.testing import FakeError
from tests.conformance.openai_wire import error_body
from tests.contract.openapi import validate_openai
from tests.plugins.openai.conftest import API_KEY, OPENAI_URL

URL = OPENAI_URL + "/embeddings"


def reply(
    texts: list[str], *, reverse: bool = False, model: str = "text-embedding-3-small", dimensions: int | None = None
) -> dict[str, object]:
    size = dimensions or 3  # a server that honours dimensions= (llmplex refuses vectors of another length)
    data = [
        {"object": "embedding", "index": i, "embedding": ([float(len(t)), float(i), 0.5] + [0.0] * size)[:size]}
        for i, t in enumerate(texts)
    ]
    body = {
        "object": "list",
        "data": data[::-1] if reverse else data,
        "model": model,
        "usage": {"prompt_tokens": 2 * len(texts), "total_tokens": 2 * len(texts)},
    }
    validate_openai("CreateEmbeddingResponse", body)
    return body


def _asked(body: dict[str, object]) -> dict[str, object]:
    return {"texts": body["input"], "dimensions": body.get("dimensions")}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with respx.mock(assert_all_mocked=True) as router:
        router.post(URL).mock(
            side_effect=lambda request: httpx.Response(200, json=reply(**_asked(json.loads(request.content))))
        )
        yield router


def bodies(router: respx.MockRouter) -> list[dict[str, object]]:
    return [json.loads(call.request.content) for call in router.calls]


def test_item_3_openai_sends_the_documented_body_and_reads_vectors(api: respx.MockRouter) -> None:
    result = llmplex.Client().embed("openai:text-embedding-3-small", ["hi", "there you"])
    assert bodies(api) == [
        {"input": ["hi", "there you"], "model": "text-embedding-3-small", "encoding_format": "float"}
    ]
    assert api.calls[0].request.headers["authorization"] == f"Bearer {API_KEY}"
    assert result.vectors == [[2.0, 0.0, 0.5], [9.0, 1.0, 0.5]]
    assert result.usage.input_tokens == 4 and result.provider == "openai" and result.model == "text-embedding-3-small"


def test_item_3_openai_dimensions_and_the_default_model(api: respx.MockRouter) -> None:
    llmplex.Client().embed("openai:", "hi", dimensions=256)
    assert bodies(api) == [
        {"input": ["hi"], "model": "text-embedding-3-small", "encoding_format": "float", "dimensions": 256}
    ]


def test_item_3_openai_batches_in_order_and_sums_usage(api: respx.MockRouter) -> None:
    texts = [f"t{'x' * i}" for i in range(7)]
    result = asyncio.run(llmplex.Client().aembed("openai:text-embedding-3-large", texts, batch_size=3))
    assert [b["input"] for b in bodies(api)] == [texts[0:3], texts[3:6], texts[6:]]
    assert [v[0] for v in result.vectors] == [float(len(t)) for t in texts]
    assert result.usage.input_tokens == 14
    # priced as the model that answered (text-embedding-3-small: $0.02 per million input tokens in genai-prices)
    assert result.cost_usd == Decimal("0.02") * 14 / 1_000_000


def test_item_3_openai_vectors_follow_their_index_not_the_reply_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with respx.mock(assert_all_mocked=True) as router:
        router.post(URL).mock(return_value=httpx.Response(200, json=reply(["a", "bb", "ccc"], reverse=True)))
        result = llmplex.Client().embed("openai:text-embedding-3-small", ["a", "bb", "ccc"])
    assert [v[0] for v in result.vectors] == [1.0, 2.0, 3.0]


def test_item_3_openai_errors_are_typed_and_a_short_answer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    error = error_body(FakeError("authentication", "Incorrect API key"))
    with respx.mock(assert_all_mocked=True) as router:
        router.post(URL).mock(return_value=httpx.Response(401, json=error))
        with pytest.raises(LLMAuthenticationError):
            llmplex.Client().embed("openai:text-embedding-3-small", "hi")
    with respx.mock(assert_all_mocked=True) as router:
        router.post(URL).mock(return_value=httpx.Response(200, json=reply(["only one"])))
        with pytest.raises(llmplex.LLMServerError, match="1 embeddings for 2 texts"):
            llmplex.Client(throttle={"max_attempts": 1}).embed("openai:text-embedding-3-small", ["a", "b"])


def test_item_3_openai_without_a_key_fails_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with respx.mock(assert_all_mocked=True) as router, pytest.raises(LLMConfigurationError):
        llmplex.Client().embed("openai:text-embedding-3-small", "hi")
    assert not router.calls
