"""Core's last-resort ``classify_error``: runs after every provider's own classifier."""

from __future__ import annotations

import json

from llmplex.errors import LLMConnectionError, LLMError, LLMServerError, LLMTimeoutError
from llmplex.hookspecs import hookimpl

_TIMEOUT_NAMES = frozenset({"TimeoutException", "ReadTimeout", "ConnectTimeout", "PoolTimeout", "WriteTimeout"})
_CONNECTION_NAMES = frozenset(
    {"ConnectError", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError", "ProxyError"}
)


def _mro_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def _raised_in_json_decoder(error: BaseException) -> bool:
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and str(frame.tb_frame.f_globals.get("__name__", "")).startswith("json.")


@hookimpl(trylast=True)
def llmplex_classify_error(error: BaseException) -> LLMError:
    """Map generic Python and httpx failures by type; anything else becomes a plain ``LLMError``.

    A ``JSONDecodeError`` (``orjson``'s too) out of a provider hook is an answer that is not JSON, and a
    ``RecursionError`` raised inside the stdlib ``json`` decoder one nested past its limit: the server's fault.
    """
    if isinstance(error, LLMError):
        return error
    names = _mro_names(error)
    if isinstance(error, TimeoutError) or names & _TIMEOUT_NAMES:
        return LLMTimeoutError(f"the request timed out ({type(error).__name__})", cause=error)
    if isinstance(error, json.JSONDecodeError):
        return LLMServerError(f"the provider sent a body that is not valid JSON ({error.msg})", cause=error)
    if isinstance(error, RecursionError) and _raised_in_json_decoder(error):
        return LLMServerError("the provider sent JSON nested too deeply to decode", cause=error)
    if isinstance(error, ConnectionError) or names & _CONNECTION_NAMES:
        return LLMConnectionError(f"connection failed: {type(error).__name__}: {error}", cause=error)
    return LLMError(f"unexpected provider failure: {type(error).__name__}: {error}", cause=error)
