"""Injected provider clients: the ``client=`` / ``completion=`` a weakincentives test hands an adapter.

The injected object is what gets called, in place of the SDK client llmplex
would build, while llmplex's engine (retries, throttling, deadlines, budgets,
events) still runs around each call. It sees the keyword arguments the
original adapter sent (``responses.create(model=, input=, tools=, ...)`` or
``completion(model=, messages=, ...)``); what it returns may be an SDK model, a
mapping or any object with the same attributes, and is read as JSON. Its
exceptions are classified the way weakincentives did (status 429, a class named
``*RateLimit*``, ``insufficient_quota``, ``*Timeout*``) into llmplex errors, so
the engine retries what is worth retrying. A call still running at llmplex's
deadline is given up as a timeout.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMError, LLMQuotaExhaustedError, LLMRateLimitError, LLMTimeoutError
from llmplex.plugins.sdk_clients import SDKClients

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = ["InjectedCompletion", "InjectedOpenAI", "inject", "plain"]

_RATE_LIMIT_CODES = frozenset({"rate_limit", "rate_limit_exceeded"})
_MAX_DEPTH = 64


def _attributes(value: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    names = getattr(value, "__dict__", None) or {
        name: getattr(value, name) for name in getattr(type(value), "__slots__", ()) if hasattr(value, name)
    }
    return {str(k): v for k, v in names.items() if not str(k).startswith("_")}


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-like data: SDK models, dataclasses, mappings and attribute objects become dicts.

    An object is read by its attributes, as weakincentives' adapters read provider answers, with what its
    ``model_dump()``/``to_dict()`` adds on top: a fake whose ``model_dump`` leaves out ``choices`` (or a
    ``dict`` subclass carrying ``choices`` as an attribute) is read as the original adapters read it.
    """
    if depth > _MAX_DEPTH:
        raise LLMError("an injected client returned an object nested more than 64 levels deep")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    merged: dict[str, Any] = {}
    if isinstance(value, Mapping):
        merged.update({str(k): v for k, v in value.items()})
    else:
        dump = getattr(value, "model_dump", None) or getattr(value, "to_dict", None)
        dumped = dump() if callable(dump) else None
        if isinstance(dumped, Mapping):
            merged.update({str(k): v for k, v in dumped.items()})
    merged.update(_attributes(value) if not isinstance(value, (dict, type)) or type(value) is not dict else {})
    return {k: plain(v, depth + 1) for k, v in merged.items()}


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value > 0 else None
    if isinstance(value, str) and value.isdigit():
        return float(value)
    seconds = getattr(value, "total_seconds", None)
    return float(seconds()) if callable(seconds) and seconds() > 0 else None


def _retry_after(error: BaseException) -> float | None:
    direct = _seconds(getattr(error, "retry_after", None))
    if direct is not None:
        return direct
    for holder in (error, getattr(error, "response", None)):
        headers = holder.get("headers") if isinstance(holder, Mapping) else getattr(holder, "headers", None)
        if isinstance(headers, Mapping):
            lowered = {str(k).lower(): v for k, v in headers.items()}
            found = _seconds(lowered.get("retry-after"))
            if found is not None:
                return found
        if isinstance(holder, Mapping):
            found = _seconds(holder.get("retry_after"))
            if found is not None:
                return found
    return None


def classify(error: Exception) -> LLMError | None:
    """The llmplex error weakincentives' throttle detection would have seen in ``error``, or ``None``."""
    message = str(error) or f"{type(error).__name__} from the injected client"
    code = getattr(error, "code", None)
    name = type(error).__name__.lower()
    body = getattr(error, "response", None)
    payload = dict(body) if isinstance(body, Mapping) else None
    if "insufficient_quota" in message.lower() or code == "insufficient_quota":
        return LLMQuotaExhaustedError(message, response_body=payload, cause=error)
    if getattr(error, "status_code", None) == 429 or "ratelimit" in name or code in _RATE_LIMIT_CODES:
        return LLMRateLimitError(message, status_code=429, retry_after=_retry_after(error), response_body=payload)
    if "timeout" in name:
        return LLMTimeoutError(message, cause=error)
    return None


