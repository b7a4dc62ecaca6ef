"""The process-wide default Client behind ``llmplex.complete()``, ``abatch()`` and their siblings.

It sits below the module functions and the batch runner, which both reach it here
(``llmplex.default_client()`` is its public name), so no lower layer imports ``llmplex``.
"""

from __future__ import annotations

import atexit
from _thread import allocate_lock

TYPE_CHECKING = False  # not typing's: ``import llmplex`` does not import typing (see llmplex/__init__.py)
if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = ["current", "shared"]

_default: Client | None = None
_lock = allocate_lock()  # threading.Lock itself, without importing threading


def current() -> Client | None:
    """The default client if it was built already, else ``None`` (nothing is built)."""
    return _default


def shared() -> Client:
    """The default client, built on first use from the configuration files and ``LLMPLEX_*`` variables."""
    global _default
    if _default is None:
        with _lock:
            if _default is None:
                from llmplex.client import Client

                _default = Client()
                atexit.register(_default.close)  # its connections end cleanly when the interpreter exits
    return _default
