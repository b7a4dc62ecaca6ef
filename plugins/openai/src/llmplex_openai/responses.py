"""The Responses API (``POST /responses``): format a request, parse an answer or a stream event.

Plain functions: ``format_responses_request``, ``parse_responses_response``,
``parse_responses_event``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmplex.errors import LLMConfigurationError, LLMServerError
from llmplex.types import (
    FinishReason,
    Message,
    ReasoningPart,
    Request,
    Response,
    StreamEvent,
    StreamState,
    Tool,
    ToolCall,
)
from llmplex_openai.errors import error_from_api
from llmplex_openai.outcomes import raise_for_outcome
from llmplex_openai.parts import responses_content
from llmplex_openai.reasoning import ENCRYPTED, reasoning_items, reasoning_part
from llmplex_openai.schema import strict_json_schema
from llmplex_openai.settings import RESPONSES_REFUSED_OPTIONS
from llmplex_openai.usage import core_usage
from llmplex_openai.wire_json import as_json

__all__ = ["format_responses_request", "parse_responses_event", "parse_responses_response", "tool_declaration"]

UNSUPPORTED_OPTIONS = RESPONSES_REFUSED_OPTIONS
_INCOMPLETE: dict[str | None, FinishReason] = {"max_output_tokens": "length", "content_filter": "content_filter"}
_DONE_EVENTS = frozenset({"response.completed", "response.incomplete"})


# --- request ---------------------------------------------------------------------------


def format_responses_request(request: Request) -> dict[str, Any]:
    """The JSON body of a Responses API request; only options that were set are included.

    Raises ``LLMConfigurationError`` for options the Responses API does not accept.
    """
    options = request.config.set_options()
    refused = [name for name in UNSUPPORTED_OPTIONS if name in options] if options else None
    if refused:
        raise LLMConfigurationError(
            f"option {', '.join(map(repr, refused))} is not accepted by the OpenAI Responses API; "
            'remove it, or use the Chat Completions API (api = "chat" in this provider\'s config)'
        )
    payload: dict[str, Any] = {"model": request.model, "input": _input(request.messages)}
    if request.tools:
        payload["tools"] = [tool_declaration(t) for t in request.tools]
    if request.tool_choice is not None:
        payload["tool_choice"] = _tool_choice(request.tool_choice)
    if request.output is not None:
        schema = request.output.json_schema
        payload["text"] = {
            "format": {
                "type": "json_schema",
                "name": request.output.name,
                "schema": strict_json_schema(schema) if request.output.strict else schema,
                "strict": request.output.strict,
            }
        }
    effort = options.pop("reasoning_effort", None)
    if effort is not None:
        payload["reasoning"] = {"effort": effort}
    for name, value in options.items():
        payload["max_output_tokens" if name == "max_tokens" else name] = value
    if request.previous_response_id is not None:
        payload["previous_response_id"] = request.previous_response_id
    if request.stream:
        payload["stream"] = True
    given = request.provider_options
    if given.get("store") is False and "include" not in given:
        payload["include"] = [ENCRYPTED]  # nothing is stored: reasoning must travel with the conversation
    if "tools" in given:
        tools = [*payload.get("tools", ()), *_builtin_tools(given["tools"])]
        payload.update(given)
        payload["tools"] = tools
    else:
        payload.update(given)
    return payload


def _builtin_tools(tools: Any) -> list[dict[str, Any]]:
    """``provider_options["tools"]``: OpenAI's own tools (``{"type": "web_search"}``...), added to the function
    tools."""
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("type"), str) for t in tools):
        raise LLMConfigurationError(
            'provider_options["tools"] must be a list of OpenAI tool objects with a type, e.g. [{"type": '
            '"web_search"}]; they are added to the request\'s function tools'
        )
    return tools


def _input(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            if not message.tool_call_id:
                raise LLMConfigurationError(
                    f"messages[{index}] is a tool result without tool_call_id; set it to the id of the call it answers"
                )
            items.append(
                {"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content or ""}
            )
            continue
        if message.reasoning:
            items += reasoning_items(message)
        if message.content or not message.tool_calls:
            items.append({"type": "message", "role": message.role, "content": responses_content(message, index)})
        items += [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for c in message.tool_calls
        ]
    return items


def tool_declaration(tool: Tool) -> dict[str, Any]:
    """One tool as this API's request declares it."""
    spec: dict[str, Any] = {"type": "function", "name": tool.name, "parameters": tool.parameters, "strict": False}
    if tool.description:
        spec["description"] = tool.description
    return spec


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "name": choice}


# --- response --------------------------------------------------------------------------


def _finish_reason(data: Mapping[str, Any], has_calls: bool) -> FinishReason:
    status = data.get("status")
    if status == "incomplete":
        details = data.get("incomplete_details") or {}
        return _INCOMPLETE.get(details.get("reason"), "other")
    if status == "completed":
        return "tool_calls" if has_calls else "stop"
    return "other"


