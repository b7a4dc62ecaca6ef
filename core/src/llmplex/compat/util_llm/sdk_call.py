"""util_llm's calls through its own OpenAI SDK client, inside llmplex's engine.

``OpenAIAdapter.client`` is an ``openai.AsyncOpenAI`` (or anything with its
``responses.parse`` / ``create`` / ``retrieve`` / ``delete``); a test may
replace ``client.responses.parse`` with a mock. Each ``execute`` still runs
as one llmplex request, so retries, throttling, the deadline, budgets and
events wrap the call: the openai provider instance of the adapter's llmplex
client sends through `AdapterSDK`, which calls
``adapter.client.responses.parse(**params)`` with the parameters util_llm sent
(looked up at call time, so a mock set after construction is what is called)
and reads the answer by attribute as util_llm did: ``status`` ``incomplete``
raises ``LLMIncompleteError`` with ``incomplete_details.reason``, ``failed``
raises ``LLMError("Request failed: ...")``, refusal content raises
``LLMRefusalError`` with the refusal text, and the parsed output is kept as
the SDK gave it. An SDK client whose ``parse`` was not replaced gets llmplex's
own request through its ``responses.create``, read by llmplex's openai provider.
"""

from __future__ import annotations

import inspect
import json
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from llmplex.compat.util_llm.errors import LLMIncompleteError, LLMRefusalError
from llmplex.errors import LLMError

__all__ = ["AdapterSDK", "Pending", "pending_call", "read_response"]


@dataclass
class Pending:
    """One ``execute``: the parameters util_llm sends, and what the SDK answered (filled by the call)."""

    params: dict[str, Any]
    answer: Any = None
    answered: bool = False


pending_call: ContextVar[Pending | None] = ContextVar("llmplex_util_llm_pending", default=None)


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_response(response: Any) -> None:
    """Raise util_llm's error for an incomplete, failed or refused answer, or one with no parsed output."""
    status = getattr(response, "status", None)
    if status == "incomplete":
        details = getattr(response, "incomplete_details", None)
        reason = _text(getattr(details, "reason", None)) if details else None
        raise LLMIncompleteError(reason or "unknown")
    if status == "failed":
        error = getattr(response, "error", None)
        message = _text(getattr(error, "message", None)) if error else None
        raise LLMError(f"Request failed: {message or 'unknown error'}")
    output = getattr(response, "output", None) or []
    first = output[0] if isinstance(output, (list, tuple)) and output else None
    contents = getattr(first, "content", None) or []
    if isinstance(contents, (list, tuple)) and contents and getattr(contents[0], "type", None) == "refusal":
        refusal = _text(getattr(contents[0], "refusal", None)) or "Unknown refusal"
        raise LLMRefusalError(refusal)
    if getattr(response, "output_parsed", None) is None:
        raise LLMError("Response has no parsed output")
    if getattr(response, "usage", None) is None:
        raise LLMError("Response has no usage information")


def _as_json(response: Any) -> dict[str, Any]:
    """The answer as the Responses API JSON llmplex's openai provider reads (the parsed output as its text)."""
    parsed = getattr(response, "output_parsed", None)
    dump = getattr(parsed, "model_dump_json", None)
    text = dump() if callable(dump) else json.dumps(parsed, default=str)
    usage = getattr(response, "usage", None)
    in_details = getattr(usage, "input_tokens_details", None)
    output_tokens = _number(getattr(usage, "output_tokens", 0))
    # llmplex refuses contradictory usage; the AdapterResponse keeps the SDK's own numbers
    reasoning = min(
        _number(getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", 0)), output_tokens
    )
    response_id = getattr(response, "id", None)
    return {
        "id": response_id if isinstance(response_id, str) else "",
        "object": "response",
        "status": "completed",
        "model": _text(getattr(response, "model", None)),
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {
            "input_tokens": _number(getattr(usage, "input_tokens", 0)),
            "output_tokens": output_tokens,
            "total_tokens": _number(getattr(usage, "total_tokens", 0)),
            "input_tokens_details": {"cached_tokens": _number(getattr(in_details, "cached_tokens", 0))},
            "output_tokens_details": {"reasoning_tokens": reasoning},
        },
    }


def _sdk_method(method: Any) -> bool:
    """Whether ``method`` is an OpenAI SDK client's own (not a mock or a replacement set on the client)."""
    return inspect.ismethod(method) and type(method.__self__).__module__.split(".")[0] == "openai"


class _Responses:
    def __init__(self, owner: AdapterSDK) -> None:
        self.owner = owner

    async def create(self, **payload: Any) -> Any:
        responses = self.owner.adapter.client.responses
        if _sdk_method(getattr(responses, "parse", None)):
            # an SDK client as it is: llmplex's own request through it, read by llmplex's openai provider
            return await responses.create(**payload)
        return await self.owner.send()


class AdapterSDK:
    """Stands in for the openai provider's SDK client: sends through ``adapter.client.responses.parse``."""

    # Not an SDK client: the openai plugin must call ``responses.create`` instead of its lean transport.
    _provider_runtime = "llmplex.compat.util_llm adapter client"

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.responses = _Responses(self)

    async def send(self) -> dict[str, Any]:
        """Call ``responses.parse`` once with the pending ``execute``'s parameters; its answer as JSON."""
        pending = pending_call.get()
        if pending is None:
            raise LLMError("util_llm's OpenAIAdapter client was called outside OpenAIAdapter.execute")
        try:
            answer = self.adapter.client.responses.parse(**pending.params)
            if inspect.isawaitable(answer):
                answer = await answer
        except LLMError:
            raise
        except Exception as error:
            if type(error).__module__.split(".")[0] == "openai":
                raise  # the openai provider classifies its SDK's own errors
            from llmplex.compat.weakincentives.injection import classify

            raise (classify(error) or LLMError(f"Request failed: {error}", cause=error)) from error
        read_response(answer)
        pending.answer, pending.answered = answer, True
        return _as_json(answer)

    async def close(self) -> None:
        """The SDK client is the adapter's."""
