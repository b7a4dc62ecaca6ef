"""The conformance kit for provider plugins (a pytest plugin; needs ``pytest``).

Subclass ``HTTPConformanceTests`` (an HTTP plugin: the kit runs a local
server and your ``WireAdapter`` speaks your API's JSON) or
``ProviderConformanceTests`` (any other transport, faked by your class) in
your plugin's tests, declare the prefix, a model and the capabilities; every
standard test then runs against your plugin::

    from llmplex.testing import HTTPConformanceTests

    class TestConformance(HTTPConformanceTests):
        prefix = "echo"
        model = "echo-1"
        wire = EchoWire()
        ...

Nothing here is imported by ``import llmplex``; names load on first use so that
pytest can load the plugin entry point cheaply.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmplex.testing.http_wire import HTTPConformanceTests, WireAdapter, sse
    from llmplex.testing.kit import ProviderConformanceTests
    from llmplex.testing.observe import Observed
    from llmplex.testing.openai_chat import OpenAIChatWire
    from llmplex.testing.replies import ERROR_KINDS, ErrorKind, FakeError, Reply
    from llmplex.testing.sent import OPTION_NAMES, SentMessage, SentRequest, SentTool, SentToolCall
    from llmplex.testing.server import Answer, Received, WireServer

__all__ = [
    "ERROR_KINDS",
    "OPTION_NAMES",
    "Answer",
    "ErrorKind",
    "FakeError",
    "HTTPConformanceTests",
    "Observed",
    "OpenAIChatWire",
    "ProviderConformanceTests",
    "Received",
    "Reply",
    "SentMessage",
    "SentRequest",
    "SentTool",
    "SentToolCall",
    "WireAdapter",
    "WireServer",
    "sse",
]

_LAZY = {
    "HTTPConformanceTests": "llmplex.testing.http_wire",
    "WireAdapter": "llmplex.testing.http_wire",
    "sse": "llmplex.testing.http_wire",
    "ProviderConformanceTests": "llmplex.testing.kit",
    "Observed": "llmplex.testing.observe",
    "OpenAIChatWire": "llmplex.testing.openai_chat",
    "ERROR_KINDS": "llmplex.testing.replies",
    "OPTION_NAMES": "llmplex.testing.sent",
    "ErrorKind": "llmplex.testing.replies",
    "FakeError": "llmplex.testing.replies",
    "Reply": "llmplex.testing.replies",
    "SentMessage": "llmplex.testing.sent",
    "SentRequest": "llmplex.testing.sent",
    "SentTool": "llmplex.testing.sent",
    "SentToolCall": "llmplex.testing.sent",
    "Answer": "llmplex.testing.server",
    "Received": "llmplex.testing.server",
    "WireServer": "llmplex.testing.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llmplex.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
