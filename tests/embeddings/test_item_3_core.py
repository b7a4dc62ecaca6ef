"""Issue 16 item 3: ``client.embed`` through core — batching in order, usage summed, options refused before
sending, retries, deadline and budget as for completions, typed errors, the CLI (against the mock provider)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import llmplex
from llmplex import Budget, Client, LLMBudgetExceededError, LLMConfigurationError, LLMRateLimitError
from llmplex.providers.mock import MockBackend
from llmplex.types import Embeddings
from tests.support.cli import run_llmplex


def test_item_3_embed_returns_one_vector_per_text_in_order(client: Client, mock_backend: MockBackend) -> None:
    result = client.embed("mock:embed", ["one", "two words", "three"])
    assert isinstance(result, Embeddings)
    assert len(result.vectors) == 3 and result.dimensions == 8
    assert result.provider == "mock" and result.model == "embed"
    assert result.usage.input_tokens == 4
    assert mock_backend.calls == [{"model": "embed", "embed": ["one", "two words", "three"], "dimensions": None}]
    alone = client.embed("mock:embed", "two words")
    assert alone.vectors == [result.vectors[1]]


def test_item_3_long_lists_are_split_into_batches_kept_in_order_and_usage_summed(
    client: Client, mock_backend: MockBackend
) -> None:
    texts = [f"text {i}" for i in range(19)]
    whole = client.embed("mock:embed", texts)  # the mock's batch size is 8
    assert [len(c["embed"]) for c in mock_backend.calls] == [8, 8, 3]
    assert [t for c in mock_backend.calls for t in c["embed"]] == texts
    assert whole.usage.input_tokens == 38 and whole.attempts == 3
    mock_backend.reset()
    small = client.embed("mock:embed", texts, batch_size=5)
    assert [len(c["embed"]) for c in mock_backend.calls] == [5, 5, 5, 4]
    assert small.vectors == whole.vectors
    one_by_one = [client.embed("mock:embed", t).vectors[0] for t in texts]
    assert one_by_one == whole.vectors


def test_item_3_prefix_alone_uses_the_default_embedding_model(client: Client, mock_backend: MockBackend) -> None:
    assert client.embed("mock:", "hi").model == "embed"
    assert mock_backend.calls[0]["model"] == "embed"


def test_item_3_dimensions_reach_the_provider_and_are_refused_where_unsupported(
    client: Client, mock_backend: MockBackend
) -> None:
    assert client.embed("mock:embed", "hi", dimensions=3).dimensions == 3
    assert mock_backend.calls[-1]["dimensions"] == 3
    for bad in (0, -1, 2.5, True, "8"):
        with pytest.raises(LLMConfigurationError, match="dimensions must be a positive integer"):
            client.embed("mock:embed", "hi", dimensions=bad)
    with pytest.raises(LLMConfigurationError, match="batch_size must be a positive integer"):
        client.embed("mock:embed", "hi", batch_size=0)
    assert len(mock_backend.calls) == 1


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ([], "no texts to embed"),
        (["ok", "  "], r"texts\[1\] is blank"),
        ([1], r"texts\[0\] must be a string"),
        (b"bytes", "must be a string or a list"),
        (None, "must be a string or a list"),
        (["ok", "half \ud800 a pair"], r"texts\[1\] is not valid Unicode text: surrogates not allowed at position 5"),
    ],
)
def test_item_3_bad_texts_are_typed_errors_before_sending(
    client: Client, mock_backend: MockBackend, texts: object, message: str
) -> None:
    with pytest.raises(LLMConfigurationError, match=message):
        client.embed("mock:embed", texts)  # type: ignore[arg-type]
    assert mock_backend.calls == []


def test_item_3_unknown_keyword_and_a_provider_without_embeddings_are_refused(client: Client) -> None:
    with pytest.raises(LLMConfigurationError, match="unknown keyword arguments"):
        client.embed("mock:embed", "hi", temperature=0)
    with pytest.raises(LLMConfigurationError, match="does not make embeddings"):
        client.embed("sentinel:x", "hi")


def test_item_3_a_rate_limited_batch_is_retried_and_the_others_are_not_resent(
    client: Client, mock_backend: MockBackend
) -> None:
    mock_backend.push_error(LLMRateLimitError("slow down", retry_after=0.01))
    result = client.embed("mock:embed", [f"t{i}" for i in range(10)], throttle={"base_delay": 0.01})
    assert [len(c["embed"]) for c in mock_backend.calls] == [8, 8, 2]
    assert result.attempts == 3 and len(result.vectors) == 10


def test_item_3_a_failing_batch_raises_the_typed_error_after_retries(client: Client, mock_backend: MockBackend) -> None:
    for _ in range(3):
        mock_backend.push_error(LLMRateLimitError("slow down"))
    with pytest.raises(LLMRateLimitError) as caught:
        client.embed("mock:embed", "hi", throttle={"max_attempts": 3, "base_delay": 0.001})
    assert caught.value.attempts == 3 and caught.value.provider == "mock"


def test_item_3_the_budget_caps_embeddings(client: Client, mock_backend: MockBackend) -> None:
    budget = Budget(max_input_tokens=3)
    client.embed("mock:embed", "one two", budget=budget)
    with pytest.raises(LLMBudgetExceededError):
        client.embed("mock:embed", ["many words here now", "and more"], budget=budget, batch_size=1)


def test_item_3_an_expired_deadline_stops_before_sending(client: Client, mock_backend: MockBackend) -> None:
    with pytest.raises(llmplex.LLMDeadlineExceededError):
        client.embed("mock:embed", "hi", deadline=llmplex.Deadline.after(0))
    assert mock_backend.calls == []


def test_item_3_aembed_and_module_level_embed(client: Client, mock_backend: MockBackend) -> None:
    result = asyncio.run(client.aembed("mock:embed", ["a", "b"]))
    assert result.vectors == client.embed("mock:embed", ["a", "b"]).vectors
    assert llmplex.embed("mock:embed", "a").vectors == [result.vectors[0]]
    assert asyncio.run(llmplex.aembed("mock:embed", "b")).vectors == [result.vectors[1]]


def test_item_3_mock_declares_embeddings(client: Client) -> None:
    capabilities = client.route("mock:x").provider.capabilities
    assert capabilities.embeddings and capabilities.embedding_dimensions


def test_item_3_cli_embed_prints_json_vectors_and_norms(tmp_path: Path) -> None:
    done = run_llmplex("embed", "-m", "mock:embed", "hello", "big world", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["provider"] == "mock" and len(out["vectors"]) == 2 and len(out["vectors"][0]) == 8
    assert out["vectors"] == Client().embed("mock:embed", ["hello", "big world"]).vectors
    norms = json.loads(run_llmplex("embed", "-m", "mock:", "hello", "--norms", cwd=tmp_path).stdout)
    assert norms["dimensions"] == 8 and len(norms["norms"]) == 1 and norms["norms"][0] > 0
    bad = run_llmplex("embed", "-m", "mock:", " ", cwd=tmp_path)
    assert bad.returncode != 0 and "texts[0] is blank" in bad.stderr and "Traceback" not in bad.stderr


def test_item_3_no_model_means_the_configured_default_and_a_missing_provider_is_typed(client: Client) -> None:
    assert client.config.default_embedding_model == "llamacpp:all-minilm-l6-v2"
    with pytest.raises(LLMConfigurationError, match="anthropic"):
        Client(default_embedding_model="anthropic:claude-haiku-4-5").embed(None, "hi")


def test_item_3_providers_check_lists_embeddings_as_a_capability_but_no_batch_size(client: Client) -> None:
    from llmplex.cli.providers import check_rows

    mock = next(row for row in check_rows(client) if row.prefix == "mock")
    names = mock.capabilities.split(", ")
    assert "embeddings" in names and "embedding_dimensions" in names and "embedding_batch_size" not in names
