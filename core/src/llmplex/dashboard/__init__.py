"""The call log's dashboard (``llmplex logs --serve``; the gateway's ``/ui``), ``pip install 'llmplex[gateway]'``.

``create_dashboard(url)`` (``llmplex.dashboard.app``) is the read-only ASGI application over a call
log: spend and calls per day, cost per model, provider and key as charts, a searchable, paged table of
calls and one call's whole conversation. ``guarded(app, key)`` (``llmplex.dashboard.guard``) puts it
behind a key; ``serve`` (``llmplex.dashboard.server``) runs it on 127.0.0.1. The page loads nothing
from the network: its script and styles ship in ``llmplex/dashboard/static``. Importing this package
does not import the web stack: each submodule imports what it uses.
"""

from __future__ import annotations

__all__: list[str] = []
