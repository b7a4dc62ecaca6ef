"""Issue 12 item 23: every Python block of the README and the docs runs as written, as a script.

A page's blocks run in order in one namespace (a page reads as one script), each
compiled as a module, so a top-level ``await`` fails as it would in a user's
file. Every provider prefix a page names is served by the mock provider (the
model is swapped, nothing leaves the process); an HTML comment just above a
block may script what the model answers, one answer a line::

    <!-- mock answers:
    {"name": "Paris", "country": "France"}
    tool weather {"city": "Paris"}
    It is sunny in Paris.
    -->

(``tool NAME ARGUMENTS`` answers with that tool call, any other line is the
answer's text; every scripted answer must be used). A block that cannot run
here says so and why: ``<!-- not runnable: REASON -->``.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.providers.mock import MockBackend
from tests.docs.markdown import DOCS, README, ROOT, Block, blocks, expand

PAGES = [README, *sorted(p for p in DOCS.rglob("*.md") if "examples" not in p.relative_to(DOCS).parts)]
SWAPPED = ("openai", "anthropic", "gemini", "litellm", "llamacpp", "claude-code", "echo", "azure", "bedrock", "vertex")
SWAPPED += ("mistral", "groq", "deepseek", "openrouter", "xai", "together", "fireworks", "ollama", "vllm", "lmstudio")
NOT_RUNNABLE = "not runnable:"
ANSWERS = "mock answers:"


def python_blocks(page: Path) -> list[Block]:
    return [b for b in blocks(expand(page.read_text(encoding="utf-8"))) if b.language == "python"]


def scripted(block: Block) -> list[dict[str, Any]]:
    """The mock answers a block's comment scripts, as ``MockBackend.push`` keywords."""
    answers: list[dict[str, Any]] = []
    for note in block.notes:
        if note.startswith(ANSWERS):
            for line in note[len(ANSWERS) :].strip().splitlines():
                if line.startswith("tool "):
                    _, name, arguments = line.split(" ", 2)
                    json.loads(arguments)
                    answers.append({"tool_calls": [{"name": name, "arguments": arguments}]})
                elif line.strip():
                    answers.append({"text": line.strip()})
    return answers


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> deque[dict[str, Any]]:
    """Swap every provider to the mock; the queue returned answers (in order) whatever backend is asked."""
    config = tmp_path / "swap.toml"
    config.write_text("".join(f'[providers.{name}]\nplugin = "mock"\n' for name in SWAPPED), encoding="utf-8")
    monkeypatch.setenv("LLMPLEX_CONFIG", str(config))
    llmplex.process_client._default = None
    queue: deque[dict[str, Any]] = deque()
    take = MockBackend.take

    def take_scripted(self: MockBackend, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        if queue and not self._script:
            self.push(**queue.popleft())
        return take(self, payload)

    monkeypatch.setattr(MockBackend, "take", take_scripted)
    return queue


def run_page(page: Path, answers: deque[dict[str, Any]]) -> list[str]:
    """Run the Python blocks of ``page`` in order in one namespace; what went wrong, if anything."""
    llmplex.process_client._default = None  # each page starts from a fresh default client, as a new script would
    namespace: dict[str, Any] = {"__name__": "__main__"}
    problems = []
    for block in python_blocks(page):
        where = f"{page.relative_to(ROOT)}, the Python block at line {block.line}"
        reasons = [n[len(NOT_RUNNABLE) :].strip() for n in block.notes if n.startswith(NOT_RUNNABLE)]
        if reasons:
            if not all(reasons):
                problems.append(f"{where}: say why it cannot run")
            continue
        try:
            code = compile(block.code, where, "exec")
        except SyntaxError as exc:
            problems.append(f"{where} is not a script ({exc.msg}, its line {exc.lineno}): wrap awaits in asyncio.run")
            break  # the page's later blocks may need this one's names
        answers.extend(scripted(block))
        try:
            exec(code, namespace)
        except Exception as exc:
            problems.append(f"{where} raised {type(exc).__name__}: {exc}")
            break
        if answers:
            problems.append(f"{where}: {len(answers)} scripted answers were never asked for")
            answers.clear()
    return problems


def test_item_23_every_python_block_runs_or_says_why_not(
    answers: deque[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert python_blocks(README), "the README shows Python"
    problems = [problem for page in PAGES for problem in run_page(page, answers)]
    capsys.readouterr()
    assert not problems, "\n".join(problems)
