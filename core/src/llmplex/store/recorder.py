"""``CallLog``: the observer a Client attaches to record every call it makes.

It listens for ``CallEnded`` events (so the engine never imports the store),
turns each into a row on the calling thread (cheap: no I/O) and hands it to the
database's background ``CallWriter``. SQLAlchemy is imported by that writer, when
the first call is logged. ``conversation`` names the conversation of the calls
made inside it (the CLI's ``--continue``); otherwise a call whose messages
continue a logged call joins that call's conversation, and any other call starts
a new one. ``call_context(key_name=...)`` tags calls with the gateway's virtual key.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

from llmplex.events import CallEnded
from llmplex.hookspecs import hookimpl
from llmplex.masking.secret_url import SecretURL
from llmplex.store.database import default_url
from llmplex.store.records import call_row, prefix_hashes
from llmplex.store.writer import CallWriter, writer_for

__all__ = ["CallLog", "call_context", "current_context"]

_context: contextvars.ContextVar[dict[str, str | None] | None] = contextvars.ContextVar(
    "llmplex_call_log_context", default=None
)


@contextlib.contextmanager
def call_context(*, conversation_id: str | None = None, key_name: str | None = None) -> Iterator[None]:
    """Calls made inside this block (this thread or task) are logged with this conversation and/or key name."""
    outer = _context.get() or {}
    token = _context.set({**outer, "conversation_id": conversation_id, "key_name": key_name})
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, str | None]:
    """The ``call_context`` in force here (empty outside any)."""
    return dict(_context.get() or {})


class CallLog:
    """Records the calls of the Clients it is attached to into the database at ``url``.

    ``url``: ``sqlite:///PATH`` or ``postgresql://...``, or a ``SecretURL`` holding one (default: ``logs.db`` in the
    user data directory). ``bodies=False`` keeps only the figures (no prompt,
    answer or options). ``writer`` shares a ``CallWriter`` (default: the process's
    one for ``url``).
    """

    def __init__(
        self, url: str | SecretURL | None = None, *, bodies: bool = True, writer: CallWriter | None = None
    ) -> None:
        self.url = (url.get_secret_value() if isinstance(url, SecretURL) else url) or default_url()
        self.bodies = bodies
        self.writer = writer or writer_for(self.url)

    def __repr__(self) -> str:
        return f"CallLog(writer={self.writer!r}, bodies={self.bodies})"

    @hookimpl
    def llmplex_event(self, event: Any) -> None:
        """Queue each call that ended; its row is built and written on the writer's thread, off the call's path."""
        if isinstance(event, CallEnded):
            context = _context.get() or {}
            conversation, key = context.get("conversation_id"), context.get("key_name")
            self.writer.submit(partial(_row, event, self.bodies, conversation, key, datetime.now(UTC)))

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until the calls made so far are written (``False`` when ``timeout`` passed first)."""
        return self.writer.flush(timeout)


def _row(
    event: CallEnded, bodies: bool, conversation_id: str | None, key_name: str | None, ended: datetime
) -> dict[str, Any]:
    """The row of ``event``; ``_links`` lets the writer join it to the conversation its messages continue."""
    row = call_row(event, bodies=bodies, conversation_id=conversation_id, key_name=key_name, now=ended)
    if conversation_id is None and bodies and event.request is not None:
        row["_links"] = prefix_hashes(event.request.messages)
    return row
