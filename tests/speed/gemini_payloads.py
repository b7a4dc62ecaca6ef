"""Payloads for the Gemini lean-request tests of issue 34 (items 2 and 4): what ``format_request`` writes for
representative llmplex requests, and raw SDK payloads the lean path must hand to the SDK.

Shared by tests/speed/test_item_2_gemini_lean.py and tests/speed/test_item_4_gemini_stream.py.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from llmplex_gemini.request import format_request
from llmplex_gemini.settings import GeminiSettings

from llmplex.types import Document, Image, Message, OutputSchema, Request, Tool, ToolCall
from tests.plugins.gemini.wire import MODEL

KEY = "AIzaSyLEANCALL_0123456789abcdefghijklm"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SIGNATURE = base64.b64encode(b"signed+thought/with?odd=bytes\xff\xfe").decode()
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SETTINGS = GeminiSettings(api_key=KEY)


def _formatted(**fields: Any) -> dict[str, Any]:
    prompt = fields.pop("prompt", "Say hi é ☃")
    messages = prompt if isinstance(prompt, list) else [Message.user(prompt)]
    return format_request(Request(model=fields.pop("model", MODEL), messages=tuple(messages), **fields), SETTINGS)


def sdk_config(**options: Any) -> dict[str, Any]:
    """An SDK payload's config: automatic function calling off (the plugin's own default), and ``options``."""
    return {"automatic_function_calling": {"disable": True}, **options}


TURN = [{"role": "user", "parts": [{"text": "hi"}]}]
LEAN_PAYLOADS: dict[str, Callable[[], dict[str, Any]]] = {
    "text": _formatted,
    "system instruction and options": lambda: _formatted(
        prompt=[Message.system("Be brief."), Message.system("Really."), Message.user("hi")],
        config={"temperature": 1, "top_p": 0.5, "max_tokens": 64, "stop": ["END"], "seed": 7},
    ),
    "penalties": lambda: _formatted(config={"presence_penalty": 0, "frequency_penalty": 0.25}),
    "tools and a forced choice": lambda: _formatted(tools=(WEATHER,), tool_choice="get_weather"),
    "tools, none chosen": lambda: _formatted(tools=(WEATHER,), tool_choice="none"),
    "structured output": lambda: _formatted(
        output=OutputSchema(
            name="a", json_schema={"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}
        ),
    ),
    "images, documents and a tool round trip": lambda: _formatted(
        model="gemini-3-pro-preview",
        prompt=[
            Message.user(["What is this?", Image.from_bytes(PNG), Image.from_url("https://example.com/a.png")]),
            Message.user([Document.from_bytes(b"%PDF-1.4 x", media_type="application/pdf")]),
            Message.assistant("Checking.", (ToolCall(id="c1", name="get_weather", arguments='{"city": "Paris"}'),)),
            Message.tool("c1", '{"forecast": "sunny"}'),
            Message.tool("c1", "not json"),
        ],
        tools=(WEATHER,),
    ),
    "reasoning effort (budget)": lambda: _formatted(config={"reasoning_effort": "low"}),
    "reasoning effort (level)": lambda: _formatted(model="gemini-3-flash-preview", config={"reasoning_effort": "high"}),
    "safety settings and thinking config": lambda: _formatted(
        provider_options={
            "safety_settings": [
                {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"},
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_ONLY_HIGH"},
            ],
            "thinking_config": {"thinking_budget": 512, "include_thoughts": True},
            "top_k": 40,
            "candidate_count": 1,
        }
    ),
    "replayed thoughts and signatures (wire names)": lambda: {
        "model": MODEL,
        "contents": [
            *TURN,
            {
                "role": "model",
                "parts": [
                    {"text": "Let me think.", "thought": True},
                    {"functionCall": {"name": "f", "args": {"a": [1, 2.5, None]}}, "thoughtSignature": SIGNATURE},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "ok"}}}]},
        ],
        "config": sdk_config(),
    },
    "signature as bytes": lambda: {
        "model": MODEL,
        "contents": [{"role": "model", "parts": [{"text": "x", "thought_signature": b"\x00\xfa\xfb"}]}, *TURN],
        "config": sdk_config(),
    },
    "no config": lambda: {"model": MODEL, "contents": TURN},
    "an empty config": lambda: {"model": MODEL, "contents": TURN, "config": {}},
    "a tuned model": lambda: {"model": "tunedModels/my-model-42", "contents": TURN, "config": sdk_config()},
    "a per-call timeout": lambda: {
        "model": MODEL,
        "contents": TURN,
        "config": sdk_config(http_options={"timeout": 1500}),
    },
    "a one-millisecond timeout": lambda: {
        "model": MODEL,
        "contents": TURN,
        "config": sdk_config(http_options={"timeout": 1}),
    },
}
SDK_PAYLOADS: dict[str, dict[str, Any]] = {
    "a response schema (the SDK's Schema)": {
        "model": MODEL,
        "contents": TURN,
        "config": {"response_schema": {"type": "OBJECT"}},
    },
    "cached content": {"model": MODEL, "contents": TURN, "config": {"cached_content": "cachedContents/abc"}},
    "a search tool": {"model": MODEL, "contents": TURN, "config": {"tools": [{"google_search": {}}]}},
    "contents as text": {"model": MODEL, "contents": "hi", "config": {}},
    "a bool temperature": {"model": MODEL, "contents": TURN, "config": {"temperature": True}},
    "a None option": {"model": MODEL, "contents": TURN, "config": {"temperature": None}},
    "an enum in lower case": {
        "model": MODEL,
        "contents": TURN,
        "config": {"tool_config": {"function_calling_config": {"mode": "any"}}},
    },
    "automatic function calling on": {"model": MODEL, "contents": TURN, "config": {"automatic_function_calling": {}}},
    "per-call headers": {"model": MODEL, "contents": TURN, "config": {"http_options": {"headers": {"x-a": "b"}}}},
    "a part the lean path does not write": {
        "model": MODEL,
        "contents": [{"role": "user", "parts": [{"executable_code": {"code": "1", "language": "PYTHON"}}]}],
    },
    "a function call with a partial field": {
        "model": MODEL,
        "contents": [{"role": "model", "parts": [{"function_call": {"name": "f", "will_continue": True}}]}],
    },
}
