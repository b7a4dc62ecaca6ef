"""Issue 26 item 6: every OpenAI-compatible preset passes the HTTP conformance kit, on the kit's own
``llmplex.testing.OpenAIChatWire`` (as a third-party plugin would run it)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from llmplex_openai_compatible.quirks import alnum9

from llmplex.testing import FakeError, HTTPConformanceTests, OpenAIChatWire, Received, SentRequest, WireAdapter
from llmplex.testing.kit_base import PARALLEL_CALLS, WEATHER_CALL


class TopLevelErrorWire(OpenAIChatWire):
    """Mistral and vLLM answer errors at the top level: ``{"object": "error", "message", "type", "param", "code"}``."""

    def error_body(self, error: FakeError) -> dict[str, Any]:
        return {"object": "error", **super().error_body(error)["error"]}


class OutOfCreditWire(OpenAIChatWire):
    """OpenRouter and DeepSeek answer HTTP 402 when the account is out of credit; OpenRouter's errors carry the
    status as ``code`` and a ``metadata`` object (its API reference, "Errors")."""

    def __init__(self, shape: str) -> None:
        self.shape = shape

    def error_status(self, error: FakeError) -> int:
        return 402 if error.kind == "quota" else super().error_status(error)

    def error_body(self, error: FakeError) -> dict[str, Any]:
        if self.shape == "openrouter":
            return {"error": {"code": self.error_status(error), "message": error.message, "metadata": {}}}
        if error.kind == "quota":  # DeepSeek's error codes page: 402 Insufficient Balance
            return {"error": {"message": error.message, "type": "unknown_error", "param": None, "code": "402"}}
        return super().error_body(error)


class XaiErrorWire(OpenAIChatWire):
    """xAI answers ``{"code": "<what went wrong>", "error": "<message>"}``."""

    def error_body(self, error: FakeError) -> dict[str, Any]:
        body = super().error_body(error)["error"]
        if error.kind == "quota":
            return {"error": body}  # xAI documents no credit error of its own: OpenAI's shape
        return {"code": "Client specified an invalid argument", "error": error.message}


class _PresetKit(HTTPConformanceTests):
    wire: ClassVar[WireAdapter] = OpenAIChatWire()
    base_path: ClassVar[str] = "/v1"
    model = "kit-model"
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    input_parts = frozenset({"image"})


class MistralWire(TopLevelErrorWire):
    """Mistral takes only 9-character alphanumeric tool-call ids: every id sent must be one; the kit's own ids
    are read back from them (the preset derives them from the originals), so every other check still holds."""

    KIT_IDS: ClassVar[dict[str, str]] = {alnum9(c.id): c.id for c in (WEATHER_CALL, *PARALLEL_CALLS) if c.id}

    def read_request(self, received: Received) -> SentRequest:
        sent = super().read_request(received)
        messages = []
        for message in sent.messages:
            ids = [c.id for c in message.tool_calls] + ([message.tool_call_id] if message.tool_call_id else [])
            assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i or "") for i in ids), f"not a Mistral tool-call id: {ids}"
            calls = tuple(dataclasses.replace(c, id=self.KIT_IDS.get(c.id or "", c.id)) for c in message.tool_calls)
            call_id = self.KIT_IDS.get(message.tool_call_id or "", message.tool_call_id)
            messages.append(dataclasses.replace(message, tool_calls=calls, tool_call_id=call_id))
        options = dict(sent.options)
        if "random_seed" in sent.raw:  # Mistral's name for the seed
            options["seed"] = sent.raw["random_seed"]
        return dataclasses.replace(sent, messages=tuple(messages), options=options)


class TestItem6MistralKit(_PresetKit):
    prefix = "mistral"
    model = "mistral-small-latest"
    wire: ClassVar[WireAdapter] = MistralWire()


class TestItem6GroqKit(_PresetKit):
    prefix = "groq"


class TestItem6DeepSeekKit(_PresetKit):
    prefix = "deepseek"
    model = "deepseek-chat"
    supports_native_structured_output = False
    input_parts = frozenset()
    wire: ClassVar[WireAdapter] = OutOfCreditWire("deepseek")


class TestItem6OpenRouterKit(_PresetKit):
    prefix = "openrouter"
    wire: ClassVar[WireAdapter] = OutOfCreditWire("openrouter")


class TestItem6XaiKit(_PresetKit):
    prefix = "xai"
    model = "grok-2"
    wire: ClassVar[WireAdapter] = XaiErrorWire()


class TestItem6TogetherKit(_PresetKit):
    prefix = "together"


class TestItem6FireworksKit(_PresetKit):
    prefix = "fireworks"


class TestItem6OllamaKit(_PresetKit):
    prefix = "ollama"


class TestItem6VllmKit(_PresetKit):
    prefix = "vllm"
    wire: ClassVar[WireAdapter] = TopLevelErrorWire()


class TestItem6LmStudioKit(_PresetKit):
    prefix = "lmstudio"


class TestItem6ConfigOnlyProviderKit(_PresetKit):
    """The preset-less provider a config table fills (``base_url``, a key, quirks); another prefix routed to it
    with ``plugin = "openai-compatible"`` is the same instance under its own name (test_item_2_*)."""

    prefix = "openai-compatible"
    settings = {"unsupported_options": ["reasoning_effort"]}
