"""Issue 16 item 4: litellm lists the models of its bundled ``model_cost`` map with their limits and flags."""

from __future__ import annotations

import llmplex


def test_item_4_litellm_lists_model_cost_entries_with_limits_and_features() -> None:
    import litellm

    models = {m.id: m for m in llmplex.Client().models("litellm")}
    expected = {name for name, entry in litellm.model_cost.items() if name != "sample_spec" and isinstance(entry, dict)}
    assert set(models) == expected
    gpt = litellm.model_cost["gpt-4o"]
    info = models["gpt-4o"]
    assert (info.context_window, info.max_output_tokens) == (gpt["max_input_tokens"], gpt["max_output_tokens"])
    assert "chat" in info.features and "tools" in info.features and "image" in info.input_parts
    embedding = models["text-embedding-3-small"]
    assert embedding.features[0] == "embeddings" and embedding.provider == "litellm"
    assert "sample_spec" not in models
