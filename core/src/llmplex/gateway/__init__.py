"""The llmplex gateway (``llmplex serve``, ``pip install 'llmplex[gateway]'``): an OpenAI- and
Anthropic-compatible HTTP server over every llmplex model.

``create_app`` builds the ASGI application over a ``Client``; ``serve`` runs it
on uvicorn. Nothing in the rest of llmplex imports this package, and importing
it does not import the web stack: each submodule imports what it uses.
"""

from __future__ import annotations

__all__: list[str] = []
