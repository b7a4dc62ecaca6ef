"""Issue 16 item 3, fresh-clone run 22: the exit waits for a local embedding run from its tokenizing on.

A run abandoned at a deadline goes on in a daemon worker. The exit used to
wait only for ``session.run``: a worker still in the tokenizer when the exit
began came back into a finalizing interpreter, and the process aborted
("FATAL: exception not rethrown", exit -6) in the sdk-lowest-llamacpp env.
Fakes stand in for the tokenizer and the session, so each step is held open.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from llmplex_llamacpp import onnx_embedder
from llmplex_llamacpp.embedding_models import ALL_MINILM_L6_V2
from llmplex_llamacpp.errors import LocalModelError
from llmplex_llamacpp.onnx_embedder import OnnxEmbedder

WAIT = 10.0


class _HeldTokenizer:
    """Tokenizes one token per text, after the test lets it go on."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.go_on = threading.Event()

    def encode_batch(self, texts: list[str]) -> list[Any]:
        self.entered.set()
        assert self.go_on.wait(WAIT)
        return [SimpleNamespace(ids=[1], attention_mask=[1]) for _ in texts]


class _Session:
    def get_inputs(self) -> list[Any]:
        return [SimpleNamespace(name="input_ids"), SimpleNamespace(name="attention_mask")]

    def run(self, _names: Any, feed: dict[str, Any]) -> list[Any]:
        return [np.ones((len(feed["input_ids"]), 1, 3), dtype=np.float32)]


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Any:
    fresh = onnx_embedder._NativeRuns()
    monkeypatch.setattr(onnx_embedder, "_runs", fresh)
    return fresh


def test_item_3_the_exit_waits_for_a_run_still_in_the_tokenizer(runs: Any) -> None:
    tokenizer = _HeldTokenizer()
    embedder = OnnxEmbedder(ALL_MINILM_L6_V2, _Session(), tokenizer)
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(embedder.embed(["a", "b"])), daemon=True)
    worker.start()
    assert tokenizer.entered.wait(WAIT)
    exiting = threading.Thread(target=runs.wait_at_exit, args=(WAIT,), daemon=True)
    exiting.start()
    exiting.join(0.3)
    assert exiting.is_alive(), "the exit went on while a run was in the tokenizer"
    tokenizer.go_on.set()
    exiting.join(WAIT)
    worker.join(WAIT)
    assert not exiting.is_alive()
    vectors, tokens = results[0]
    assert tokens == 2 and len(vectors) == 2


def test_item_3_no_run_starts_once_the_exit_waits(runs: Any) -> None:
    tokenizer = _HeldTokenizer()
    tokenizer.go_on.set()
    embedder = OnnxEmbedder(ALL_MINILM_L6_V2, _Session(), tokenizer)
    runs.wait_at_exit(WAIT)
    with pytest.raises(LocalModelError, match="the interpreter is exiting"):
        embedder.embed(["a"])
    assert not tokenizer.entered.is_set()


def test_item_3_a_failed_run_is_no_longer_counted(runs: Any) -> None:
    embedder = OnnxEmbedder(ALL_MINILM_L6_V2, _Session(), SimpleNamespace(encode_batch=_refuse))
    with pytest.raises(ValueError, match="bad text"):
        embedder.embed(["a"])
    done = threading.Thread(target=runs.wait_at_exit, args=(WAIT,), daemon=True)
    done.start()
    done.join(WAIT)
    assert not done.is_alive()


def _refuse(_texts: list[str]) -> list[Any]:
    raise ValueError("bad text")
