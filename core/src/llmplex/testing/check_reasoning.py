"""Conformance checks of reasoning state: kept whole, replayed verbatim to its provider, dropped elsewhere.

The test class declares ``keeps_reasoning``: the provider answers with
reasoning that must come back on the next turn (signed thinking, encrypted
reasoning items, thought signatures), as its ``Capabilities.reasoning_formats``
say. The wire adapter puts ``Reply.reasoning``, an opaque token, where the
provider puts its signature; the kit checks that the answer keeps it and that
the next turn of a tool call carries it unchanged.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from llmplex.client import Client
from llmplex.events import Dropped
from llmplex.testing.kit_base import WEATHER_CALL, WEATHER_TOOL, KitBase
from llmplex.testing.observe import Observed
from llmplex.types import Message, ReasoningPart

__all__ = ["FOREIGN_REASONING", "KIT_REASONING", "ReasoningChecks"]

KIT_REASONING = "S0lULXJlYXNvbmluZy1zaWduYXR1cmUtMDAwMQ=="
"""The opaque token a reply's reasoning carries: base64 (as Gemini's signatures are) with no ``+`` or ``/``, so
that every encoding of it reads the same."""

FOREIGN_REASONING = "kit-foreign-reasoning-7f3a"
"""The signature of a reasoning part of a format no provider takes: it must never reach any wire."""


class ReasoningChecks(KitBase):
    """Reasoning parts of answers, across turns and across providers."""

    keeps_reasoning: ClassVar[bool] = False

    def test_reasoning_formats_are_the_declared_ones(self, llm: Client) -> None:
        """``keeps_reasoning`` says what ``Capabilities.reasoning_formats`` says."""
        formats = self._formats(llm)
        assert bool(formats) == self.keeps_reasoning, (
            f"declare keeps_reasoning = {bool(formats)} on the test class: the provider's reasoning_formats are "
            f"{sorted(formats)}"
        )

    def test_two_turn_tool_call_round_trips_reasoning_verbatim(self, llm: Client, transport: Any) -> None:
        """The answer keeps its reasoning as opaque parts of a format the instance replays, and the next turn
        (a tool result, or a user turn without tools) sends them back unchanged."""
        tools = [WEATHER_TOOL] if self.supports_tools else None
        calls = (WEATHER_CALL,) if self.supports_tools else ()
        self.fake_response(transport, self.reply("" if calls else "Checking.", calls, reasoning=KIT_REASONING))
        first = llm.complete(self.spec, "Weather in Paris?", tools=tools)
        formats = self._formats(llm)
        strays = sorted({part.format for part in first.reasoning} - formats)
        assert not strays, f"the answer's reasoning parts are of formats {strays}, not in reasoning_formats"
        if not self.keeps_reasoning:
            return
        assert first.reasoning, "an answer with reasoning must keep it in Response.reasoning (ReasoningPart)"
        if self.supports_streaming:
            self.fake_stream(transport, self.reply("" if calls else "Checking.", calls, reasoning=KIT_REASONING))
            streamed = list(llm.stream(self.spec, "Weather in Paris?", tools=tools))[-1].response
            assert streamed is not None
            kept = json.dumps([part.data for part in streamed.reasoning])
            assert KIT_REASONING in kept, "a streamed answer must keep its reasoning whole, as the plain one does"
        follow_up = Message.tool(WEATHER_CALL.id, "18C", name=WEATHER_CALL.name) if calls else Message.user("And?")
        self.fake_response(transport, self.reply("It is 18C."))
        llm.complete(self.spec, [Message.user("Weather in Paris?"), first.message(), follow_up], tools=tools)
        sent = self.sent_texts(transport)[-1]
        assert KIT_REASONING in sent, (
            "the next turn must send the answer's reasoning back exactly as it came (its signature unchanged): "
            f"{KIT_REASONING!r} is not in the request"
        )

    def _formats(self, llm: Client) -> frozenset[str]:
        route = llm.route(self.spec)
        return route.provider.capabilities_for(route.model).reasoning_formats

    def test_reasoning_of_another_format_is_dropped_unsent(
        self, llm: Client, transport: Any, observed: Observed
    ) -> None:
        """Reasoning made by a provider of another format never reaches this one: core leaves it out, lists it
        in ``Response.dropped`` and tells observers."""
        foreign = ReasoningPart(format="kit-foreign", text="thoughts", data={"signature": FOREIGN_REASONING})
        history = [Message.user("Hi"), Message.assistant("Hello", reasoning=(foreign,)), Message.user("Again")]
        self.fake_response(transport, self.reply("ok"))
        response = llm.complete(self.spec, history)
        assert FOREIGN_REASONING not in self.sent_texts(transport)[-1], "reasoning of another format was sent"
        assert response.dropped == ("reasoning of messages[1] (kit-foreign)",)
        dropped = [event.dropped for event in observed.events if isinstance(event, Dropped)]
        assert dropped == [response.dropped], f"observers must hear of what was dropped, heard {dropped}"
