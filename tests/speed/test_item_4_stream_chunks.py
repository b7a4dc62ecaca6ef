"""Issue 34 item 4: less work per streamed chunk, the same answer. A text event is built without pydantic's
validation when its values already have their types (``StreamEvent.text_delta``); the SSE reader parses the
common ``data:``/``event:`` lines first; core's pipeline calls the parse hook directly and an async stream without
a deadline is read without the deadline guard's layer. What a long stream assembles, its errors, deadlines and
closing are checked here on every path (chat, Responses, Anthropic, an openai-compatible preset; sync and async)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pydantic
import pytest
from llmplex_openai import chat
from llmplex_openai import lean as openai_lean

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMError
from llmplex.http import ServerSentEvent, iter_sse
from llmplex.types import Request, StreamEvent, StreamState, Usage
from tests.support.fault_server import Fault, FaultServer
from tests.support.stream_server import Reply, StreamServer

KEY = "sk-item4-chunks-0123456789abcdef"
WORDS = [f"w{i} " for i in range(400)]
TEXT = "".join(WORDS)

# -- StreamEvent.text_delta ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "response_id", "model"), [("hi", "r1", "m"), ("", None, None), ("é\n", "r", None), ("x", None, "m")]
)
def test_item_4_text_delta_is_the_validated_event(text: str, response_id: str | None, model: str | None) -> None:
    fast = StreamEvent.text_delta(text, response_id, model)
    validated = StreamEvent(type="text", text=text, response_id=response_id, model=model)
    assert fast == validated and hash(fast) == hash(validated) and repr(fast) == repr(validated)
    assert list(fast.__dict__.items()) == list(validated.__dict__.items())
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.model_dump_json() == validated.model_dump_json()
    assert fast.model_copy(update={"text": "y"}).text == "y" and fast.text == text
    with pytest.raises(pydantic.ValidationError):
        fast.text = "changed"  # frozen, as a validated event


@pytest.mark.parametrize(("text", "response_id", "model"), [(5, None, None), ("a", 7, None), ("a", None, ["m"])])
def test_item_4_text_delta_of_other_types_is_validated_as_before(text: Any, response_id: Any, model: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        StreamEvent(type="text", text=text, response_id=response_id, model=model)
    with pytest.raises(pydantic.ValidationError):
        StreamEvent.text_delta(text, response_id, model)


# -- the SSE reader's common lines ----------------------------------------------------------

LINES = (
    "data: a\n\ndata:b\n\ndata:  c\n\ndata: \n\ndata:\n\ndata\n\n"  # the space after the colon, once
    "event: e1\ndata: d\n\nevent:e2\ndata: d\n\nevent:  e3\ndata: d\n\n"
    "data: x\ndata: y\n\n: comment\ndata: z\nid: 7\nretry: 30\n\nevent: none\n\ndata: after\n\n"
)
EXPECTED = [
    ServerSentEvent("a"),
    ServerSentEvent("b"),
    ServerSentEvent(" c"),
    ServerSentEvent(""),
    ServerSentEvent(""),
    ServerSentEvent(""),
    ServerSentEvent("d", "e1"),
    ServerSentEvent("d", "e2"),
    ServerSentEvent("d", " e3"),
    ServerSentEvent("x\ny"),
    ServerSentEvent("z", "message", "7", 30),
    ServerSentEvent("after", "message", "7", 30),
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_item_4_sse_common_lines_parse_as_the_spec_says_in_any_split(newline: str) -> None:
    body = LINES.replace("\n", newline).encode()
    assert list(iter_sse([body])) == EXPECTED
    for cut in range(1, len(body)):
        assert list(iter_sse([body[:cut], body[cut:]])) == EXPECTED, cut
    events = list(iter_sse([body[i : i + 1] for i in range(len(body))]))
    assert events == EXPECTED and all(type(event) is ServerSentEvent for event in events)


# -- long streams on every path -----------------------------------------------------------


def _sse(payload: Any, event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(payload)}\n\n"


def _chat_body() -> str:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _sse({"id": "c1", "object": "chat.completion.chunk", "model": "m1", "choices": [choice]})

    calls = [
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "look", "arguments": '{"q": '}},
        {"index": 0, "function": {"arguments": '"x"}'}},
    ]
    usage = {"prompt_tokens": 5, "completion_tokens": 400, "total_tokens": 405}
    return (
        chunk({"role": "assistant", "content": ""})
        + "".join(chunk({"content": word}) for word in WORDS)
        + "".join(chunk({"tool_calls": [call]}) for call in calls)
        + chunk({}, "tool_calls")
        + _sse({"id": "c1", "object": "chat.completion.chunk", "model": "m1", "choices": [], "usage": usage})
        + "data: [DONE]\n\n"
    )


def _responses_body() -> str:
    response = {"id": "resp_1", "object": "response", "model": "m1", "status": "in_progress", "output": []}
    events = [{"type": "response.created", "response": response}]
    events += [{"type": "response.output_text.delta", "output_index": 0, "delta": word} for word in WORDS]
    item = {"type": "function_call", "call_id": "call_a", "name": "look", "arguments": ""}
    events += [{"type": "response.output_item.added", "output_index": 1, "item": item}]
    events += [
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": d} for d in ('{"q": ', '"x"}')
    ]
    usage = {"input_tokens": 5, "output_tokens": 400, "total_tokens": 405}
    done = {**response, "status": "completed", "usage": usage, "output": [{**item, "arguments": '{"q": "x"}'}]}
    events += [{"type": "response.completed", "response": done}]
    return "".join(_sse(event, event["type"]) for event in events)


def _anthropic_body() -> str:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m1", "content": []}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}} for w in WORDS]
    tool = {"type": "tool_use", "id": "call_a", "name": "look", "input": {}}
    events += [
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": tool},
        *(
            {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}
            for p in ('{"q": ', '"x"}')
        ),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 400}},
        {"type": "message_stop"},
    ]
    return "".join(_sse(event, event["type"]) for event in events) + "event: ping\ndata: {}\n\n"


BODIES = {"chat": _chat_body, "responses": _responses_body, "anthropic": _anthropic_body, "preset": _chat_body}
"""Each API's long SSE body (the preset speaks chat)."""


