"""``POST /v1/responses``: the OpenAI Responses wire format, whole and streamed.

``previous_response_id`` goes through to the provider when it keeps responses
(the answer's id is then the provider's own, so the next turn can name it);
any other provider refuses it with a 400 before anything is sent. ``reasoning``
items go both ways: in the input they become the next assistant turn's
reasoning parts, and an answer's reasoning comes back as output items.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.gateway.apis.carried_reasoning import carry, is_carried, uncarry
from llmplex.gateway.apis.fields import sort_fields
from llmplex.gateway.apis.responses_tools import call_item, custom_input, read_tools
from llmplex.gateway.calls import CallSpec, sse, text_message
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.wire import MAX_TOKENS, dumps, media_from_data_url, new_id, now, tool_result
from llmplex.types import Message, ReasoningPart, Response, StreamEvent, ToolCall, Usage

__all__ = ["ResponsesRequest", "ResponsesStreamEncoder", "reasoning_item", "responses_call", "responses_response"]

_Open = ConfigDict(extra="allow", strict=True)


class _ContentPart(BaseModel):
    model_config = _Open
    type: Literal["input_text", "output_text", "input_image", "input_file", "refusal", "reasoning_text"]
    text: str | None = None
    image_url: str | None = None
    file_data: str | None = None
    filename: str | None = None
    refusal: str | None = None


class _Item(BaseModel):
    model_config = _Open
    type: str = "message"
    role: Literal["user", "system", "developer", "assistant"] | None = None
    content: str | list[_ContentPart] | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | list[_ContentPart] | None = None
    input: str | None = None


class _NamedChoice(BaseModel):
    model_config = _Open
    type: Literal["function"]
    name: str


class _Reasoning(BaseModel):
    model_config = _Open
    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None


class ResponsesRequest(BaseModel):
    """A Responses API request; fields the gateway does not read are accepted and ignored."""

    model_config = _Open

    model: str = Field(min_length=1)
    input: str | list[_Item]
    instructions: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: Literal["auto", "none", "required"] | _NamedChoice | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    max_output_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    previous_response_id: str | None = None
    stream: bool | None = False
    reasoning: _Reasoning | None = None
    store: bool | None = None
    include: list[str] | None = None
    prompt_cache_key: str | None = None
    parallel_tool_calls: bool | None = None


def _content(item: _Item) -> Any:
    if item.content is None or isinstance(item.content, str):
        return item.content or ""
    pieces: list[Any] = []
    for part in item.content:
        if part.type in ("input_text", "output_text"):
            pieces.append(part.text or "")
        elif part.type == "refusal":
            pieces.append(part.refusal or "")
        elif item.role != "user" or part.type == "reasoning_text":
            raise GatewayError(400, f"a {item.role} message cannot take {part.type} content", param="input")
        elif part.type == "input_image":
            if not part.image_url:
                raise GatewayError(400, "input_image needs image_url (uploaded file ids are not served)")
            pieces.append(media_from_data_url(part.image_url, "image"))
        else:
            if not part.file_data:
                raise GatewayError(400, "input_file needs file_data (uploaded file ids are not served)")
            pieces.append(media_from_data_url(part.file_data, "document"))
    if item.role != "user":
        return "\n\n".join(pieces)
    return pieces


_SKIPPED_ITEMS = frozenset({"web_search_call", "compaction", "compaction_summary", "item_reference"})
"""Input items of things llmplex does not run or keep: left out, named in ``x-llmplex-dropped``."""
_TOOLS_ITEM = "additional_tools"
"""An input item declaring tools (its ``tools``), as Codex sends them for its own models: read with ``tools``."""
_ITEM_TYPES = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output"}
)


def _plain(item: _Item, index: int, spec: CallSpec) -> _Item | None:
    """An input item as the function-tool items it stands for (a custom tool's call and output as a function's);
    ``None`` for one llmplex neither runs nor keeps (named as dropped)."""
    if item.type == _TOOLS_ITEM:  # its tools were read with the request's
        return None
    if item.type in _SKIPPED_ITEMS:
        spec.dropped.append(f"input.{index} ({item.type})")
        return None
    if item.type not in _ITEM_TYPES:
        raise GatewayError(400, f"input.{index} has type {item.type!r}, which the gateway does not read", param="input")
    if item.type == "custom_tool_call":  # its one string argument, as the tool was declared
        arguments = json.dumps({"input": item.input or ""})
        return _Item(type="function_call", call_id=item.call_id, name=item.name, arguments=arguments)
    if item.type == "custom_tool_call_output":
        return _Item(type="function_call_output", call_id=item.call_id, output=item.output)
    return item


def _messages(request: ResponsesRequest, spec: CallSpec) -> list[Message]:
    messages = [text_message("system", request.instructions, False)] if request.instructions else []
    if isinstance(request.input, str):
        return [*messages, text_message("user", request.input, False)]
    pending: list[ToolCall] = []
    thoughts: list[ReasoningPart] = []
    attachments: list[Any] = []  # of the tool results just read: they follow them, after the last one
    for index, given in enumerate(request.input):
        item = _plain(given, index, spec)
        if item is None:
            continue
        if attachments and item.type != "function_call_output":
            messages.append(Message(role="user", content=attachments))
            attachments = []
        if item.type == "reasoning":
            if pending:
                messages.append(Message.assistant(None, tuple(pending), tuple(thoughts)))
                pending, thoughts = [], []
            thoughts.append(_reasoning(item))
            continue
        if item.type == "function_call":
            if not item.call_id or not item.name:
                raise GatewayError(400, "a function_call item needs call_id and name", param="input")
            pending.append(ToolCall(id=item.call_id, name=item.name, arguments=item.arguments or "{}"))
            continue
        if pending:
            messages.append(Message.assistant(None, tuple(pending), tuple(thoughts)))
            pending, thoughts = [], []
        if thoughts and not (item.type == "message" and item.role == "assistant"):
            raise GatewayError(
                400,
                "a reasoning item must come before the assistant message or function calls it led to",
                param="input",
            )
        if item.type == "function_call_output":
            if not item.call_id:
                raise GatewayError(400, "a function_call_output item needs call_id", param="input")
            message, pieces = _output(item.call_id, item.output)
            messages.append(message)
            attachments += pieces
        elif item.type == "message":
            if item.role is None:
                raise GatewayError(400, "a message item needs a role", param="input")
            role = "system" if item.role == "developer" else item.role
            messages.append(Message(role=role, content=_content(item), reasoning=tuple(thoughts)))
            thoughts = []
    if attachments:
        messages.append(Message(role="user", content=attachments))
    if pending or thoughts:
        if not pending:
            raise GatewayError(400, "a reasoning item must be followed by what it led to", param="input")
        messages.append(Message.assistant(None, tuple(pending), tuple(thoughts)))
    return messages


def _output(call_id: str, output: str | list[_ContentPart] | None) -> tuple[Message, list[Any]]:
    """A ``function_call_output``: its text for the tool message, its images and files for the user turn after."""
    if not isinstance(output, list):
        return tool_result(call_id, [output or ""], [])
    result = _Item(role="user", content=output)
    pieces = _content(result)
    texts = [piece for piece in pieces if isinstance(piece, str)]
    return tool_result(call_id, texts, [piece for piece in pieces if not isinstance(piece, str)])


def _reasoning(item: _Item) -> ReasoningPart:
    """A ``reasoning`` input item: OpenAI's own kept whole; one the gateway wrote for another provider unwrapped."""
    data = item.model_dump(exclude_unset=True)
    if is_carried(data.get("encrypted_content")):
        return uncarry(data["encrypted_content"])
    summary = data.get("summary")
    texts = [s.get("text") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
    return ReasoningPart(format="openai-responses", text="\n\n".join(t for t in texts if isinstance(t, str)), data=data)


def reasoning_item(part: ReasoningPart) -> dict[str, Any]:
    """A reasoning part as an output item: OpenAI's own unchanged; another provider's with its readable text as
    the summary and the part itself carried in ``encrypted_content`` (sent back, it becomes that part again)."""
    if part.format == "openai-responses":
        return dict(part.data)
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return {"type": "reasoning", "id": new_id("rs_"), "summary": summary, "encrypted_content": carry(part)}


def _declared_tools(request: ResponsesRequest) -> list[tuple[str, Any]]:
    """Every tool the request declares, with where: its ``tools``, then those of its ``additional_tools`` items."""
    declared: list[tuple[str, Any]] = [(f"tools.{index}", tool) for index, tool in enumerate(request.tools or ())]
    for index, item in enumerate(request.input if isinstance(request.input, list) else ()):
        if item.type == _TOOLS_ITEM:
            inner = (item.model_extra or {}).get("tools")
            if not isinstance(inner, list):
                raise GatewayError(400, f"input.{index}.tools must be a list of tools", param=f"input.{index}.tools")
            declared += [(f"input.{index}.tools.{position}", tool) for position, tool in enumerate(inner)]
    return declared


def responses_call(request: ResponsesRequest) -> CallSpec:
    """The call a Responses request asks for."""
    kwargs: dict[str, Any] = {}
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.top_p is not None:
        kwargs["top_p"] = request.top_p
    if request.max_output_tokens is not None:
        kwargs["max_tokens"] = request.max_output_tokens
    if request.previous_response_id is not None:
        kwargs["previous_response_id"] = request.previous_response_id
    if request.reasoning is not None and request.reasoning.effort not in (None, "none"):
        kwargs["reasoning_effort"] = request.reasoning.effort
    spec = CallSpec(request.model, [], kwargs, stream=bool(request.stream))
    tools = read_tools(_declared_tools(request), spec)
    if tools:
        kwargs["tools"] = tools
    if request.tool_choice is not None:
        choice = request.tool_choice
        kwargs["tool_choice"] = choice if isinstance(choice, str) else choice.name
    spec.messages = _messages(request, spec)
    for name in ("store", "include"):
        if getattr(request, name) is not None:
            spec.privacy[name] = getattr(request, name)
    for name in ("prompt_cache_key", "parallel_tool_calls"):
        if getattr(request, name) is not None:
            spec.openai_options[name] = getattr(request, name)
    given = [*request.model_fields_set, *(request.model_extra or {})]
    hints, meanings = sort_fields("responses", dict.fromkeys(given))
    spec.dropped += hints
    spec.unsupported += meanings
    return spec


def responses_usage(usage: Usage) -> dict[str, Any]:
    """A Usage in the Responses shape."""
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": usage.cache_write_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def _message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    content = (
        [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}] if status == "completed" else []
    )
    return {"type": "message", "id": item_id, "status": status, "role": "assistant", "content": content}


