"""Issue 16 item 3, live: the embedded embedding model answers with no key, and a GGUF embeds on llama.cpp.

``embed(None, ...)`` is all-MiniLM-L6-v2 (int8 ONNX from PyPI, run in this process on onnxruntime); a ``.gguf``
path runs on its own llama.cpp embedding server, here the small Gemma 3 270M with mean pooling. The sentence
pairs are the first of bench/local_embedding_quality.py, whose table is in docs/providers/llamacpp.md.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence

import pytest
from llmplex_llamacpp.model_files import SMALL_MODEL, resolve_model
from llmplex_llamacpp.server import LocalServer

import llmplex

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "LITELLM_API_KEY")

# (anchor, paraphrase, unrelated)
TRIPLES = [
    ("A man is playing a guitar.", "Someone strums a guitar on stage.", "The stock market fell sharply today."),
    ("The cat sleeps on the sofa.", "A kitten is napping on the couch.", "How do I reset my password?"),
    ("How do I reset my password?", "I forgot my login password, how can I change it?", "It is raining in London."),
    ("The train to Paris was delayed.", "Our Paris-bound train arrived late.", "She is cooking pasta for dinner."),
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert not [name for name in os.environ if name.endswith(("_API_KEY", "_TOKEN"))]


def test_item_3_the_default_embedding_model_ranks_paraphrases_above_unrelated_text(no_keys: None) -> None:
    texts = [text for triple in TRIPLES for text in triple]
    result = llmplex.embed(None, texts)
    assert (result.provider, result.model, result.dimensions) == ("llamacpp", "all-minilm-l6-v2", 384)
    assert all(abs(norm - 1.0) < 1e-4 for norm in result.norms())
    assert result.usage.input_tokens > len(texts) and result.cost_usd == 0
    for i in range(len(TRIPLES)):
        anchor, similar, unrelated = result.vectors[3 * i : 3 * i + 3]
        assert cosine(anchor, similar) > cosine(anchor, unrelated) + 0.2, TRIPLES[i]


def test_item_3_a_long_list_is_batched_in_order(no_keys: None) -> None:
    texts = [
        f"note {i}: {'short' if i % 3 else 'a much longer sentence about item number ' + str(i)}" for i in range(70)
    ]
    whole = llmplex.embed(None, texts)
    assert len(whole.vectors) == 70 and whole.attempts == 3  # batches of 32
    for index in (0, 33, 69):
        alone = llmplex.embed(None, texts[index]).vectors[0]
        assert cosine(alone, whole.vectors[index]) > 0.9999  # the same text, not its neighbour, whatever the padding


def test_item_3_async_and_the_cli_use_the_same_default(no_keys: None) -> None:
    import asyncio

    sync = llmplex.embed(None, "hello world").vectors[0]
    asynchronous = asyncio.run(llmplex.aembed(None, "hello world")).vectors[0]
    assert cosine(sync, asynchronous) > 0.9999
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [sys.executable, "-m", "llmplex", "embed", "hello world"]
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["model"] == "all-minilm-l6-v2" and cosine(out["vectors"][0], sync) > 0.9999


def test_item_3_a_gguf_embeds_on_its_own_llama_cpp_server(small_server: LocalServer, no_keys: None) -> None:
    path = str(resolve_model(SMALL_MODEL))
    client = llmplex.Client(providers={"llamacpp": {"embedding_pooling": "mean"}})
    texts = [text for triple in TRIPLES[:2] for text in triple]
    result = client.embed(f"llamacpp:{path}", texts)
    assert result.dimensions == 640 and result.model == os.path.basename(path) and len(result.vectors) == 6
    for i in range(2):
        anchor, similar, unrelated = result.vectors[3 * i : 3 * i + 3]
        assert cosine(anchor, similar) > cosine(anchor, unrelated), TRIPLES[i]
    server = LocalServer.for_model(path, pooling="mean")
    assert server.pid != small_server.pid and server.base_url.startswith("http://127.0.0.1:")
    client.embed(f"llamacpp:{path}", "again")
    assert LocalServer.for_model(path, pooling="mean") is server  # started lazily once, then reused


ABANDONED_AT_THE_DEADLINE = """
from concurrent.futures import ThreadPoolExecutor
import llmplex
texts = [f"text {i}" for i in range(200)]
with ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda text: llmplex.embed(None, text), texts))
try:
    llmplex.embed(None, texts * 50, timeout=0.2)
except llmplex.LLMDeadlineExceededError:
    print("deadline")
"""


def test_item_3_a_run_left_at_the_deadline_does_not_abort_the_interpreter_exit(no_keys: None) -> None:
    # Without the exit wait, onnxruntime torn down under a still-running batch aborts the process (exit 134).
    command = [sys.executable, "-c", ABANDONED_AT_THE_DEADLINE]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.strip()) == (0, "deadline"), done.stderr[-2000:]
