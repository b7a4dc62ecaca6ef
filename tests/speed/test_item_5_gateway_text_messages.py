"""Issue 34 item 5: a request's text turns become core ``Message``s without a second validation.

The request body is validated once, by the API's request model (``ChatRequest``, ``ResponsesRequest``,
``MessagesRequest``: each message's role and its content, a string or a list of parts). Its system and user turns
of plain text then went through ``Message``'s own validation again (pydantic's and two Python validators: about
1.5 us a turn, every request, each turn of a conversation). They are now built by ``calls.text_message``
(``assembled``: the values as they are), equal to the validated messages in every way (the fields set included:
``Message.system`` and ``Message.user`` set ``cache``). Assistant turns of text alone (no tool calls, no thinking)
are built by ``calls.assistant_text``, equal to ``Message.assistant(text)``. A user turn of parts (images, files),
an assistant turn with tool calls or thinking and the tool turns are still built and validated by ``Message``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from llmplex.gateway.apis import anthropic_blocks, anthropic_messages, openai_chat, openai_responses
from llmplex.gateway.apis.anthropic_messages import MessagesRequest, messages_call
from llmplex.gateway.apis.openai_chat import ChatRequest, chat_call
from llmplex.gateway.apis.openai_responses import ResponsesRequest, responses_call
from llmplex.gateway.wire import parse_body
from llmplex.types import Message, ToolCall

PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _same(built: Message, validated: Message) -> None:
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert repr(built) == repr(validated)
    assert built.model_extra is None and validated.model_extra is None


@pytest.mark.parametrize("role", ["system", "user"])
@pytest.mark.parametrize("text", ["", "Say hello.", "naïve \u2028 \x00 text"])
def test_item_5_gateway_text_message_equals_the_validated_message(role: Any, text: str) -> None:
    from llmplex.gateway.calls import text_message

    built = text_message(role, text)
    _same(built, Message(role=role, content=text))
    made = Message.system if role == "system" else Message.user
    for cache in (False, True):
        _same(text_message(role, text, cache), made(text, cache=cache))
    with pytest.raises(ValidationError):  # frozen, as the validated message
        built.content = "changed"  # type: ignore[misc]


def test_item_5_gateway_text_message_defaults_are_plain_values() -> None:
    """Every field but ``role`` has a default value (no factory) that ``text_message`` can share between
    messages: an immutable one."""
    for name, field in Message.model_fields.items():
        if name == "role":
            continue
        assert field.default is not PydanticUndefined and field.default_factory is None, name
        assert isinstance(field.default, (type(None), bool, str, tuple)), name


def _spec_of(messages: list[dict[str, Any]]) -> Any:
    body = {"model": "mock:echo", "messages": messages, "stream": True}
    return chat_call(parse_body(json.dumps(body).encode(), ChatRequest))


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The messages the API translations build through ``Message`` from now on (each one validated): the
    arguments of each ``Message(...)``, ``Message.system(...)`` and ``Message.user(...)``."""
    built: list[Any] = []

    class Counting:
        tool = staticmethod(Message.tool)

        def __new__(cls, **kwargs: Any) -> Any:
            built.append(kwargs)
            return Message(**kwargs)

        @staticmethod
        def system(*args: Any, **kwargs: Any) -> Message:
            built.append(("system", args, kwargs))
            return Message.system(*args, **kwargs)

        @staticmethod
        def user(*args: Any, **kwargs: Any) -> Message:
            built.append(("user", args, kwargs))
            return Message.user(*args, **kwargs)

        @staticmethod
        def assistant(*args: Any, **kwargs: Any) -> Message:
            built.append(("assistant", args, kwargs))
            return Message.assistant(*args, **kwargs)

    for module in (openai_chat, openai_responses, anthropic_messages, anthropic_blocks):
        monkeypatch.setattr(module, "Message", Counting)
    return built


@pytest.mark.parametrize("text", [None, "", "Hello."])
def test_item_5_gateway_assistant_text_equals_the_validated_message(text: str | None) -> None:
    from llmplex.gateway.calls import assistant_text

    _same(assistant_text(text), Message.assistant(text))


def test_item_5_gateway_chat_text_turns_are_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _counting(monkeypatch)
    spec = _spec_of(
        [
            {"role": "system", "content": "Be terse."},
            {"role": "developer", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "user", "content": "Say hello."},
            {"role": "assistant", "content": "Hello."},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "user", "content": None},
        ]
    )
    assert built == []  # not one of them built (and validated) by Message
    expected = [
        Message(role="system", content="Be terse."),
        Message(role="system", content="a\n\nb"),
        Message(role="user", content="Say hello."),
        Message.assistant("Hello."),
        Message.assistant(None, ()),
        Message(role="user", content=""),
    ]
    assert len(spec.messages) == len(expected)
    for message, validated in zip(spec.messages, expected, strict=True):
        _same(message, validated)


def test_item_5_gateway_chat_turns_of_parts_are_still_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _counting(monkeypatch)
    parts = [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": PNG}}]
    call = {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    spec = _spec_of(
        [
            {"role": "user", "content": parts},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "a dot"},
        ]
    )
    assert built[0] == {"role": "user", "content": built[0]["content"]}  # the turn of parts, through Message
    assert [entry[0] for entry in built[1:]] == ["assistant"]  # the turn with a tool call too
    assert isinstance(spec.messages[0].content, tuple) and spec.messages[0].content[0] == "What is this?"
    assert spec.messages[1] == Message.assistant(None, (ToolCall(id="c1", name="look", arguments="{}"),))


def test_item_5_gateway_responses_text_turns_are_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _counting(monkeypatch)
    body = {"model": "mock:echo", "instructions": "Be terse.", "input": "Say hello.", "stream": True}
    spec = responses_call(parse_body(json.dumps(body).encode(), ResponsesRequest))
    assert built == []
    _same(spec.messages[0], Message.system("Be terse."))
    _same(spec.messages[1], Message.user("Say hello."))
    assert len(spec.messages) == 2


def test_item_5_gateway_messages_text_turns_are_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _counting(monkeypatch)
    for system, made in (
        ("Be terse.", [Message.system("Be terse.")]),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], [Message.system("a\n\nb")]),
        (
            [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}, {"type": "text", "text": "b"}],
            [Message.system("a", cache=True), Message.system("b", cache=False)],
        ),
    ):
        turns = [
            {"role": "user", "content": "Say hello."},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "Now in French."},
            {
                "role": "system",
                "content": [{"type": "text", "text": "Briefly.", "cache_control": {"type": "ephemeral"}}],
            },
            {"role": "user", "content": "Again."},
        ]
        body = {"model": "mock:echo", "max_tokens": 10, "system": system, "messages": turns}
        spec = messages_call(parse_body(json.dumps(body).encode(), MessagesRequest))
        expected = [
            *made,
            Message.user("Say hello."),
            Message.assistant("Hello."),
            Message.system("Now in French."),
            Message.system("Briefly.", cache=True),
            Message.user("Again."),
        ]
        assert len(spec.messages) == len(expected)
        for message, validated in zip(spec.messages, expected, strict=True):
            _same(message, validated)
    assert built == []
