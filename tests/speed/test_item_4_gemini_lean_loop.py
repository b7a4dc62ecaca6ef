"""Issue 34 item 4: the lean Gemini stream reads the common plain chunk in its own loop (decoded, checked in one
pass, handed on), leaving only the others to the event reader that raises errors and builds the SDK's models;
and a stream read to its end is not looked at again as cut off when its call closes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from llmplex_gemini import lean as gemini_lean

import llmplex
from llmplex.engine.retrier import Retrier
from tests.plugins.gemini.wire import stream_body, text_part, usage
from tests.speed.gemini_stream_cases import _chunk, client, read_events, server, via
from tests.support.stream_server import Reply, StreamServer

__all__ = ["client", "server", "via"]

PLAIN = [_chunk([text_part(f"w{index} ")], usage_metadata=usage(5, index + 1)) for index in range(4)]
SAFETY = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_gemini_common_chunks_skip_the_event_reader(
    mode: str,
    server: StreamServer,
    client: llmplex.Client,
    via: Callable[[bool], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plain text chunks never reach ``LeanStream._chunk``; a chunk with safety ratings does, and comes as the
    SDK's model (its text read all the same)."""
    read: list[Any] = []
    reader = gemini_lean.LeanStream._chunk

    def counted(self: Any, chunk: Any, response: Any) -> Any:
        read.append(chunk)
        return reader(self, chunk, response)

    monkeypatch.setattr(gemini_lean.LeanStream, "_chunk", counted)
    via(False)
    rated = _chunk([text_part("!")], "STOP", usage_metadata=usage(5, 5), safety_ratings=SAFETY)
    server.script(Reply.events(stream_body([*PLAIN, rated])))
    events = read_events(client, mode)
    assert read == [rated]
    final = events[-1].response
    assert final is not None and final.text == "w0 w1 w2 w3 !" and final.usage.output_tokens == 5


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_stream_read_to_its_end_is_not_cut_off_on_close(
    mode: str,
    server: StreamServer,
    client: llmplex.Client,
    via: Callable[[bool], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once a stream's answer is settled, closing its call asks nothing more of the retrier's cut-off."""
    cut: list[str] = []
    monkeypatch.setattr(Retrier, "cut_off", lambda self, reported, why: cut.append(why))
    via(False)
    server.script(Reply.events(stream_body([*PLAIN, _chunk([], "STOP", usage_metadata=usage(5, 4))])))
    assert read_events(client, mode)[-1].response is not None
    assert cut == []