def _call(target: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    try:
        return target(**kwargs)
    except LLMError:
        raise
    except Exception as error:
        if type(error).__module__.split(".")[0] in ("openai", "litellm"):
            raise  # the provider plugin classifies its SDK's own errors
        mapped = classify(error)
        if mapped is None:
            raise
        raise mapped from error


def _bounded(target: Callable[..., Any], kwargs: dict[str, Any], timeout: float | None) -> Any:
    """``_call``, given up after ``timeout`` seconds (the time left before llmplex's deadline).

    A fake that never returns cannot be interrupted: its thread is left to finish
    on its own (a daemon thread, so it never holds the process open).
    """
    if timeout is None:
        return _call(target, kwargs)
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = _call(target, kwargs)
        except BaseException as error:
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=run, name="llmplex-injected-call", daemon=True).start()
    if not done.wait(max(timeout, 0.0)):
        raise LLMTimeoutError(f"the injected client did not answer within {timeout:.3g}s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _sdk_client(client: Any) -> bool:
    return type(client).__module__.split(".")[0] == "openai"


class _Responses:
    def __init__(self, owner: InjectedOpenAI) -> None:
        self.owner = owner

    def create(self, **kwargs: Any) -> Any:
        return self.owner.create(kwargs)


class InjectedOpenAI:
    """Stands in for the openai plugin's SDK client and sends through ``client.responses.create``."""

    # Not an SDK client: the openai plugin must call ``responses.create`` instead of its lean transport.
    _provider_runtime = "llmplex.compat injected client"

    def __init__(self, client: Any) -> None:
        if not callable(getattr(getattr(client, "responses", None), "create", None)):
            from llmplex.compat.weakincentives.errors import InvalidValueError

            raise InvalidValueError(
                f"client must have responses.create(**request) like openai.OpenAI, got {type(client).__name__}"
            )
        self.client = client
        self.responses = _Responses(self)

    def create(self, kwargs: dict[str, Any]) -> Any:
        """One ``responses.create`` of the injected client, answered as JSON."""
        request = {k: v for k, v in kwargs.items() if k not in ("extra_body", "timeout")}
        request.update(kwargs.get("extra_body") or {})
        timeout = kwargs.get("timeout")
        if _sdk_client(self.client) and timeout is not None:
            request["timeout"] = timeout  # a real SDK client holds to it itself
            timeout = None
        return _responses_json(plain(_bounded(self.client.responses.create, request, timeout)))

    def close(self) -> None:
        """The injected client is its owner's to close."""


def _responses_json(data: Any) -> Any:
    """A Responses API answer with what fakes leave out filled in (status, item and part types)."""
    if not isinstance(data, dict) or not isinstance(data.get("output"), list):
        return data
    data.setdefault("status", "completed")
    for item in data["output"]:
        if not isinstance(item, dict):
            continue
        if "type" not in item:
            item["type"] = "function_call" if "name" in item and "arguments" in item else "message"
        if item["type"] == "function_call":
            item.setdefault("call_id", item.get("id"))
            if not isinstance(item.get("arguments"), str):
                item["arguments"] = json.dumps(item.get("arguments") or {})
        content = item.get("content")
        parts: list[Any] = content if isinstance(content, list) else []
        block = next((p for p in parts if isinstance(p, dict) and p.get("json") is not None), None)
        if block is not None:  # weakincentives read the first output_json block
            item["content"] = parts = [{"type": "output_text", "text": json.dumps(block["json"])}]
        for part in parts:
            if isinstance(part, dict) and "type" not in part:
                part["type"] = "refusal" if "refusal" in part else "output_text"
            if isinstance(part, dict) and part.get("type") == "output_text" and part.get("text") is None:
                parsed = part.get("parsed")
                part["text"] = json.dumps(parsed) if parsed is not None else ""
    return data


class InjectedCompletion:
    """Stands in for the litellm plugin's client and sends through an injected ``completion(**request)``."""

    def __init__(self, completion: Any) -> None:
        if not callable(completion):
            from llmplex.compat.weakincentives.errors import InvalidValueError

            raise InvalidValueError(f"completion must be callable like litellm.completion, got {completion!r}")
        self.function = completion

    def completion(self, payload: dict[str, Any], timeout: float | None) -> Any:
        """One call of the injected completion, its answer read as LiteLLM's ``ModelResponse``."""
        return _model_response(plain(_bounded(self.function, dict(payload), timeout)))

    def close(self) -> None:
        """The injected completion is its owner's."""


def _namespace(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{k: _namespace(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_namespace(v) for v in value]
    return value


def _content_text(content: Any, parsed: Any) -> Any:
    """A message's content as text, as weakincentives read it: the first ``output_json`` block's ``json`` (or the
    message's ``parsed`` value when it has no content) as JSON, else the parts' texts joined."""
    if not content and parsed is not None:
        return json.dumps(parsed)
    if not isinstance(content, list):
        return content
    for part in content:
        if isinstance(part, dict) and part.get("json") is not None:
            return json.dumps(part["json"])
    return "".join(str(p.get("text") or "") if isinstance(p, dict) else str(p) for p in content)


def _model_response(data: Any) -> Any:
    """LiteLLM's ``ModelResponse`` shape (attributes) with what fakes leave out set to ``None``."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), Sequence):
        return _namespace(data)
    for key in ("id", "model", "usage"):
        data.setdefault(key, None)
    for choice in data["choices"]:
        if isinstance(choice, dict):
            choice.setdefault("finish_reason", None)
            message = choice.setdefault("message", {})
            if isinstance(message, dict):
                for key in ("content", "tool_calls", "refusal"):
                    message.setdefault(key, None)
                message["content"] = _content_text(message["content"], message.get("parsed"))
                for call in message["tool_calls"] or ():
                    call.setdefault("id", None)
    return _namespace(data)


class _Fixed(SDKClients):
    """A provider instance's clients when one was injected: always that one, sync or async."""

    def __init__(self, clients: SDKClients, injected: Any) -> None:
        super().__init__(clients.info, clients.settings)
        self.injected = injected

    def get(self, asynchronous: bool) -> Any:
        """The injected client."""
        return self.injected


def inject(client: Client, prefix: str, injected: Any) -> None:
    """Make ``client``'s provider instance ``prefix`` send through ``injected``."""
    instance = client.router.instance(prefix)
    instance.clients = _Fixed(instance.clients, injected)
