"""Conformance checks of what a plugin reads back, plain and streamed: calls, usage, finish reasons, refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from llmplex.client import Client
from llmplex.errors import LLMConfigurationError, LLMRefusalError
from llmplex.testing.kit_base import (
    CITY_SCHEMA,
    DETAILED_USAGE,
    PARALLEL_CALLS,
    TIME_TOOL,
    USAGE_FIELDS,
    WEATHER_CALL,
    WEATHER_TOOL,
    KitBase,
)
from llmplex.types import Message, Response, StreamEvent

__all__ = ["ResponseChecks"]

REFUSAL = "KIT-REFUSAL: I cannot help with that."


class ResponseChecks(KitBase):
    """Parsing, each check on a plain answer and on a streamed one."""

    def test_several_tool_calls(self, llm: Client, transport: Any) -> None:
        """Every call of a turn comes back with its own id, name and arguments, in order, streamed or not."""
        if not self.supports_tools:
            with pytest.raises(LLMConfigurationError):
                list(llm.stream(self.spec, "weather?", tools=[WEATHER_TOOL]))
            assert not self.sent_payloads(transport)
            return
        calls = PARALLEL_CALLS if self.supports_parallel_tool_calls else (WEATHER_CALL,)
        request = self.request(llm, [Message.user("Weather and time?")], tools=(WEATHER_TOOL, TIME_TOOL))
        expected = [(c.id, c.name, c.parsed_arguments()) for c in calls]
        for response in self.answers(llm, transport, self.reply(tool_calls=calls), request):
            got = [(c.id, c.name, c.parsed_arguments()) for c in response.tool_calls]
            assert got == expected, f"every tool call must be read, each with its own id and arguments: got {got}"
            assert response.finish_reason == "tool_calls"

    def test_usage_details(self, llm: Client, transport: Any) -> None:
        """Input, output, cached and reasoning tokens are read into their own fields, streamed or not."""
        reply = self.reply("counted", usage=DETAILED_USAGE)
        request = self.request(llm, [Message.user("Count")])
        for response in self.answers(llm, transport, reply, request):
            usage = response.usage
            for name in sorted(USAGE_FIELDS):
                expected = getattr(DETAILED_USAGE, name) if name in self.usage_fields else 0
                assert getattr(usage, name) == expected, (
                    f"usage.{name} must be {expected} (the kit answered {DETAILED_USAGE}), got {usage}"
                )
            assert usage.total_tokens == DETAILED_USAGE.input_tokens + DETAILED_USAGE.output_tokens

    def test_length_finish(self, llm: Client, transport: Any) -> None:
        """An answer cut by the token limit ends with finish reason ``length`` (and keeps its text)."""
        reply = self.reply("The answer was cut", finish_reason="length")
        request = self.request(llm, [Message.user("Write a long story")])
        for response in self.answers(llm, transport, reply, request):
            assert response.finish_reason == "length", "the provider's token-limit stop must become 'length'"
            assert response.text == "The answer was cut"

    def test_refusal(self, llm: Client, transport: Any) -> None:
        """A refusal is read (``refusal``, a refusal finish reason, or LLMRefusalError); with structured
        output asked for, it is ``LLMRefusalError``."""
        if not self.reports_refusals:
            self.fake_response(transport, self.reply("fine"))
            assert llm.complete(self.spec, "hello").refusal is None
            return
        self.fake_response(transport, self.reply(refusal=REFUSAL))
        request = self.request(llm, [Message.user("Something forbidden")])
        _assert_refused(_refused(lambda: self.run_request(llm, request)))
        self.fake_response(transport, self.reply(refusal=REFUSAL))
        with pytest.raises(LLMRefusalError):
            llm.complete(self.spec, "Capital of France?", output=CITY_SCHEMA.json_schema)

    def test_streamed_refusal(self, llm: Client, transport: Any) -> None:
        """A streamed refusal is read too (a refusal finish reason, or LLMRefusalError)."""
        if not self.reports_refusals:
            self.fake_stream(transport, self.reply("fine"))
            final = list(llm.stream(self.spec, "hello"))[-1].response
            assert final is not None
            assert final.finish_reason != "refusal"
            return
        self.fake_stream(transport, self.reply(refusal=REFUSAL))
        request = self.request(llm, [Message.user("Something forbidden")])
        _assert_refused(_refused(lambda: self.stream_request(llm, request)[-1].response))

    def test_stream_assembles_to_the_complete_answer(self, llm: Client, transport: Any) -> None:
        """Streamed text deltas join to the final response, which equals the non-streamed one, its id included."""
        reply = self.reply("one two three four", response_id="resp_kit_stream")
        self.fake_response(transport, reply)
        self.fake_stream(transport, reply)
        request = self.request(llm, [Message.user("Tell me")])
        complete = self.run_request(llm, request)
        events: list[StreamEvent] = self.stream_request(llm, request)
        final = events[-1].response
        assert final is not None
        deltas = [e.text for e in events if e.type == "text"]
        assert "".join(deltas) == final.text == complete.text == "one two three four"
        if self.supports_streaming:
            assert len(deltas) > 1, "a streaming provider must yield text as it comes, not all at the end"
        assert (final.usage, final.finish_reason, final.provider) == (
            complete.usage,
            complete.finish_reason,
            self.prefix,
        )
        assert final.model, "a streamed response names its model"
        if self.reports_response_id:
            assert complete.response_id == final.response_id == "resp_kit_stream", (
                f"the response id must be read, streamed too: got {complete.response_id!r}, {final.response_id!r}"
            )
        flags = [s.stream for s in self.sent_requests(transport)]
        assert flags == [False, self.supports_streaming], f"the stream flag must say which answer is wanted: {flags}"


def _refused(run: Callable[[], Response | None]) -> Response | LLMRefusalError:
    """The response ``run`` returns, or the refusal error it raises."""
    try:
        response = run()
    except LLMRefusalError as error:
        return error
    assert response is not None
    return response


def _assert_refused(outcome: Response | LLMRefusalError) -> None:
    if isinstance(outcome, LLMRefusalError):
        assert outcome.refusal, "the refusal error must say what the provider said (its refusal)"
        return
    refused = outcome.refusal == REFUSAL or outcome.finish_reason in ("refusal", "content_filter")
    assert refused, f"the refusal must be read: got refusal={outcome.refusal!r} {outcome.finish_reason!r}"
