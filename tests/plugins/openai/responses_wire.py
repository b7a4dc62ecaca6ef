"""The OpenAI Responses API wire for the conformance kit (``POST /responses``), validated against the OpenAPI spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmplex.testing import FakeError, Received, Reply, WireAdapter, sse
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall, json_arguments
from tests.conformance.openai_wire import error_body, usage_of, words_of
from tests.contract import fixtures_openai as wire
from tests.contract.openapi import validate_openai

__all__ = ["ResponsesWire", "read_responses_request"]


def _output(reply: Reply) -> list[wire.Json]:
    items: list[wire.Json] = []
    if reply.reasoning:  # a reasoning item, encrypted as a store=false request gets it
        summary = [{"type": "summary_text", "text": "Thinking it over."}]
        items.append({"id": "rs_kit_1", "type": "reasoning", "summary": summary, "encrypted_content": reply.reasoning})
    parts = [wire.output_text_part(reply.text)] if reply.text else []
    if reply.refusal:
        parts.append(wire.refusal_part(reply.refusal))
    if parts:
        items.append(wire.message_item(*parts, status="incomplete" if reply.finish == "length" else "completed"))
    for index, call in enumerate(reply.tool_calls):
        item = wire.function_call_item(wire.FunctionCall(call.name, call.arguments, call.id))
        items.append({**item, "id": f"fc_kit_{index}"})
    return items


def _response(reply: Reply, status: str = "") -> wire.Json:
    incomplete = reply.finish == "length"
    body = wire.response(
        *_output(reply),
        status="incomplete" if incomplete else "completed",  # type: ignore[arg-type]
        incomplete_reason="max_output_tokens" if incomplete else None,
        usage=usage_of(reply),
        model=reply.model,
    )
    body["id"] = reply.response_id
    if status:
        body.update(status=status, output=[], completed_at=None)
        del body["usage"]
    return body


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return content or ""


def read_responses_request(body: Mapping[str, Any]) -> SentRequest:
    """A Responses API request body in core's terms."""
    system = [body["instructions"]] if body.get("instructions") else []
    messages: list[SentMessage] = []
    for item in body.get("input", []):
        kind = item.get("type", "message")
        if kind == "function_call":
            call = SentToolCall(item.get("call_id"), item["name"], json_arguments(item.get("arguments")))
            if messages and messages[-1].role == "assistant":
                last = messages.pop()
                messages.append(SentMessage("assistant", last.text, (*last.tool_calls, call)))
            else:
                messages.append(SentMessage("assistant", "", (call,)))
        elif kind == "function_call_output":
            messages.append(SentMessage("tool", _text(item.get("output")), tool_call_id=item.get("call_id")))
        elif item.get("role") in ("system", "developer"):
            system.append(_text(item.get("content")))
        else:
            messages.append(SentMessage(item["role"], _text(item.get("content"))))
    choice = body.get("tool_choice")
    options = {k: body[k] for k in ("temperature", "top_p") if k in body}
    if "max_output_tokens" in body:
        options["max_tokens"] = body["max_output_tokens"]
    return SentRequest(
        model=body.get("model"),
        system=tuple(system),
        messages=tuple(messages),
        tools=tuple(
            SentTool(t["name"], t.get("description", ""), t.get("parameters", {})) for t in body.get("tools", [])
        ),
        tool_choice=choice.get("name") if isinstance(choice, Mapping) else choice,
        options=options,
        stream=body.get("stream") is True,
        output_schema=body.get("text", {}).get("format", {}).get("schema"),
        raw=body,
    )


class ResponsesWire(WireAdapter):
    """``POST /responses`` as OpenAI documents it."""

    def response(self, reply: Reply) -> wire.Json:
        body = _response(reply)
        validate_openai("Response", body)
        return body

    def events(self, reply: Reply) -> list[wire.Json]:
        """The stream events of ``reply``: text word by word, a refusal, each call at its own output index."""
        started = _response(reply, status="in_progress")
        events: list[wire.Json] = [{"type": "response.created", "response": started}]
        index = 0
        if reply.text or reply.refusal:
            where = {"item_id": wire.MESSAGE_ID, "output_index": 0, "content_index": 0}
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": wire.message_item(status="in_progress"),
                }
            )
            for word in words_of(reply.text):
                events.append({"type": "response.output_text.delta", **where, "delta": word, "logprobs": []})
            if reply.refusal:
                events.append({"type": "response.refusal.delta", **where, "delta": reply.refusal})
                events.append({"type": "response.refusal.done", **where, "refusal": reply.refusal})
            index = 1
        for offset, call in enumerate(reply.tool_calls):
            item = {
                **wire.function_call_item(wire.FunctionCall(call.name, "", call.id), "in_progress"),
                "id": f"fc_kit_{offset}",
            }
            where = {"item_id": item["id"], "output_index": index + offset}
            events.append({"type": "response.output_item.added", "output_index": index + offset, "item": item})
            half = len(call.arguments) // 2
            for part in (call.arguments[:half], call.arguments[half:]):
                events.append({"type": "response.function_call_arguments.delta", **where, "delta": part})
            done = {**item, "arguments": call.arguments, "status": "completed"}
            events.append({"type": "response.output_item.done", "output_index": index + offset, "item": done})
        if reply.reasoning:  # the reasoning item, whole once done (its output index after the others here)
            reasoning = _output(reply)[0]
            at = {"output_index": index + len(reply.tool_calls)}
            events.append({"type": "response.output_item.added", **at, "item": {**reasoning, "summary": []}})
            events.append({"type": "response.output_item.done", **at, "item": reasoning})
        final = _response(reply)
        kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
        events.append({"type": kind, "response": final})
        numbered = [{**event, "sequence_number": n} for n, event in enumerate(events)]
        for event in numbered:
            validate_openai("ResponseStreamEvent", event)
        return numbered

    def stream(self, reply: Reply) -> list[bytes]:
        return [sse(event, event=event["type"]) for event in self.events(reply)]

    def error_body(self, error: FakeError) -> wire.Json:
        return error_body(error)

    def read_request(self, received: Received) -> SentRequest:
        return read_responses_request(received.json())
