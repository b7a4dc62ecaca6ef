"""Which local model answers simple questions right, and how fast, on this machine.

Run: `python bench/local_model_quality.py [MODEL ...]` where MODEL is a name the
`llamacpp` provider knows (default: each of them) or the path of a `.gguf` file
(served with the chat template inside it).
Each model gets its own llama.cpp server (the real one, on 127.0.0.1), started
through `LocalServer.for_model` and stopped before the next model. Through
`llmplex` (`llamacpp:<model>`, temperature 0) it prints, per model:

* size: the GGUF file in MB;
* start: seconds until the server answered /health (the model load);
* first 8: how many of the eight simple one-word questions of issue 12, item 24
  it answered right; all: the same over every question below;
* median / max: warm answer time per question with `max_tokens` 32;
* tok/s: generation speed on a 64-token answer;
* tools: a call of `add` with a=7, b=5 for "What is 7 plus 5?" ("ok", "wrong
  call", or "no call"), and the answer after the tool result is sent back;
* json: structured output (`output=City`) for the capital of France.

`-v` also prints every answer that was wrong.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from dataclasses import dataclass, field

from pydantic import BaseModel
from smoke import scaled

import llmplex

QUESTIONS: tuple[tuple[str, str], ...] = (
    # The eight of the issue: a capital, a sum, a colour, ...
    ("What is the capital of France? Answer with one word.", r"\bparis\b"),
    ("What is 2 + 3? Answer with a number only.", r"\b(5|five)\b"),
    ("What colour is the sky on a clear day? Answer with one word.", r"\bblue\b"),
    ("How many legs does a spider have? Answer with a number only.", r"\b(8|eight)\b"),
    ("What is the opposite of hot? Answer with one word.", r"\bcold\b"),
    ("What is the largest planet in the solar system? Answer with one word.", r"\bjupiter\b"),
    ("Which animal says meow? Answer with one word.", r"\b(cat|kitten)s?\b"),
    ("What is the chemical formula of water? Answer with the formula only.", r"\bh\s*(2|₂)\s*o\b"),
    # A few more of the same kind.
    ("What is the capital of Japan? Answer with one word.", r"\btokyo\b"),
    ("What is 7 times 6? Answer with a number only.", r"\b(42|forty-two)\b"),
    ("What colour is grass? Answer with one word.", r"\bgreen\b"),
    ("How many days are in a week? Answer with a number only.", r"\b(7|seven)\b"),
    ("Who wrote Romeo and Juliet? Answer with the surname only.", r"\bshakespeare\b"),
    ("At how many degrees Celsius does water freeze? Answer with a number only.", r"(?<![\d.])0\b|\bzero\b"),
    ("Which language is spoken in Brazil? Answer with one word.", r"\bportuguese\b"),
    ("What is 10 minus 4? Answer with a number only.", r"\b(6|six)\b"),
)
FIRST = 8
MAX_TOKENS = 32

ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


class City(BaseModel):
    """The structured-output check's schema."""

    name: str
    country: str


@dataclass
class Figures:
    """What one model scored."""

    model: str
    size_mb: float = 0.0
    start_s: float = 0.0
    right: list[bool] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    tokens_per_s: float = 0.0
    tools: str = "-"
    json: str = "-"


def measure(ref: str) -> Figures:
    """Start `ref`'s server and run every check through ``llamacpp:<ref>``."""
    from llmplex_llamacpp.server import LocalServer

    figures = Figures(ref)
    began = time.perf_counter()
    server = LocalServer.for_model(ref)
    figures.start_s = time.perf_counter() - began
    figures.size_mb = server.model_path.stat().st_size / 1e6
    client = llmplex.Client(throttle={"max_attempts": 1})
    model = f"llamacpp:{ref}"
    try:
        client.complete(model, "Hello", max_tokens=4, temperature=0)  # warm up
        for prompt, expected in QUESTIONS[: scaled(len(QUESTIONS), 2)]:
            began = time.perf_counter()
            answer = client.complete(model, prompt, max_tokens=MAX_TOKENS, temperature=0).text
            figures.seconds.append(time.perf_counter() - began)
            ok = re.search(expected, answer, re.IGNORECASE) is not None
            figures.right.append(ok)
            if not ok:
                figures.wrong.append(f"{prompt!r} -> {answer!r}")
        figures.tokens_per_s = generation_speed(client, model)
        figures.tools = tool_round_trip(client, model)
        figures.json = structured(client, model)
    finally:
        server.stop()
    return figures


def generation_speed(client: llmplex.Client, model: str) -> float:
    """Generated tokens per second over a 64-token answer (prompt time included, it is short)."""
    began = time.perf_counter()
    response = client.complete(model, "Count from 1 to 100, separated by commas.", max_tokens=64, temperature=0)
    return response.usage.output_tokens / (time.perf_counter() - began)


def tool_round_trip(client: llmplex.Client, model: str) -> str:
    """Whether the model calls `add` right, and uses its result."""
    prompt = "What is 7 plus 5? Use the add tool."
    try:
        first = client.complete(model, prompt, tools=[ADD_TOOL], max_tokens=64, temperature=0)
        if not first.tool_calls:
            return "no call"
        call = first.tool_calls[0]
        if call.name != "add" or call.parsed_arguments() != {"a": 7, "b": 5}:
            return "wrong call"
        result = llmplex.Message.tool(call.id, "12", name="add")
        conversation = [llmplex.Message.user(prompt), first.message(), result]
        second = client.complete(model, conversation, tools=[ADD_TOOL], max_tokens=32, temperature=0)
    except llmplex.LLMError as exc:
        return f"error: {type(exc).__name__}"
    return "ok, uses result" if "12" in second.text else "ok call"


def structured(client: llmplex.Client, model: str) -> str:
    """Whether structured output parses and names Paris."""
    try:
        city = client.complete(
            model, "What is the capital of France? Answer as JSON.", output=City, max_tokens=64, temperature=0
        ).output
    except llmplex.LLMError as exc:
        return f"error: {type(exc).__name__}"
    assert isinstance(city, City)
    return "ok" if "paris" in city.name.lower() else f"wrong: {city.name!r}"


def table(rows: list[Figures]) -> str:
    """The figures as a Markdown table."""
    lines = [
        "| model | size MB | start s | first 8 | all | median s | max s | tok/s | tools | json |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for f in rows:
        lines.append(
            f"| {f.model} | {f.size_mb:.0f} | {f.start_s:.1f} | {sum(f.right[:FIRST])}/{FIRST} "
            f"| {sum(f.right)}/{len(f.right)} | {statistics.median(f.seconds):.2f} | {max(f.seconds):.2f} "
            f"| {f.tokens_per_s:.1f} | {f.tools} | {f.json} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure the models named on the command line (default: every known name)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="model names or .gguf paths")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the wrong answers")
    args = parser.parse_args(argv)
    from llmplex_llamacpp.catalogue import MODELS

    rows = []
    for ref in args.models or [model.name for model in MODELS]:
        print(f"measuring {ref} ...", file=sys.stderr, flush=True)
        figures = measure(ref)
        rows.append(figures)
        if args.verbose:
            for line in figures.wrong:
                print(f"  wrong: {line}", file=sys.stderr)
    print(table(rows))


if __name__ == "__main__":
    main()
