"""The conformance kit for provider plugins (a pytest plugin; needs ``pytest``).

Subclass :class:`ProviderConformanceTests` in your plugin's tests, declare the
prefix, a model and the capabilities, and fake your transport; every standard
test then runs against your plugin::

    from llmplex.testing import ProviderConformanceTests

    class TestConformance(ProviderConformanceTests):
        prefix = "echo"
        model = "echo-1"
        ...

Nothing here is imported by ``import llmplex``; names load on first use so that
pytest can load the plugin entry point cheaply.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmplex.testing.kit import ProviderConformanceTests
    from llmplex.testing.observe import Observed
    from llmplex.testing.replies import ErrorKind, FakeError, Reply

__all__ = ["ErrorKind", "FakeError", "Observed", "ProviderConformanceTests", "Reply"]

_LAZY = {
    "ProviderConformanceTests": "llmplex.testing.kit",
    "Observed": "llmplex.testing.observe",
    "ErrorKind": "llmplex.testing.replies",
    "FakeError": "llmplex.testing.replies",
    "Reply": "llmplex.testing.replies",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llmplex.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
