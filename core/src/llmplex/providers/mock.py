"""The ``mock`` provider: deterministic echo, scripted answers and errors, a record of calls.

It is a real plugin, registered through the ``llmplex.providers`` entry point
like any other, and it is what your own tests and the conformance kit use::

    client = llmplex.Client()
    backend = client.provider_client("mock")
    backend.push(text="scripted answer", usage={"input_tokens": 3, "output_tokens": 2})
    backend.push_error(llmplex.LLMRateLimitError("slow down", retry_after=1))
    client.complete("mock:any", "hi")   # -> "scripted answer"
    backend.calls                       # every payload received

With nothing scripted the model echoes the last user message; ``max_tokens``
(counted in words) truncates it with finish_reason ``"length"``. ``embed``
answers each text with a deterministic vector (a scripted error still raises),
and ``models`` lists ``echo`` and ``embed``. It takes images, documents and
audio: the payload holds each part as its JSON data (bytes in base64), and the
echo describes it, e.g. ``what is this? [image: image/png, 68 bytes]``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo, ProviderSettings
from llmplex.types import (
    Embeddings,
    Message,
    ModelInfo,
    Request,
    Response,
    StreamEvent,
    StreamState,
    Tool,
    ToolCall,
    Usage,
)

__all__ = ["MockBackend", "MockSettings"]


class MockSettings(ProviderSettings):
    """Settings of the mock provider (an optional key, to test secret handling)."""

    env_vars = {"api_key": ("LLMPLEX_MOCK_API_KEY",)}

    api_key: SecretStr | None = None


@dataclass
class _Scripted:
    text: str = ""
    tool_calls: Sequence[Mapping[str, Any]] = ()
    usage: Mapping[str, int] | None = None
    finish_reason: str | None = None
    model: str | None = None
    delay: float = 0.0
    error: BaseException | None = None
    refusal: str | None = None
    response_id: str | None = None


@dataclass
class MockBackend:
    """The mock's "SDK client": a queue of scripted outcomes and a record of calls."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    _script: deque[_Scripted] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def push(
        self,
        text: str = "",
        *,
        tool_calls: Sequence[Mapping[str, Any]] = (),
        usage: Mapping[str, int] | None = None,
        finish_reason: str | None = None,
        model: str | None = None,
        delay: float = 0.0,
        refusal: str | None = None,
        response_id: str | None = None,
    ) -> None:
        """Queue one answer; ``tool_calls`` items are ``{"name", "arguments", "id"?}``.

        ``refusal`` makes it a refusal (finish reason ``"refusal"`` unless given);
        ``response_id`` replaces the generated ``mock-N`` id.
        """
        scripted = _Scripted(
            text, tool_calls, usage, finish_reason, model, delay, refusal=refusal, response_id=response_id
        )
        with self._lock:
            self._script.append(scripted)

    def push_error(self, error: BaseException, *, delay: float = 0.0) -> None:
        """Queue one failure: the attempt that takes it raises ``error``."""
        with self._lock:
            self._script.append(_Scripted(error=error, delay=delay))

    def reset(self) -> None:
        """Forget the script and the recorded calls."""
        with self._lock:
            self._script.clear()
            self.calls.clear()
            self.deleted.clear()

    def take_embedding(self, payload: dict[str, Any]) -> BaseException | None:
        """Record an embedding request; return the scripted error its attempt raises, if one is next."""
        with self._lock:
            self.calls.append(payload)
            if self._script and self._script[0].error is not None:
                return self._script.popleft().error
        return None

    def take(self, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Record ``payload``; return the raw answer to give and the delay before it."""
        with self._lock:
            self.calls.append(payload)
            scripted = self._script.popleft() if self._script else None
            response_id = f"mock-{next(self._ids)}"
        if scripted is None:
            return _echo(payload, response_id), 0.0
        if scripted.error is not None:
            return {"error": scripted.error}, scripted.delay
        calls = [
            {"id": c.get("id") or f"call_{i}", "name": c["name"], "arguments": c.get("arguments", "{}")}
            for i, c in enumerate(scripted.tool_calls)
        ]
        finish = "refusal" if scripted.refusal else ("tool_calls" if calls else "stop")
        return {
            "id": scripted.response_id or response_id,
            "model": scripted.model or payload["model"],
            "text": scripted.text,
            "tool_calls": calls,
            "usage": dict(scripted.usage or _count_usage(payload, scripted.text)),
            "finish_reason": scripted.finish_reason or finish,
            "refusal": scripted.refusal,
        }, scripted.delay


def _words(content: str | Sequence[Any] | None) -> list[str]:
    """The words of a message's content; a part in a list content is one bracketed description."""
    if content is None or isinstance(content, str):
        return (content or "").split()
    words: list[str] = []
    for piece in content:
        words += piece.split() if isinstance(piece, str) else [f"[{piece['type']}: {piece['description']}]"]
    return words


def _message_data(message: Message) -> dict[str, Any]:
    data = message.model_dump(exclude_defaults=True)
    if isinstance(message.content, tuple):
        data["content"] = [
            piece if isinstance(piece, str) else {**piece.model_dump(mode="json"), "description": piece.describe()}
            for piece in message.content
        ]
    return data


def _count_usage(payload: Mapping[str, Any], text: str) -> dict[str, int]:
    prompt_words = sum(len(_words(m.get("content"))) for m in payload["messages"])  # a part counts as one word
    return {"input_tokens": prompt_words, "output_tokens": len(_words(text))}


def _echo(payload: Mapping[str, Any], response_id: str) -> dict[str, Any]:
    last_user = next((m for m in reversed(payload["messages"]) if m["role"] == "user"), None)
    words = _words(last_user["content"] if last_user else "")
    limit = payload["options"].get("max_tokens")
    truncated = limit is not None and len(words) > limit
    text = " ".join(words[:limit] if truncated else words)
    return {
        "id": response_id,
        "model": payload["model"],
        "text": text,
        "tool_calls": [],
        "usage": _count_usage(payload, text),
        "finish_reason": "length" if truncated else "stop",
    }


def _wait(delay: float, timeout: float | None) -> float:
    """How long an attempt waits for its answer: the scripted delay, cut short at ``timeout``."""
    return delay if timeout is None else min(delay, timeout)


def _outcome(raw: dict[str, Any], delay: float, timeout: float | None) -> dict[str, Any]:
    """What the attempt gets once its wait is over: the answer, the scripted error, or a timeout."""
    if timeout is not None and delay > timeout:
        raise TimeoutError(f"mock answer took longer than the {timeout:.3f}s timeout")
    if "error" in raw:
        raise raw["error"]
    return raw


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``mock`` prefix."""
    register(
        ProviderInfo(
            name="mock",
            settings_model=MockSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                response_chains=True,
                delete_response=True,
                embeddings=True,
                embedding_dimensions=True,
                embedding_batch_size=8,
                input_parts=frozenset({"image", "document", "audio"}),
            ),
            default_model="echo",
            default_embedding_model="embed",
            create_client=lambda settings: MockBackend(),
            description="Deterministic echo and scripted answers for tests (built in).",
        )
    )


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    """A plain-data payload that keeps everything a test may want to assert on."""
    return {
        "model": request.model,
        "messages": [_message_data(m) for m in request.messages],
        "tools": llmplex_tool_declarations(request.tools),
        "tool_choice": request.tool_choice,
        "output": request.output.model_dump() if request.output else None,
        "options": request.config.set_options(),
        "provider_options": request.provider_options,
        "previous_response_id": request.previous_response_id,
        "stream": request.stream,
    }


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool as its plain data: name, description, parameters."""
    return [tool.model_dump() for tool in tools]


@hookimpl
def llmplex_call(payload: dict[str, Any], client: MockBackend, timeout: float | None) -> Any:
    """Answer from the script or echo."""
    raw, delay = client.take(payload)
    if delay:
        time.sleep(_wait(delay, timeout))
    return _outcome(raw, delay, timeout)


@hookimpl
async def llmplex_acall(payload: dict[str, Any], client: MockBackend, timeout: float | None) -> Any:
    """Async answer from the script or echo."""
    raw, delay = client.take(payload)
    await asyncio.sleep(_wait(delay, timeout))
    return _outcome(raw, delay, timeout)


@hookimpl
def llmplex_delete_response(response_id: str, client: MockBackend) -> bool:
    """Record the deletion of a stored response (response chains)."""
    with client._lock:
        client.deleted.append(response_id)
    return True


def _chunks(raw: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    words = raw["text"].split(" ") if raw["text"] else []
    for i, word in enumerate(words):
        yield {"id": raw["id"], "model": raw["model"], "text": word if i == 0 else " " + word}
    for i, call in enumerate(raw["tool_calls"]):
        yield {"id": raw["id"], "tool_call": {"index": i, **call}}
    yield {"id": raw["id"], "usage": raw["usage"], "finish_reason": raw["finish_reason"]}


@hookimpl
def llmplex_stream(payload: dict[str, Any], client: MockBackend, timeout: float | None) -> Iterator[dict[str, Any]]:
    """The answer as word chunks, tool calls, then usage and finish reason."""
    return _chunks(llmplex_call(payload, client, timeout))


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], client: MockBackend, timeout: float | None
) -> AsyncIterator[dict[str, Any]]:
    """Async twin of ``llmplex_stream``."""
    raw = await llmplex_acall(payload, client, timeout)

    async def chunks() -> AsyncIterator[dict[str, Any]]:
        for chunk in _chunks(raw):
            yield chunk

    return chunks()