def _envelope(response_id: str, model: str, created: int, spec: CallSpec, status: str) -> dict[str, Any]:
    choice = spec.kwargs.get("tool_choice", "auto")
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "model": model,
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": choice if choice in ("auto", "none", "required") else {"type": "function", "name": choice},
        "tools": [{"type": "function", "strict": False, **tool} for tool in spec.kwargs.get("tools", ())],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "previous_response_id": spec.kwargs.get("previous_response_id"),
        "temperature": spec.kwargs.get("temperature"),
        "top_p": spec.kwargs.get("top_p"),
        "max_output_tokens": spec.kwargs.get("max_tokens"),
    }


def _finished(envelope: dict[str, Any], response: Response, output: list[dict[str, Any]]) -> dict[str, Any]:
    incomplete = response.finish_reason == "length"
    return {
        **envelope,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": output,
        "usage": responses_usage(response.usage),
    }


def responses_response(response: Response, spec: CallSpec) -> dict[str, Any]:
    """A whole answer as a ``response`` object; its id is the provider's when it keeps responses."""
    output = [reasoning_item(part) for part in response.reasoning]
    output += [_message_item(new_id("msg_"), response.text, "completed")] if response.text else []
    output += [call_item(call, spec) for call in response.tool_calls]
    envelope = _envelope(response.response_id or new_id("resp_"), spec.model, now(), spec, "completed")
    return _finished(envelope, response, output)


