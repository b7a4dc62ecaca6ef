"""Conformance checks of what a plugin sends: every role, tools, tool choice, tool results, options, schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmplex.client import Client
from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMConfigurationError
from llmplex.testing.kit_base import (
    CITY_SCHEMA,
    PARALLEL_CALLS,
    TIME_TOOL,
    WEATHER_CALL,
    WEATHER_TOOL,
    KitBase,
)
from llmplex.testing.sent import SentRequest
from llmplex.testing.wire import OPTION_VALUES, option_keys
from llmplex.types import LLMConfig, Message, Request, ToolCall

__all__ = ["RequestChecks"]


def _turns(sent: SentRequest) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in sent.messages]


class RequestChecks(KitBase):
    """The request shape, read back from the wire."""

    def _refuses_tools(self, llm: Client, transport: Any, request: Request) -> None:
        """A provider without tools refuses a request with tools before sending it."""
        with pytest.raises(LLMConfigurationError):
            self.run_request(llm, request)
        assert not self.sent_payloads(transport), "a request the provider cannot express must not be sent"

    def test_plain_text(self, llm: Client, transport: Any) -> None:
        """A prompt reaches the wire as one user turn to the model; text, usage, finish reason and id come back."""
        self.fake_response(transport, self.reply("Bonjour from the conformance kit", response_id="resp_kit_plain"))
        response = llm.complete(self.spec, "Say bonjour, kit")
        assert response.text == "Bonjour from the conformance kit"
        assert (response.provider, response.finish_reason, response.attempts) == (self.prefix, "stop", 1)
        assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
        assert response.model
        if self.reports_response_id:
            assert response.response_id == "resp_kit_plain", "the provider's response id must be kept"
        sent = self.only_sent(transport)
        expected = self.sent_model or llm.route(self.spec).model
        assert sent.model == expected, f"the model name must reach the wire: {expected!r} expected, sent {sent.model!r}"
        assert _turns(sent) == [("user", "Say bonjour, kit")], f"one user turn expected, sent {sent.messages}"
        assert sent.system == (), "no system prompt was given"
        assert not sent.tools
        assert not sent.stream, "a plain request must not ask for a stream"

    def test_multi_turn(self, llm: Client, transport: Any) -> None:
        """Every turn reaches the wire in order with its role; the system prompt is sent as the system prompt."""
        self.fake_response(transport, self.reply("fourth"))
        messages = [
            Message.user("KIT-USER-ONE"),
            Message.assistant("KIT-ASSISTANT-ONE"),
            Message.user("KIT-USER-TWO"),
        ]
        assert llm.complete(self.spec, messages, system="KIT-SYSTEM").text == "fourth"
        sent = self.only_sent(transport)
        assert sent.system == ("KIT-SYSTEM",), (
            f"the system prompt must be sent as the provider's system prompt, not as a turn: sent {sent}"
        )
        assert _turns(sent) == [
            ("user", "KIT-USER-ONE"),
            ("assistant", "KIT-ASSISTANT-ONE"),
            ("user", "KIT-USER-TWO"),
        ], f"the turns must keep their roles and order: sent {sent.messages}"

    def test_tool_calls(self, llm: Client, transport: Any) -> None:
        """Tool definitions reach the wire; a tool call comes back with its id, name and arguments."""
        request = self.request(llm, [Message.user("Weather in Paris?")], tools=(WEATHER_TOOL, TIME_TOOL))
        if not self.supports_tools:
            self._refuses_tools(llm, transport, request)
            return
        for response in self.answers(llm, transport, self.reply(tool_calls=(WEATHER_CALL,)), request):
            assert response.finish_reason == "tool_calls"
            (call,) = response.tool_calls
            assert (call.id, call.name) == ("call_kit_1", "get_weather"), "the call's id and name must be kept"
            assert call.parsed_arguments() == {"city": "Paris"}
        sent = self.sent_requests(transport)[0]
        tools = [(t.name, t.description, sorted(t.parameters.get("properties", {}))) for t in sent.tools]
        assert tools == [
            ("get_weather", "KIT weather lookup", ["city"]),
            ("get_time", "KIT clock lookup", ["zone"]),
        ], f"every tool must reach the wire with its description and parameters: sent {sent.tools}"

    @pytest.mark.parametrize("choice", ["auto", "none", "required", "get_time"])
    def test_tool_choice(self, llm: Client, transport: Any, choice: str) -> None:
        """``tool_choice`` reaches the wire (``auto`` may be left to the provider's default), or is refused."""
        request = self.request(llm, [Message.user("Time?")], tools=(WEATHER_TOOL, TIME_TOOL), tool_choice=choice)
        if not self.supports_tools:
            self._refuses_tools(llm, transport, request)
            return
        try:
            Attempt(llm.route(self.spec)).format(request)
        except LLMConfigurationError:
            assert not self.sent_payloads(transport)
            return
        self.fake_response(transport, self.reply("it is noon"))
        self.run_request(llm, request)
        sent = self.only_sent(transport)
        allowed = ("auto", None) if choice == "auto" else (choice,)
        assert sent.tool_choice in allowed, f"tool_choice={choice!r} must reach the wire, sent {sent.tool_choice!r}"

    def test_tool_results(self, llm: Client, transport: Any) -> None:
        """A tool call and its result reach the wire; the result carries the call's id."""
        messages = [
            Message.user("Weather in Paris?"),
            Message.assistant(tool_calls=(WEATHER_CALL,)),
            Message.tool(WEATHER_CALL.id, "KIT-TOOL-RESULT-21C", name="get_weather"),
        ]
        request = self.request(llm, messages, tools=(WEATHER_TOOL,) if self.supports_tools else ())
        if not self.supports_tools:
            self._refuses_tools(llm, transport, request)
            return
        self.fake_response(transport, self.reply("It is 21C."))
        assert self.run_request(llm, request).text == "It is 21C."
        sent = self.only_sent(transport)
        assert sent.roles() == ["user", "assistant", "tool"], f"sent turns {sent.messages}"
        (call,) = sent.calls()
        assert (call.id, call.name, call.arguments) == ("call_kit_1", "get_weather", {"city": "Paris"}), (
            f"the assistant turn must carry its call with id, name and arguments (as data): sent {call}"
        )
        (result,) = sent.tool_results()
        assert result.tool_call_id == "call_kit_1", f"a tool result must carry its call's id: sent {result}"
        assert "KIT-TOOL-RESULT-21C" in result.text

    def test_parallel_tool_results(self, llm: Client, transport: Any) -> None:
        """Several calls of one turn and their results reach the wire, each result with its own call's id."""
        calls: tuple[ToolCall, ...] = PARALLEL_CALLS if self.supports_parallel_tool_calls else (WEATHER_CALL,)
        messages = [
            Message.user("Weather in Paris and Tokyo, and the time?"),
            Message.assistant(tool_calls=calls),
            *(Message.tool(call.id, f"KIT-RESULT-{call.id}", name=call.name) for call in calls),
        ]
        request = self.request(llm, messages, tools=(WEATHER_TOOL, TIME_TOOL) if self.supports_tools else ())
        if not self.supports_tools:
            self._refuses_tools(llm, transport, request)
            return
        self.fake_response(transport, self.reply("Sunny, rainy, noon."))
        self.run_request(llm, request)
        sent = self.only_sent(transport)
        expected = [(c.id, c.name, c.parsed_arguments()) for c in calls]
        assert [(c.id, c.name, c.arguments) for c in sent.calls()] == expected, f"sent calls {sent.calls()}"
        results = [(r.tool_call_id, r.text) for r in sent.tool_results()]
        assert results == [(c.id, f"KIT-RESULT-{c.id}") for c in calls], f"each result with its call's id: {results}"

    def test_only_given_options_reach_the_wire(self, llm: Client, transport: Any) -> None:
        """No option is sent unless given; a given option reaches the wire under its name, or is refused first."""
        self.fake_response(transport, self.reply("plain"))
        llm.complete(self.spec, "no options")
        (default,) = self.sent_payloads(transport)
        unexpected = option_keys(default) - self.always_sent_options
        assert not unexpected, f"options sent without being given: {sorted(unexpected)}"
        unexpected = set(self.only_sent(transport).options) - self.always_sent_options
        assert not unexpected, f"options sent without being given: {sorted(unexpected)}"
        attempt = Attempt(llm.route(self.spec))
        for name, value in OPTION_VALUES.items():
            probe = self.request(llm, [Message.user("one option")], config=LLMConfig(**{name: value}))
            try:
                attempt.format(probe)
            except LLMConfigurationError:
                with pytest.raises(LLMConfigurationError):
                    llm.complete(self.spec, "one option", **{name: value})
                continue
            self.fake_response(transport, self.reply("with option"))
            llm.complete(self.spec, "one option", **{name: value})
            sent = self.sent_requests(transport)[-1]
            expected = list(value) if isinstance(value, tuple) else value
            assert sent.options.get(name) == expected, (
                f"option {name}={value!r} must reach the wire under the provider's name for it: sent {sent.options}"
            )

    def test_structured_output(self, llm: Client, transport: Any) -> None:
        """A JSON-Schema request formats (natively: the schema reaches the wire) and JSON text parses."""
        self.fake_response(transport, self.reply('{"city_name": "Paris", "country_code": "FR"}'))
        request = self.request(llm, [Message.user("Capital of France?")], output=CITY_SCHEMA)
        response = self.run_request(llm, request)
        assert json.loads(response.text) == {"city_name": "Paris", "country_code": "FR"}
        sent = self.only_sent(transport)
        if self.supports_native_structured_output:
            schema = sent.output_schema or {}
            assert sorted(schema.get("properties", {})) == ["city_name", "country_code"], (
                f"the schema must reach the wire as the provider's structured-output setting: sent {schema}"
            )