def _raise_if_failed(data: Mapping[str, Any]) -> None:
    if data.get("status") != "failed":
        return
    error = data.get("error")
    if not isinstance(error, Mapping):
        raise LLMServerError("the response failed without saying why", response_body=dict(data))
    raise error_from_api(str(error.get("message") or ""), code=error.get("code"), response_body=dict(error))


def parse_responses_response(raw: Any, request: Request) -> Response:
    """Core response from a Responses API response: its decoded JSON, or the SDK's ``Response``.

    ``Response.raw`` is ``raw`` as given. Raises the taxonomy error of a failed response,
    ``LLMRefusalError`` for a refusal, and ``LLMIncompleteError`` when structured output was cut short.
    """
    data = as_json(raw)
    if (type(data) is not dict and not isinstance(data, Mapping)) or not isinstance(data.get("output"), list):
        raise LLMServerError(f"the API answered with something that is not a response: {data!r:.200}")
    _raise_if_failed(data)
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    for item in data["output"]:
        kind = item.get("type")
        if kind == "reasoning":
            reasoning.append(reasoning_part(item))
        elif kind == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    texts.append(part.get("text") or "")
                elif part.get("type") == "refusal":
                    refusals.append(part.get("refusal") or "")
        elif kind == "function_call":
            calls.append(
                ToolCall(id=item.get("call_id"), name=item.get("name"), arguments=item.get("arguments") or "{}")
            )
    text = "".join(texts)
    finish = _finish_reason(data, bool(calls))
    raise_for_outcome(request, finish, text, "".join(refusals) or None)
    return Response.of(  # unvalidated when every value has its field's type (validated otherwise)
        text=text,
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=core_usage(data.get("usage")),
        model=data.get("model") or "",
        response_id=data.get("id"),
        reasoning=tuple(reasoning),
        raw=raw,
    )


# --- stream ----------------------------------------------------------------------------


def parse_responses_event(event: Any, state: StreamState) -> list[StreamEvent]:
    """Core stream events from one Responses API stream event: its decoded JSON, or the SDK's event model.

    Text deltas, tool-call pieces (numbered in the order the calls appear),
    then usage and the finish reason from ``response.completed`` /
    ``response.incomplete``. ``response.failed`` and ``error`` events raise.
    """
    data = as_json(event)
    kind = data.get("type")
    rid = state.data.get("id")
    if kind == "response.output_text.delta":
        delta = data.get("delta") or ""
        if state.request.output is not None:
            state.data.setdefault("text", []).append(delta)
        return [StreamEvent.text_delta(delta, rid, state.data.get("model"))]
    if kind == "response.function_call_arguments.delta":
        index = state.data.setdefault("calls", {}).get(data.get("output_index"), 0)
        delta = data.get("delta") or ""
        return [StreamEvent(type="tool_call", tool_call_index=index, arguments_delta=delta, response_id=rid)]
    item = data.get("item") or _EMPTY
    if kind == "response.output_item.added" and item.get("type") == "function_call":
        calls = state.data.setdefault("calls", {})
        index = calls[data.get("output_index")] = len(calls)
        return [
            StreamEvent(
                type="tool_call",
                tool_call_index=index,
                tool_call_id=item.get("call_id"),
                tool_name=item.get("name"),
                arguments_delta=item.get("arguments") or "",
                response_id=rid,
            )
        ]
    if kind == "response.output_item.done" and item.get("type") == "reasoning":
        return [StreamEvent(type="reasoning", reasoning=reasoning_part(item), response_id=rid)]
    if kind == "response.reasoning_summary_text.delta":
        delta = data.get("delta")
        return [StreamEvent(type="reasoning", text=delta, response_id=rid)] if delta else []
    if kind == "response.refusal.delta":
        state.data.setdefault("refusal", []).append(data.get("delta") or "")
        return []
    response = data.get("response") or _EMPTY
    if kind in ("response.created", "response.in_progress"):
        state.data["id"], state.data["model"] = response.get("id"), response.get("model")
        return []
    if kind in _DONE_EVENTS:
        return _finished(response, state)
    if kind == "response.failed":
        _raise_if_failed(response)
    if kind == "error":
        raise error_from_api(str(data.get("message") or ""), code=data.get("code"), response_body=dict(data))
    return []


_EMPTY: Mapping[str, Any] = {}


def _finished(data: Mapping[str, Any], state: StreamState) -> list[StreamEvent]:
    finish = _finish_reason(data, bool(state.data.get("calls")))
    refusal = "".join(state.data.get("refusal", ())) or None
    raise_for_outcome(state.request, finish, "".join(state.data.get("text", ())), refusal)
    rid, model = data.get("id"), data.get("model")
    return [
        StreamEvent.usage_event(core_usage(data.get("usage")), rid, model),
        StreamEvent.finish_event(finish, rid, model),
    ]
