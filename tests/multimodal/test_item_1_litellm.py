"""Issue 16 item 1: the litellm plugin gives LiteLLM the OpenAI Chat Completions parts.

Over LiteLLM's OpenAI-compatible route to a local recording server, the body
that reaches the wire holds the parts in OpenAI's shape and validates against
the OpenAPI spec; a document by URL is refused before LiteLLM is called.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.testing import media
from tests.contract.openapi import validate_openai
from tests.multimodal.cases import CASE_IDS, CASES, CHAT_PARTS, PROMPT, b64, make
from tests.plugins.litellm.conftest import llm, server
from tests.support.fault_server import FaultServer

MODEL = "litellm:openai/gpt-4o"

__all__ = ["llm", "server"]  # the litellm suite's fixtures: a fault server and a client on it


@pytest.mark.parametrize(("kind", "source"), CASES, ids=CASE_IDS)
def test_item_1_litellm_sends_openai_chat_parts(
    llm: llmplex.Client, server: FaultServer, tmp_path: Path, kind: str, source: str
) -> None:
    part = make(kind, source, tmp_path)
    if (kind, source) == ("document", "url"):
        with pytest.raises(LLMConfigurationError, match=r"litellm takes a document only as bytes"):
            llm.complete(MODEL, [PROMPT, part])
        assert server.request_count == 0, "refused before anything was sent"
        return
    llm.complete(MODEL, [PROMPT, part])
    body = server.requests[-1].body
    assert isinstance(body, dict)
    validate_openai("CreateChatCompletionRequest", body)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": PROMPT}, CHAT_PARTS[kind, source]]}
    ]


def test_item_1_litellm_sends_mp3_with_its_format(llm: llmplex.Client, server: FaultServer) -> None:
    llm.complete(MODEL, [llmplex.Audio.from_bytes(media.MP3)])
    body = server.requests[-1].body
    assert isinstance(body, dict)
    assert body["messages"][0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": b64(media.MP3), "format": "mp3"}}
    ]
