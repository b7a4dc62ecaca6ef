"""A client with what a first use of a model loads already loaded, for tests of the path every later call takes."""

from __future__ import annotations

import llmplex

__all__ = ["loaded"]


def loaded(client: llmplex.Client, model: str = "mock:m") -> llmplex.Client:
    """``client``, its observers loaded and ``model`` routed: an async call to ``model`` starts on the loop at once
    (a first use loads on a worker thread first, ``tests/reliability/test_async_first_use.py``)."""
    client.host.load_observers(client.config.disabled)
    client.route(model)
    return client
