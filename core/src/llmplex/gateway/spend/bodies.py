"""Prompts and answers in the spend log, only when ``[gateway] log_bodies = true``.

``BodyCollector`` is an observer of the gateway's ``Client``: the ``CallEnded``
events of a request's call are kept in that request's context (``collect`` opens
it when the request is let in), and ``bodies_of`` turns the last of them into the
call log's body columns (prompt, answer, their searchable text; media parts as
references; secrets masked as the call log masks them), on the writer's thread.
"""

from __future__ import annotations

import contextvars
from typing import Any

from llmplex.events import CallEnded
from llmplex.hookspecs import hookimpl

__all__ = ["BODY_COLUMNS", "BodyCollector", "bodies_of", "collect", "collected"]

BODY_COLUMNS = ("prompt", "prompt_text", "answer", "answer_text", "thread_hash")

_calls: contextvars.ContextVar[list[CallEnded] | None] = contextvars.ContextVar("llmplex_gateway_calls", default=None)


def collect() -> None:
    """Keep the calls this request makes from now on (called in the request's own context)."""
    _calls.set([])


def collected() -> list[CallEnded]:
    """The calls the request being finished made (taken once)."""
    found = _calls.get()
    if found is not None:
        _calls.set(None)
    return found or []


class BodyCollector:
    """Keeps each ``CallEnded`` in the context of the request that made it (nothing outside a request)."""

    @hookimpl
    def llmplex_event(self, event: Any) -> None:
        """Keep ``event`` if it is a call that ended inside a collecting request."""
        if isinstance(event, CallEnded):
            found = _calls.get()
            if found is not None:
                found.append(event)


def bodies_of(calls: list[CallEnded]) -> dict[str, Any]:
    """The body columns of the last call (the one that answered, or failed last); empty without calls."""
    from llmplex.store.records import call_row

    if not calls:
        return {}
    row = call_row(calls[-1], bodies=True)
    return {column: row.get(column) for column in BODY_COLUMNS}
