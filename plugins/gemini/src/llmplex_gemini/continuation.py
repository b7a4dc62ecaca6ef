"""Continuation tokens in a lean stream: what its one request showed, and the SDK's stream for the rest.

Gemini may end a request (``finishReason: CONTINUATION``), or be cut part way through one, with a
``continuationToken`` on the first candidate; the SDK's ``generate_content_stream`` then sends the next request
with that token, clears the intermediate finish reason and sums each request's usage (unless the config turns
``automatic_continuation`` off). ``Hop`` records a lean request as the SDK's stream records one; when it ends
resumable, ``rest``/``arest`` are the SDK's own stream from the token on, its usage added to the lean request's.
Chunks with a token are always the SDK's models (``chunks.is_plain`` refuses the field).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from google import genai
from google.genai import _extra_utils, types

__all__ = ["Hop", "arest", "enabled", "rest"]

_CONTINUATION = types.FinishReason.CONTINUATION


@dataclass
class Hop:
    """One lean request of a stream: its latest token, finish reason, prompt feedback and usage."""

    enabled: bool
    token: bytes | None = None
    finish: Any = None
    feedback: bool = False
    usage: Any = None

    def observe(self, chunk: Any) -> Any:
        """Record ``chunk`` (plain data or the SDK's model); the chunk to hand on, its finish reason cleared
        when the stream goes on."""
        if type(chunk) is dict:
            candidates = chunk.get("candidates")
            self.record(chunk.get("usageMetadata"), candidates[0].get("finishReason") if candidates else None)
            return chunk
        self.feedback = self.feedback or chunk.prompt_feedback is not None
        self.usage = self.usage if chunk.usage_metadata is None else chunk.usage_metadata
        if not chunk.candidates:
            return chunk
        candidate = chunk.candidates[0]
        self._finished(candidate.finish_reason, candidate.continuation_token)
        return _extra_utils.clear_intermediate_finish_reason(chunk, self.enabled, self.token)

    def record(self, usage: dict[str, Any] | None, finish: str | None) -> None:
        """Record a plain chunk (the lean reader's) by its usage so far and finish reason; plain data carries no
        continuation token, so a final finish lets go of the one held."""
        if usage is not None:
            self.usage = usage
        if finish:
            self.finish = finish
            if finish != _CONTINUATION:
                self.token = None

    def _finished(self, finish: Any, token: bytes | None) -> None:
        self.finish = finish or self.finish
        if token:
            self.token = token
        elif finish and finish != _CONTINUATION:
            self.token = None

    @property
    def resumable(self) -> bool:
        """The SDK's stream would send another request with ``token``."""
        return _extra_utils.can_resume_stream(self.enabled, self.token, self.finish, self.feedback)

    def summed(self, chunk: types.GenerateContentResponse) -> types.GenerateContentResponse:
        """``chunk`` with this request's usage added to its own (the SDK sums the requests' usage)."""
        if chunk.usage_metadata is None or self.usage is None:
            return chunk
        before = types.GenerateContentResponseUsageMetadata.model_validate(self.usage)
        summed = _extra_utils.merge_pydantic_models(before, chunk.usage_metadata)
        return chunk.model_copy(update={"usage_metadata": summed})


def enabled(config: types.GenerateContentConfig) -> bool:
    """Whether the SDK follows continuation tokens for ``config`` (it does unless told not to)."""
    return config.automatic_continuation is not False


def _continued(parameters: Any, hop: Hop) -> dict[str, Any]:
    config = parameters.config.model_copy(update={"continuation_token": hop.token})
    return {"model": parameters.model, "contents": parameters.contents, "config": config}


def rest(client: genai.Client, parameters: Any, hop: Hop) -> Iterator[types.GenerateContentResponse]:
    """The SDK's stream from ``hop``'s token on, each chunk's usage added to ``hop``'s."""
    for chunk in client.models.generate_content_stream(**_continued(parameters, hop)):
        yield hop.summed(chunk)


async def arest(client: genai.Client, parameters: Any, hop: Hop) -> AsyncIterator[types.GenerateContentResponse]:
    """Async twin of ``rest``."""
    async for chunk in await client.aio.models.generate_content_stream(**_continued(parameters, hop)):
        yield hop.summed(chunk)
