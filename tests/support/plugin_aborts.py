"""How a test plugin gives up with what is not an ``Exception`` (issue 34's containment tests): ``abort(kind)``."""

from __future__ import annotations

import asyncio
import sys


class PluginAbort(BaseException):
    """A BaseException of the plugin's own."""


def abort(kind: str) -> None:
    """Raise what ``kind`` names: ``exit`` (``SystemExit``), ``abort`` (``PluginAbort``), ``genexit``
    (``GeneratorExit``), ``interrupt`` (Ctrl-C), ``cancelled`` (``CancelledError``), ``group`` (a
    ``BaseExceptionGroup``); nothing for any other."""
    if kind == "exit":
        sys.exit("fatal")
    if kind == "abort":
        raise PluginAbort("gave up")
    if kind == "genexit":
        raise GeneratorExit
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "cancelled":
        raise asyncio.CancelledError
    if kind == "group":
        raise BaseExceptionGroup("several", [PluginAbort("one")])
