"""Issue 12 item 24, live: the default local model answers simple questions right, through the API and the CLI.

`llamacpp:` with no model named is Qwen2.5-Coder-1.5B-Instruct (the shared session server of conftest.py).
The questions are of the kind bench/local_model_quality.py measures; its table is in docs/providers/llamacpp.md.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from llmplex_llamacpp.server import LocalServer

import llmplex

SIMPLE_QUESTIONS = [
    ("Capital of France? Answer with one word.", r"\bParis\b"),
    ("What is 2 + 3? Answer with a number only.", r"\b5\b"),
    ("What colour is the sky on a clear day? Answer with one word.", r"\bblue\b"),
    ("How many legs does a spider have? Answer with a number only.", r"\b8\b"),
    ("Which animal says meow? Answer with one word.", r"\bcat\b"),
]


@pytest.mark.parametrize(("question", "expected"), SIMPLE_QUESTIONS)
def test_item_24_default_model_answers_simple_questions(
    local_server: LocalServer, question: str, expected: str
) -> None:
    response = llmplex.Client().complete(None, question, max_tokens=32, temperature=0)
    assert response.provider == "llamacpp"
    assert response.model == "qwen2.5-coder-1.5b"
    assert re.search(expected, response.text, re.IGNORECASE), response.text
    assert response.finish_reason == "stop"  # an instruction-tuned model ends its answer by itself


def test_item_24_default_model_streams_an_answer(local_server: LocalServer) -> None:
    events = list(llmplex.Client().stream(None, "Capital of Japan? Answer with one word.", temperature=0))
    final = events[-1].response
    assert final is not None
    assert final.text == "".join(e.text for e in events if e.type == "text")
    assert "Tokyo" in final.text


def test_item_24_cli_complete_with_no_model_answers_right(local_server: LocalServer) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "llmplex", "complete", "Capital of France? Answer with one word."],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Paris" in result.stdout
    assert "qwen2.5-coder-1.5b" in result.stderr  # item 21 names the model that answered
