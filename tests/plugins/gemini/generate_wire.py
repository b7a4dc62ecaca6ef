"""The Gemini API wire for the conformance kit (``models/{model}:generateContent``), checked with the SDK's types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmplex.testing import FakeError, Received, Reply, WireAdapter, sse
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall
from tests.plugins.gemini import wire

__all__ = ["GenerateWire", "read_generate_request"]

ERRORS: Mapping[str, tuple[int | None, str, str]] = {
    "bad_request": (None, "INVALID_ARGUMENT", ""),
    "authentication": (None, "UNAUTHENTICATED", ""),
    "forbidden": (None, "PERMISSION_DENIED", ""),
    "not_found": (None, "NOT_FOUND", ""),
    "request_timeout": (None, "DEADLINE_EXCEEDED", ""),
    "conflict": (None, "ABORTED", ""),
    "too_large": (None, "INVALID_ARGUMENT", "Request payload size exceeds the limit. "),
    "unprocessable": (None, "INVALID_ARGUMENT", ""),
    "rate_limit": (None, "RESOURCE_EXHAUSTED", ""),
    "quota": (400, "FAILED_PRECONDITION", "Please enable billing on your project. "),
    "server": (None, "INTERNAL", ""),
    "unavailable": (None, "UNAVAILABLE", ""),
    "overloaded": (None, "UNAVAILABLE", "The model is overloaded. "),
}
"""Error kind → the status when it is not the kind's own, the Google error status, a message prefix."""
FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "RECITATION"}
"""Core finish reason → ``finishReason``."""


def _usage(reply: Reply) -> dict[str, Any]:
    """``promptTokenCount`` counts cached tokens too; thoughts are apart from the candidates' tokens."""
    u = reply.usage
    return wire.usage(
        u.input_tokens, u.output_tokens - u.reasoning_tokens, thoughts=u.reasoning_tokens, cached=u.cached_tokens
    )


def _call(call: Any) -> dict[str, Any]:
    return wire.function_call_part(call.name, json.loads(call.arguments), call.id)


def _chunk(reply: Reply, parts: list[dict[str, Any]], last: bool) -> dict[str, Any]:
    finish = "SAFETY" if reply.refusal else FINISH.get(reply.finish, "STOP")
    body = wire.response(
        parts,
        finish_reason=finish if last else None,
        usage_metadata=_usage(reply) if last else None,
        model=reply.model,
        response_id=reply.response_id,
    )
    if last and reply.refusal:
        body["candidates"][0]["finishMessage"] = reply.refusal
    return body


def _get(data: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """A field by its JSON name or its proto name (Google's APIs take both: ``functionCall``, ``function_call``)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return data.get(name, data.get(snake, default))


def _text(response: Any) -> str:
    """A function response as text: the plugin's ``{"output": ...}`` wrapper unwrapped."""
    if isinstance(response, Mapping) and set(response) == {"output"}:
        inner = response["output"]
        return inner if isinstance(inner, str) else json.dumps(inner)
    return json.dumps(response)


def _turns(content: Mapping[str, Any]) -> list[SentMessage]:
    parts = content.get("parts", [])
    text = "".join(p.get("text", "") for p in parts if "text" in p and not p.get("thought"))
    if content.get("role") == "model":
        calls = tuple(
            SentToolCall(c.get("id"), c["name"], c.get("args"))
            for c in (_get(p, "functionCall") for p in parts)
            if c is not None
        )
        return [SentMessage("assistant", text, calls)]
    results = [
        SentMessage("tool", _text(r.get("response")), tool_call_id=r.get("id"), name=r.get("name"))
        for r in (_get(p, "functionResponse") for p in parts)
        if r is not None
    ]
    return results + ([SentMessage("user", text)] if any("text" in p for p in parts) else [])


def read_generate_request(received: Received) -> SentRequest:
    """A ``generateContent`` / ``streamGenerateContent`` request in core's terms."""
    body = received.json()
    model, _, method = received.path.rpartition("/")[2].partition(":")
    config = _get(body, "generationConfig", {})
    names = {"temperature": "temperature", "topP": "top_p", "maxOutputTokens": "max_tokens", "seed": "seed"}
    names |= {"presencePenalty": "presence_penalty", "frequencyPenalty": "frequency_penalty"}
    options: dict[str, Any] = {
        core: _get(config, name) for name, core in names.items() if _get(config, name) is not None
    }
    if _get(config, "stopSequences") is not None:
        options["stop"] = list(_get(config, "stopSequences"))
    calling = _get(_get(body, "toolConfig", {}), "functionCallingConfig", {})
    modes = {"AUTO": "auto", "NONE": "none", "ANY": "required"}
    allowed = _get(calling, "allowedFunctionNames") or []
    system = _get(body, "systemInstruction")
    return SentRequest(
        model=model,
        system=("".join(p.get("text", "") for p in system.get("parts", [])),) if system else (),
        messages=tuple(m for content in body.get("contents", []) for m in _turns(content)),
        tools=tuple(
            SentTool(f["name"], f.get("description", ""), _get(f, "parametersJsonSchema") or f.get("parameters") or {})
            for tool in body.get("tools", [])
            for f in _get(tool, "functionDeclarations", [])
        ),
        tool_choice=allowed[0] if len(allowed) == 1 else modes.get(calling.get("mode", "")),
        options=options,
        stream=method == "streamGenerateContent",
        output_schema=_get(config, "responseJsonSchema") or _get(config, "responseSchema"),
        raw=body,
    )


class GenerateWire(WireAdapter):
    """``generateContent`` and ``streamGenerateContent?alt=sse`` as Google documents them."""

    def response(self, reply: Reply) -> dict[str, Any]:
        parts = [wire.text_part(reply.text)] if reply.text else []
        parts += [_call(c) for c in reply.tool_calls]
        if reply.reasoning and parts:  # signed as Gemini signs: the first call, else the text
            signed = next((i for i, part in enumerate(parts) if "functionCall" in part), 0)
            parts[signed] = {**parts[signed], "thoughtSignature": reply.reasoning}
        return _chunk(reply, parts, last=True)

    def stream(self, reply: Reply) -> list[bytes]:
        words = reply.text.split(" ") if reply.text else []
        pieces = [[wire.text_part(w if i == 0 else " " + w)] for i, w in enumerate(words)]
        pieces += [[_call(c)] for c in reply.tool_calls]
        if reply.reasoning and pieces:  # the first call is signed, else the last piece of text
            signed = len(words) if reply.tool_calls else len(pieces) - 1
            pieces[signed] = [{**pieces[signed][0], "thoughtSignature": reply.reasoning}]
        pieces = pieces or [[]]
        return [sse(_chunk(reply, parts, last=i == len(pieces) - 1)) for i, parts in enumerate(pieces)]

    def error_body(self, error: FakeError) -> dict[str, Any]:
        _, status, prefix = ERRORS[error.kind]
        return wire.error_body(self.error_status(error), status, prefix + error.message)

    def error_status(self, error: FakeError) -> int:
        return ERRORS[error.kind][0] or super().error_status(error)

    def read_request(self, received: Received) -> SentRequest:
        return read_generate_request(received)
