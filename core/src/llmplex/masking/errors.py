"""Mask secrets inside exceptions, in place: the whole chain and everything each exception carries.

An SDK exception keeps what the server sent: a proxy that echoes the key puts
it in the message, the parsed body, the response headers and the raw response
(with, behind it, the request and its ``Authorization`` header). Once an error
has been classified, ``scrub_error`` masks every secret
(``redact``) in the exception, its ``__cause__`` /
``__context__`` chain, the ``exceptions`` of exception groups, their ``args`` and
attributes, and the HTTP messages they hold (headers, body, URL), so that no
``str``, ``repr`` or traceback shows one. Objects of other kinds are left alone:
only values that contain a secret change. A group's message cannot be changed in
place, so a group whose message holds a secret is replaced by a copy with it masked.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, TypeVar, cast

from llmplex.masking.values import REDACTED, is_secret_name, redact

__all__ = ["scrub_error"]

E = TypeVar("E", bound=BaseException)

_MAX_CHAIN = 64
"""Exceptions walked at most per error (a chain longer than this is pathological)."""


def scrub_error(error: E) -> E:
    """Mask every secret in ``error`` and in every exception chained to or held by it, in place.

    Returns ``error``, or, when it is an exception group whose message holds a secret, its masked copy.
    """
    if isinstance(error, BaseExceptionGroup):
        error = cast(E, _masked_group(error))
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo and len(seen) < _MAX_CHAIN:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        todo += _scrub_exception(current)
    return error


def _scrub_exception(error: BaseException) -> list[BaseException]:
    """Scrub one exception; return the exceptions it leads to."""
    suppress = error.__suppress_context__
    if isinstance(error.__cause__, BaseExceptionGroup):
        error.__cause__ = _masked_group(error.__cause__)
    if isinstance(error.__context__, BaseExceptionGroup):
        error.__context__ = _masked_group(error.__context__)
    error.__suppress_context__ = suppress
    linked = [e for e in (error.__cause__, error.__context__) if e is not None]
    if isinstance(error, BaseExceptionGroup):
        linked += error.exceptions
    args = tuple(_scrubbed(a, linked) for a in error.args)
    if args != error.args:
        error.args = args
    attributes = vars(error) if hasattr(error, "__dict__") else {}
    for name, value in list(attributes.items()):
        masked = _scrubbed(value, linked)
        if masked is not value and masked != value:
            attributes[name] = masked
    return linked


def _masked_group(group: BaseExceptionGroup[Any], depth: int = 0) -> BaseExceptionGroup[Any]:
    """``group`` itself, or a copy of it with its message (and those of the groups inside) masked."""
    inner = [
        _masked_group(e, depth + 1) if isinstance(e, BaseExceptionGroup) and depth < _MAX_CHAIN else e
        for e in group.exceptions
    ]
    message = redact(group.message)
    if message == group.message and all(a is b for a, b in zip(inner, group.exceptions, strict=True)):
        return group
    try:
        masked = type(group)(message, inner)
    except Exception:  # a subclass with a constructor of its own: a plain group keeps what matters
        masked = BaseExceptionGroup(message, inner)
    masked.__cause__, masked.__context__ = group.__cause__, group.__context__
    masked.__suppress_context__ = group.__suppress_context__
    masked.__traceback__ = group.__traceback__
    if hasattr(group, "__dict__"):
        vars(masked).update(vars(group))  # attributes and __notes__, scrubbed by the walk
    return masked


def _scrubbed(value: Any, linked: list[BaseException]) -> Any:
    """``value`` with secrets masked: a new value for text and plain data, the same object (scrubbed) otherwise."""
    if isinstance(value, (str, dict, list, tuple)):
        linked += _exceptions_in(value)
        return redact(value)
    if isinstance(value, (bytes, bytearray)):
        return _scrubbed_bytes(value)
    if isinstance(value, BaseException):
        linked.append(value)
    elif isinstance(value, MutableMapping):
        _scrub_headers(value)
    elif isinstance(value, Mapping):  # read-only headers (aiohttp's): a masked copy
        return redact(value)
    elif hasattr(value, "headers"):
        _scrub_message(value)
    return value


def _exceptions_in(value: Any) -> list[BaseException]:
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return [item for item in items if isinstance(item, BaseException)]


def _scrubbed_bytes(value: bytes | bytearray) -> bytes | bytearray:
    text = value.decode("utf-8", "surrogateescape")
    masked = redact(text)
    return value if masked == text else type(value)(masked.encode("utf-8", "surrogateescape"))


def _scrub_headers(headers: MutableMapping[Any, Any]) -> None:
    """Headers (``httpx.Headers``, a dict) in place: secret-named ones masked whole, the others redacted."""
    for name in list(headers.keys()):
        value = headers[name]
        secret = is_secret_name(name.decode("latin-1") if isinstance(name, bytes) else str(name))
        masked: str | bytes | bytearray
        if isinstance(value, str):
            masked = REDACTED if secret else redact(value)
        elif isinstance(value, (bytes, bytearray)):
            masked = REDACTED.encode() if secret else _scrubbed_bytes(value)
        else:
            continue
        if masked != value:
            headers[name] = masked


def _scrub_message(message: Any, depth: int = 0) -> None:
    """An HTTP request or response (httpx, httpx2, requests): headers, read body, URL, and its request."""
    headers = getattr(message, "headers", None)
    if isinstance(headers, MutableMapping):
        _scrub_headers(headers)
    state = vars(message) if hasattr(message, "__dict__") else {}
    for name in ("_content", "_text", "content", "text", "body"):
        if name in state and isinstance(state[name], (str, bytes, bytearray)):
            state[name] = _scrubbed(state[name], [])
    url = state.get("url")
    if url is not None and redact(str(url)) != str(url):
        try:
            state["url"] = type(url)(redact(str(url)))
        except (TypeError, ValueError):  # a URL type that cannot be rebuilt from text: drop it rather than leak
            state["url"] = redact(str(url))
    request = state.get("_request") or state.get("request")
    if request is not None and request is not message and depth == 0 and hasattr(request, "headers"):
        _scrub_message(request, depth + 1)