@hookimpl
def llmplex_parse(raw: dict[str, Any]) -> Response:
    """The mock's raw dict as a Response."""
    return Response(
        text=raw["text"],
        tool_calls=tuple(ToolCall(**c) for c in raw["tool_calls"]),
        finish_reason=raw["finish_reason"],
        usage=Usage(**raw["usage"]),
        model=raw["model"],
        response_id=raw["id"],
        refusal=raw.get("refusal"),
        raw=raw,
    )


@hookimpl
def llmplex_parse_event(raw_event: dict[str, Any], state: StreamState) -> list[StreamEvent]:
    """One chunk as stream events."""
    rid = raw_event["id"]
    if "text" in raw_event:
        return [StreamEvent(type="text", text=raw_event["text"], response_id=rid, model=raw_event["model"])]
    if "tool_call" in raw_event:
        call = raw_event["tool_call"]
        return [
            StreamEvent(
                type="tool_call",
                tool_call_index=call["index"],
                tool_call_id=call["id"],
                tool_name=call["name"],
                arguments_delta=call["arguments"],
                response_id=rid,
            )
        ]
    return [
        StreamEvent(type="usage", usage=Usage(**raw_event["usage"]), response_id=rid),
        StreamEvent(type="finish", finish_reason=raw_event["finish_reason"], response_id=rid),
    ]


MOCK_EMBEDDING_DIMENSIONS = 8
"""The length of the mock's vectors unless ``dimensions`` asks for fewer."""


def _vector(text: str, dimensions: int) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return [(digest[i] - 127.5) / 127.5 for i in range(dimensions)]


@hookimpl
def llmplex_embed(texts: Sequence[str], model: str, dimensions: int | None, client: MockBackend) -> Embeddings:
    """A deterministic vector per text (from its sha256), recorded as ``{"embed": texts, ...}``."""
    error = client.take_embedding({"model": model, "embed": list(texts), "dimensions": dimensions})
    if error is not None:
        raise error
    size = min(dimensions or MOCK_EMBEDDING_DIMENSIONS, MOCK_EMBEDDING_DIMENSIONS)
    words = sum(len(_words(text)) for text in texts)
    return Embeddings(vectors=[_vector(t, size) for t in texts], usage=Usage(input_tokens=words), model=model)


@hookimpl
def llmplex_models() -> list[ModelInfo]:
    """The mock's two models."""
    return [
        ModelInfo(id="echo", input_parts=("text",), features=("chat", "tools", "streaming", "response_chains")),
        ModelInfo(id="embed", input_parts=("text",), features=("embeddings",)),
    ]