_DELTA_HEAD = b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":'
_DELTA_TAIL = b',"logprobs":[]}\n\n'


class ResponsesStreamEncoder:
    """A stream's events as the Responses API's typed events, numbered in order."""

    def __init__(self, spec: CallSpec) -> None:
        self._spec = spec
        self._created = now()
        self._sequence = 0
        self._envelope: dict[str, Any] | None = None
        self._output: list[dict[str, Any]] = []
        self._text: list[str] = []
        self._open: tuple[str, int | None] | None = None
        self._arguments = ""  # the open tool call's arguments so far
        self._delta_place = b""  # the open text item's id, output and content index in its delta events, encoded

    def _event(self, kind: str, body: dict[str, Any]) -> bytes:
        event = {"type": kind, "sequence_number": self._sequence, **body}
        self._sequence += 1
        return sse(dumps(event), kind)

    def _text_delta(self, text: str) -> bytes:
        """``_event("response.output_text.delta", ...)`` of ``text`` in the open text item, with only its sequence
        number and ``text`` encoded (the item's place is encoded once, as it opens)."""
        sequence = self._sequence
        self._sequence += 1
        return b"".join((_DELTA_HEAD, b"%d" % sequence, self._delta_place, b',"delta":', dumps(text), _DELTA_TAIL))

    def _start(self, event: StreamEvent) -> bytes:
        if self._envelope is not None:
            return b""
        response_id = event.response_id or new_id("resp_")
        self._envelope = _envelope(response_id, self._spec.model, self._created, self._spec, "in_progress")
        return self._event("response.created", {"response": self._envelope}) + self._event(
            "response.in_progress", {"response": self._envelope}
        )

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        index = len(self._output) - 1
        item = self._output[index]
        out = b""
        if item["type"] == "message":
            text = "".join(self._text)
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            out += self._event("response.output_text.done", {**where, "text": text, "logprobs": []})
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            out += self._event("response.content_part.done", {**where, "part": part})
            item.update(status="completed", content=[part])
        elif item["type"] == "function_call":  # a reasoning item is whole from the start
            where = {"item_id": item["id"], "output_index": index}
            done = {**where, "name": item["name"], "arguments": item["arguments"]}
            out += self._event("response.function_call_arguments.done", done)
            item["status"] = "completed"
        elif item["type"] == "custom_tool_call":  # its input is whole once its arguments are
            item.update(input=custom_input(self._arguments), status="completed")
            where = {"item_id": item["id"], "output_index": index}
            out += self._event("response.custom_tool_call_input.done", {**where, "input": item["input"]})
        self._open = None
        return out + self._event("response.output_item.done", {"output_index": index, "item": item})

    def _add(self, item: dict[str, Any], key: tuple[str, int | None]) -> bytes:
        out = self._close()
        self._output.append(item)
        self._open = key
        return out + self._event("response.output_item.added", {"output_index": len(self._output) - 1, "item": item})

    def encode(self, event: StreamEvent) -> bytes:
        """The events for one stream event."""
        out = self._start(event)
        index = len(self._output) - 1
        if event.type == "text" and event.text:
            if self._open != ("text", None):
                item = _message_item(new_id("msg_"), "", "in_progress")
                out += self._add(item, ("text", None))
                index = len(self._output) - 1
                where = {"item_id": item["id"], "output_index": index, "content_index": 0}
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                out += self._event("response.content_part.added", {**where, "part": part})
                self._text = []
                place = (b',"item_id":', dumps(item["id"]), b',"output_index":', dumps(index), b',"content_index":0')
                self._delta_place = b"".join(place)
            self._text.append(event.text)
            return out + self._text_delta(event.text)
        if event.type == "reasoning" and event.reasoning is not None:
            out += self._add(reasoning_item(event.reasoning), ("reasoning", None))
            return out + self._close()
        if event.type == "tool_call":
            key = ("tool", event.tool_call_index or 0)
            if self._open != key:
                call = ToolCall(id=event.tool_call_id or new_id("call_"), name=event.tool_name or "", arguments="")
                out += self._add(call_item(call, self._spec, "in_progress"), key)
                index = len(self._output) - 1
                self._arguments = ""
            item = self._output[index]
            if event.tool_name and not item["name"]:
                item["name"] = event.tool_name
            self._arguments += event.arguments_delta or ""
            if event.arguments_delta and item["type"] == "function_call":
                item["arguments"] += event.arguments_delta
                where = {"item_id": item["id"], "output_index": index}
                out += self._event("response.function_call_arguments.delta", {**where, "delta": event.arguments_delta})
            return out
        if event.type == "response" and event.response is not None and self._envelope is not None:
            out += self._close()
            final = _finished(self._envelope, event.response, self._output)
            kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
            return out + self._event(kind, {"response": final})
        return out

    def fail(self, error: GatewayError) -> bytes:
        """An ``error`` event (the openai SDK raises ``APIError`` on it)."""
        body = error.body("openai")["error"]
        return self._event("error", {"code": body["code"], "message": body["message"], "param": body["param"]})
