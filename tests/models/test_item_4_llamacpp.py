"""Issue 16 item 4: llamacpp lists the local models it serves by name, without starting a server."""

from __future__ import annotations

from llmplex_llamacpp.catalogue import DEFAULT_MODEL, MODELS
from llmplex_llamacpp.embedding_models import EMBEDDING_MODELS

import llmplex


def test_item_4_llamacpp_lists_its_catalogue_with_the_context_size() -> None:
    client = llmplex.Client(providers={"llamacpp": {"n_ctx": 2048}})
    models = client.models("llamacpp")
    chat, embedding = models[: len(MODELS)], models[len(MODELS) :]
    assert [m.id for m in chat] == [m.name for m in MODELS] and models[0].id == DEFAULT_MODEL
    assert all(m.context_window == 2048 and m.provider == "llamacpp" for m in chat)
    assert [(m.id, m.context_window) for m in embedding] == [(m.name, m.max_tokens) for m in EMBEDDING_MODELS]
    assert "the default embedding model" in embedding[0].description
    assert "the default" in models[0].description and "chat" in models[0].features
    assert client.provider_client("llamacpp")._clients == {}  # no server was started