def _config(root: str) -> dict[str, Any]:
    openai = {"plugin": "openai", "base_url": root + "/v1", "api_key": KEY}
    return {
        "providers": {
            "chat": {**openai, "api": "chat"},
            "resp": {**openai, "api": "responses"},
            "ant": {"plugin": "anthropic", "base_url": root, "api_key": KEY},
            "preset": {"plugin": "mistral", "base_url": root + "/v1", "api_key": KEY},
        }
    }


def _events(client: llmplex.Client, mode: str, model: str, **kwargs: Any) -> list[StreamEvent]:
    if mode == "stream":
        return list(client.stream(model, "hi", **kwargs))

    async def read() -> list[StreamEvent]:
        return [event async for event in client.astream(model, "hi", **kwargs)]

    return asyncio.run(read())


PATHS = {"chat": "chat:m1", "responses": "resp:m1", "anthropic": "ant:m1", "preset": "preset:m1"}


@pytest.mark.parametrize("deadline", [False, True], ids=["no deadline", "deadline"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("path", list(PATHS))
def test_item_4_long_stream_assembles_text_tool_call_and_usage(path: str, mode: str, deadline: bool) -> None:
    with StreamServer() as server:
        server.script(Reply.events(BODIES[path]().encode()))
        client = llmplex.Client(_config(server.url))
        try:
            kwargs = {"deadline": Deadline.after(60)} if deadline else {}
            events = _events(client, mode, PATHS[path], **kwargs)
        finally:
            client.close()
    texts = [event.text for event in events if event.type == "text" and event.text]
    assert texts == WORDS
    final = events[-1].response
    assert final is not None and events[-1].type == "response"
    assert final.text == TEXT
    assert [(call.id, call.name, call.arguments) for call in final.tool_calls] == [("call_a", "look", '{"q": "x"}')]
    assert final.finish_reason == "tool_calls"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (5, 400)
    assert final.model == "m1"
    assert all(type(event) is StreamEvent for event in events)
    assert final.usage != Usage.unreported()


# -- errors, deadlines, closing -------------------------------------------------------------


def _chat_client(url: str) -> llmplex.Client:
    config = {"providers": {"o": {"plugin": "openai", "base_url": url, "api_key": KEY, "api": "chat"}}}
    return llmplex.Client(config, throttle={"max_attempts": 1})


def _exit_in_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai plugin's SSE reads raise ``SystemExit`` at their fourth event."""
    originals = (openai_lean.iter_sse, openai_lean.aiter_sse)

    def cut(chunks: Any) -> Iterator[Any]:
        for number, event in enumerate(originals[0](chunks)):
            if number == 3:
                raise SystemExit(3)
            yield event

    async def acut(chunks: Any) -> AsyncIterator[Any]:
        number = 0
        async for event in originals[1](chunks):
            if number == 3:
                raise SystemExit(3)
            number += 1
            yield event

    monkeypatch.setattr(openai_lean, "iter_sse", cut)
    monkeypatch.setattr(openai_lean, "aiter_sse", acut)


def _exit_in_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai plugin's chat chunk parser raises ``SystemExit`` at its fourth chunk."""
    parse, seen = chat.parse_chat_event, []

    def exiting(chunk: Any, state: Any) -> Any:
        seen.append(chunk)
        if len(seen) == 4:
            raise SystemExit(4)
        return parse(chunk, state)

    monkeypatch.setattr(chat, "parse_chat_event", exiting)


def _read(client: llmplex.Client, mode: str, texts: list[str]) -> None:
    """Every event's text into ``texts`` as it comes, until the stream ends or fails."""
    if mode == "stream":
        for event in client.stream("o:m", "hi"):
            texts.append(event.text)
        return

    async def read() -> None:
        async for event in client.astream("o:m", "hi"):
            texts.append(event.text)

    asyncio.run(read())


@pytest.mark.parametrize("where", ["stream", "parse"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_plugin_exiting_mid_stream_is_the_calls_llm_error(
    mode: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``BaseException`` from the plugin's stream (``SystemExit``) or from its parse hook is contained: the
    call's ``LLMError`` naming the plugin, after the text delivered before it."""
    (_exit_in_stream if where == "stream" else _exit_in_parse)(monkeypatch)
    texts: list[str] = []
    with FaultServer() as server:
        client = _chat_client(server.url)
        try:
            with pytest.raises(LLMError) as caught:
                _read(client, mode, texts)
        finally:
            client.close()
    assert type(caught.value) is LLMError
    assert caught.value.context.get("aborted_with") == "SystemExit"
    assert "".join(texts)  # the text that came before the exit was delivered


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_trickling_stream_ends_at_the_deadline(mode: str) -> None:
    with FaultServer() as server:
        server.enqueue(Fault.trickle(interval=0.05))
        client = _chat_client(server.url)
        client.provider_client(client.route("o:m").provider.name)  # the plugin imported before the clock starts
        started = time.monotonic()
        try:
            with pytest.raises(LLMDeadlineExceededError):
                _events(client, mode, "o:m", deadline=Deadline.after(0.5))
        finally:
            client.close()
    assert time.monotonic() - started < 2.0  # ended by the deadline, not by the trickle's end


@pytest.mark.parametrize("deadline", [False, True], ids=["no deadline", "deadline"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_closing_a_stream_early_closes_its_response(
    mode: str, deadline: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    responses: list[Any] = []
    closed = threading.Event()
    events, aevents = openai_lean._events, openai_lean._aevents

    def watched(response: Any) -> Iterator[Any]:
        responses.append(response)
        try:
            yield from events(response)
        finally:
            closed.set()

    async def awatched(response: Any) -> AsyncIterator[Any]:
        responses.append(response)
        try:
            async for event in aevents(response):
                yield event
        finally:
            closed.set()

    monkeypatch.setattr(openai_lean, "_events", watched)
    monkeypatch.setattr(openai_lean, "_aevents", awatched)
    kwargs: dict[str, Any] = {"deadline": Deadline.after(60)} if deadline else {}
    with StreamServer() as server:
        server.script(Reply.events(_chat_body().encode()))
        client = llmplex.Client(_config(server.url))
        try:
            if mode == "stream":
                stream = client.stream("chat:m1", "hi", **kwargs)
                assert [next(stream).type for _ in range(3)] == ["text"] * 3
                stream.close()
            else:

                async def read() -> None:
                    stream = client.astream("chat:m1", "hi", **kwargs)
                    assert [(await anext(stream)).type for _ in range(3)] == ["text"] * 3
                    await stream.aclose()

                asyncio.run(read())
            assert closed.wait(10)  # with a deadline the worker reading the stream closes it after its read
            assert len(responses) == 1 and responses[0].is_closed
        finally:
            client.close()


def test_item_4_preset_chunks_with_and_without_thinking_give_the_same_events_as_before() -> None:
    """The presets' reasoning quirk reads a plain chunk at once; thinking deltas are still reasoning events and
    the whole thinking is one part when the choice finishes."""
    from llmplex_openai_compatible import plugin as preset

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "c1", "model": "m1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    state = StreamState(Request(model="m1", messages=[]))
    chunks = [
        chunk({"reasoning_content": "think "}),
        chunk({"reasoning": "more"}),
        chunk({"content": "Hi", "reasoning_content": None}),
        chunk({"content": "!"}),
        chunk({}, "stop"),
    ]
    events = [(e.type, e.text) for c in chunks for e in preset.llmplex_parse_event(c, state) if e.reasoning is None]
    assert events == [("reasoning", "think "), ("reasoning", "more"), ("text", "Hi"), ("text", "!"), ("finish", "")]
    state = StreamState(Request(model="m1", messages=[]))
    parts = [e.reasoning for c in chunks for e in preset.llmplex_parse_event(c, state) if e.reasoning is not None]
    assert [part.text for part in parts] == ["think more"]
