"""Recorded answers, shaped as each provider documents them (whole and streamed), with cached and reasoning tokens.

Every answer of one provider reports the same usage whole and streamed, so that a
golden test can price both against one figure computed by hand.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "ANTHROPIC_MESSAGE",
    "ANTHROPIC_STREAM",
    "CHAT_COMPLETION",
    "CHAT_STREAM",
    "GEMINI_RESPONSE",
    "GEMINI_STREAM",
    "RESPONSES_RESPONSE",
    "RESPONSES_STREAM",
    "chat_completion",
    "chat_stream",
    "sse",
]

Json = dict[str, Any]


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


# -- OpenAI Chat Completions (platform.openai.com/docs/api-reference/chat/object and .../chat-streaming) ----------

CHAT_USAGE: Json = {
    "prompt_tokens": 2006,
    "completion_tokens": 300,
    "total_tokens": 2306,
    "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 256,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}


def chat_completion(model: str, usage: Json | None = CHAT_USAGE) -> Json:
    """A ``chat.completion`` object from ``model`` (``usage=None``: a server that reports none)."""
    body: Json = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Paris.", "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "service_tier": "default",
        "system_fingerprint": None,
    }
    if usage is not None:
        body["usage"] = usage
    return body


def _chunk(model: str, delta: Json | None, finish: str | None = None, usage: Json | None = None) -> Json:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion.chunk",
        "created": 1741569952,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": None,
        "choices": choices,
        "usage": usage,
    }


def chat_stream(model: str, usage: Json | None = CHAT_USAGE) -> list[bytes]:
    """The same answer streamed with ``stream_options.include_usage``: the last chunk has no choices, only usage."""
    chunks = [
        _chunk(model, {"role": "assistant", "content": "", "refusal": None}),
        _chunk(model, {"content": "Par"}),
        _chunk(model, {"content": "is."}),
        _chunk(model, {}, finish="stop"),
    ]
    if usage is not None:
        chunks.append(_chunk(model, None, usage=usage))
    return [*(sse(c) for c in chunks), sse("[DONE]")]


CHAT_COMPLETION = chat_completion("o4-mini-2025-04-16")
CHAT_STREAM = chat_stream("o4-mini-2025-04-16")

# -- OpenAI Responses (platform.openai.com/docs/api-reference/responses/object and .../responses-streaming) -------

_RESPONSE: Json = {
    "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    "object": "response",
    "created_at": 1741476542,
    "status": "completed",
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "model": "gpt-5-mini-2025-08-07",
    "output": [
        {"type": "reasoning", "id": "rs_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b", "summary": []},
        {
            "type": "message",
            "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Paris.", "annotations": []}],
        },
    ],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": "medium", "summary": None},
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": {
        "input_tokens": 3072,
        "input_tokens_details": {"cached_tokens": 2048},
        "output_tokens": 500,
        "output_tokens_details": {"reasoning_tokens": 448},
        "total_tokens": 3572,
    },
    "user": None,
    "metadata": {},
}
RESPONSES_RESPONSE = _RESPONSE
_MESSAGE_ITEM = _RESPONSE["output"][1]
_STARTED = {**_RESPONSE, "status": "in_progress", "output": [], "usage": None}
RESPONSES_STREAM = [
    sse(event, str(event["type"]))
    for event in (
        {"type": "response.created", "sequence_number": 0, "response": _STARTED},
        {"type": "response.in_progress", "sequence_number": 1, "response": _STARTED},
        {
            "type": "response.output_item.added",
            "sequence_number": 2,
            "output_index": 1,
            "item": {**_MESSAGE_ITEM, "status": "in_progress", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 3,
            "item_id": _MESSAGE_ITEM["id"],
            "output_index": 1,
            "content_index": 0,
            "delta": "Par",
            "logprobs": [],
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 4,
            "item_id": _MESSAGE_ITEM["id"],
            "output_index": 1,
            "content_index": 0,
            "delta": "is.",
            "logprobs": [],
        },
        {
            "type": "response.output_text.done",
            "sequence_number": 5,
            "item_id": _MESSAGE_ITEM["id"],
            "output_index": 1,
            "content_index": 0,
            "text": "Paris.",
            "logprobs": [],
        },
        {"type": "response.output_item.done", "sequence_number": 6, "output_index": 1, "item": _MESSAGE_ITEM},
        {"type": "response.completed", "sequence_number": 7, "response": _RESPONSE},
    )
]

# -- Anthropic Messages (docs.anthropic.com/en/api/messages and .../messages-streaming) ----------------------------

ANTHROPIC_MESSAGE: Json = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "Paris."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 50,
        "cache_creation_input_tokens": 1200,
        "cache_read_input_tokens": 3000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1200, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 400,
        "service_tier": "standard",
    },
}
_START_USAGE = {**ANTHROPIC_MESSAGE["usage"], "output_tokens": 1}
ANTHROPIC_STREAM = [
    sse(event, str(event["type"]))
    for event in (
        {
            "type": "message_start",
            "message": {**ANTHROPIC_MESSAGE, "content": [], "stop_reason": None, "usage": _START_USAGE},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Par"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "is."}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 400},
        },
        {"type": "message_stop"},
    )
]

# -- Gemini generateContent (ai.google.dev/api/generate-content#v1beta.GenerateContentResponse) --------------------

GEMINI_USAGE: Json = {
    "promptTokenCount": 4200,
    "candidatesTokenCount": 60,
    "totalTokenCount": 4640,
    "cachedContentTokenCount": 4096,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 4200}],
    "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 4096}],
    "thoughtsTokenCount": 380,
}


def _gemini(text: str, usage: Json, finish: str | None = "STOP") -> Json:
    candidate: Json = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mOTGaKqlHtmDz7IPq4LJ8Qc",
    }


GEMINI_RESPONSE = _gemini("Paris.", GEMINI_USAGE)
GEMINI_STREAM = [
    sse(_gemini("Par", {**GEMINI_USAGE, "candidatesTokenCount": 2, "totalTokenCount": 4582}, finish=None)),
    sse(_gemini("is.", GEMINI_USAGE)),
]
