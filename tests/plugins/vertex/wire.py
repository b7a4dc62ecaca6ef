"""Vertex AI's two wires for the conformance kit: Gemini's ``:generateContent`` under
``/v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}``, and Claude's Messages API
at ``/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``
(``:streamRawPredict`` for streams), whose body carries ``anthropic_version`` instead of ``model``.
"""

from __future__ import annotations

import dataclasses

from llmplex.testing import Received
from llmplex.testing.sent import SentRequest
from tests.plugins.anthropic.messages_wire import MessagesWire, read_messages_request

__all__ = ["VertexMessagesWire", "path_model"]


def path_model(received: Received) -> tuple[str, str]:
    """``(model, method)`` from ``.../models/{model}:{method}``."""
    model, _, method = received.path.rpartition("/models/")[2].partition(":")
    return model, method


class VertexMessagesWire(MessagesWire):
    """Claude's Messages API as Vertex AI serves it: the model in the path, ``anthropic_version`` in the body."""

    def read_request(self, received: Received) -> SentRequest:
        body = received.json()
        assert body.get("anthropic_version"), "Vertex needs anthropic_version in the body"
        assert "model" not in body, "Vertex takes the model in the path, not the body"
        model, method = path_model(received)
        sent = read_messages_request(body)
        return dataclasses.replace(sent, model=model, stream=method == "streamRawPredict")
