"""Conformance checks of images, documents and audio in a user message (issue 16 item 1).

The test class declares ``input_parts``, the kinds its provider takes. Each
declared kind must reach the formatted payload and the wire with its bytes
intact (raw, or base64 in either alphabet, as a ``data:`` URL or not); each
other kind must be refused with an ``LLMConfigurationError`` before anything
is sent.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from llmplex.client import Client
from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMConfigurationError
from llmplex.testing import media
from llmplex.testing.kit_base import KitBase
from llmplex.types import Audio, Document, Image, Message

__all__ = ["PART_KINDS", "PartChecks", "carries"]

PART_KINDS = ("image", "document", "audio")
_SAMPLES: Mapping[str, Image | Document | Audio] = {
    "image": Image.from_bytes(media.PNG),
    "document": Document.from_bytes(media.PDF, name="kit.pdf"),
    "audio": Audio.from_bytes(media.WAV),
}
_TEXT = "KIT-LOOK-AT-THIS"


def carries(payload: Any, data: bytes) -> bool:
    """Whether ``payload`` (plain data or JSON text) holds ``data``: as bytes, or base64-encoded in a string."""
    encodings = {base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()}
    encodings |= {e.rstrip("=") for e in encodings}

    def walk(value: Any) -> bool:
        if isinstance(value, (bytes, bytearray)):
            return bytes(value) == data
        if isinstance(value, str):
            return any(e in value for e in encodings)
        if isinstance(value, Mapping):
            return any(walk(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(walk(v) for v in value)
        return False

    return walk(payload)


class PartChecks(KitBase):
    """Images, documents and audio: sent whole where declared, refused before sending elsewhere.

    Declare ``input_parts``: the kinds (``"image"``, ``"document"``, ``"audio"``)
    the provider instance under test takes, as its ``Capabilities.input_parts`` say.
    """

    input_parts: ClassVar[frozenset[str]] = frozenset()

    def test_input_parts_are_the_declared_ones(self, llm: Client) -> None:
        """The test class declares the parts the provider instance's capabilities name for the model under test."""
        route = llm.route(self.spec)
        taken = route.provider.capabilities_for(route.model).input_parts
        assert taken <= set(PART_KINDS), f"unknown part kinds in Capabilities.input_parts: {sorted(taken)}"
        assert taken == self.input_parts, (
            f"declare input_parts = frozenset({sorted(taken)}) on the test class: the provider takes those parts"
        )

    @pytest.mark.parametrize("kind", PART_KINDS)
    def test_input_part_reaches_the_wire_or_is_refused(self, llm: Client, transport: Any, kind: str) -> None:
        """A declared kind is in the formatted payload and on the wire with its bytes; another is refused unsent."""
        part = _SAMPLES[kind]
        assert part.data is not None
        request = self.request(llm, [Message.user([_TEXT, part])])
        if kind not in self.input_parts:
            with pytest.raises(LLMConfigurationError, match=kind):
                self.run_request(llm, request)
            assert not self.sent_payloads(transport), f"a request with a {kind} part it cannot take must not be sent"
            return
        payload = Attempt(llm.route(self.spec)).format(request)
        assert carries(payload, part.data), f"the formatted payload does not hold the {kind}'s bytes"
        self.fake_response(transport, self.reply("KIT-SEEN"))
        assert self.run_request(llm, request).text == "KIT-SEEN"
        (sent,) = self.sent_texts(transport)
        assert _TEXT in sent, "the text next to the part must reach the wire"
        assert carries(sent, part.data), f"the {kind}'s bytes did not reach the wire intact"
