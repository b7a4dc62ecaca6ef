"""Core's last-resort ``classify_error``: runs after every provider's own classifier."""

from __future__ import annotations

from llmplex.errors import LLMConnectionError, LLMError, LLMTimeoutError
from llmplex.hookspecs import hookimpl

_TIMEOUT_NAMES = frozenset({"TimeoutException", "ReadTimeout", "ConnectTimeout", "PoolTimeout", "WriteTimeout"})
_CONNECTION_NAMES = frozenset(
    {"ConnectError", "RemoteProtocolError", "ReadError", "WriteError", "NetworkError", "ProxyError"}
)


def _mro_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


@hookimpl(trylast=True)
def llmplex_classify_error(error: BaseException) -> LLMError:
    """Map generic Python and httpx failures by type; anything else becomes a plain ``LLMError``."""
    if isinstance(error, LLMError):
        return error
    names = _mro_names(error)
    if isinstance(error, TimeoutError) or names & _TIMEOUT_NAMES:
        return LLMTimeoutError(f"the request timed out ({type(error).__name__})", cause=error)
    if isinstance(error, ConnectionError) or names & _CONNECTION_NAMES:
        return LLMConnectionError(f"connection failed: {type(error).__name__}: {error}", cause=error)
    return LLMError(f"unexpected provider failure: {type(error).__name__}: {error}", cause=error)
