"""How well local embedding models tell paraphrases from unrelated sentences, and how fast, on this machine.

Run: `python bench/local_embedding_quality.py [MODEL ...]` where MODEL is what
`llmplex.embed` takes (default: `llamacpp:all-minilm-l6-v2`, the keyless
default), for example `llamacpp:/path/model.gguf` for a GGUF on llama.cpp's
embedding server (`--pooling mean|cls|last|model` sets `embedding_pooling`), or
`onnx:/path/model.onnx` for any BERT-style sentence-embedding ONNX file run
the way the default is (the default's vocabulary, mean pooling).

Twelve pairs of sentences that mean the same; each first sentence ranks the
twelve second ones by cosine similarity. Per model it prints:

* top-1: anchors whose own paraphrase ranks first (of 12);
* pos / neg: mean cosine with the paraphrase / with the eleven others;
* gap: the smallest margin of a paraphrase over the best other sentence
  (negative when some anchor prefers an unrelated sentence);
* dim: the vector length; load s: the first call (loading the model, or
  starting its server); warm ms: the median of 5 calls embedding all 24 texts.
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import llmplex

PAIRS: tuple[tuple[str, str], ...] = (
    ("A man is playing a guitar.", "Someone strums a guitar on stage."),
    ("The cat sleeps on the sofa.", "A kitten is napping on the couch."),
    ("How do I reset my password?", "I forgot my login password, how can I change it?"),
    ("The stock market fell sharply today.", "Share prices dropped a lot this afternoon."),
    ("It is raining heavily in London.", "There is a downpour in London right now."),
    ("She is cooking pasta for dinner.", "She is making spaghetti for the evening meal."),
    ("The train to Paris was delayed.", "Our Paris-bound train arrived late."),
    ("Python is a popular programming language.", "Many developers write code in Python."),
    ("The doctor prescribed antibiotics.", "The physician gave me a course of antibiotics."),
    ("Children are playing football in the park.", "Kids kick a ball around on the grass in the park."),
    ("The laptop battery drains too quickly.", "My notebook computer runs out of charge fast."),
    ("We are planning a trip to the mountains.", "We want to go hiking in the Alps."),
)

Embed = Callable[[list[str]], list[list[float]]]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def through_llmplex(model: str, pooling: str) -> Embed:
    client = llmplex.Client(providers={"llamacpp": {"embedding_pooling": pooling}})
    return lambda texts: client.embed(model, texts).vectors


def onnx_file(path: str) -> Embed:
    """An ONNX file run as the default model is (its vocabulary, mean pooling), without the pinned hash."""
    from llmplex_llamacpp.embedding_models import ALL_MINILM_L6_V2
    from llmplex_llamacpp.onnx_embedder import OnnxEmbedder

    embedder = OnnxEmbedder.from_file(Path(path), ALL_MINILM_L6_V2)
    return lambda texts: embedder.embed(texts)[0]


def measure(label: str, make: Callable[[], Embed]) -> str:
    anchors, paraphrases = [a for a, _ in PAIRS], [p for _, p in PAIRS]
    started = time.perf_counter()
    embed = make()
    vectors = embed(anchors + paraphrases)
    load = time.perf_counter() - started
    warm = []
    for _ in range(5):
        started = time.perf_counter()
        embed(anchors + paraphrases)
        warm.append(time.perf_counter() - started)
    n = len(PAIRS)
    sims = [[cosine(vectors[i], vectors[n + j]) for j in range(n)] for i in range(n)]
    top1 = sum(row.index(max(row)) == i for i, row in enumerate(sims))
    pos = statistics.mean(sims[i][i] for i in range(n))
    neg = statistics.mean(sims[i][j] for i in range(n) for j in range(n) if i != j)
    gap = min(sims[i][i] - max(sims[i][j] for j in range(n) if j != i) for i in range(n))
    return (
        f"| {label} | {top1}/{n} | {pos:.3f} | {neg:.3f} | {gap:+.3f} | {len(vectors[0])} "
        f"| {load:.1f} | {statistics.median(warm) * 1000:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["llamacpp:all-minilm-l6-v2"])
    parser.add_argument("--pooling", default="model", choices=("model", "mean", "cls", "last"))
    args = parser.parse_args()
    print("| model | top-1 | pos | neg | gap | dim | load s | warm ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for model in args.models:
        if model.startswith("onnx:"):
            make = functools.partial(onnx_file, model.removeprefix("onnx:"))
        else:
            make = functools.partial(through_llmplex, model, args.pooling)
        label = model if model.startswith(("onnx:", "llamacpp:all")) else f"{model} ({args.pooling} pooling)"
        print(measure(label, make), flush=True)


if __name__ == "__main__":
    main()
