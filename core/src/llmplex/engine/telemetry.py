"""Deliver events to ``llmplex_event`` observers and to the ``llmplex`` logger."""

from __future__ import annotations

import logging
from typing import Any

from llmplex.events import Event
from llmplex.plugins.host import PluginHost

__all__ = ["Telemetry", "logger"]

logger = logging.getLogger("llmplex")
logger.addHandler(logging.NullHandler())  # a library stays silent until the application configures logging


class Telemetry:
    """Builds an event only when an observer or an enabled log level will see it."""

    def __init__(self, host: PluginHost) -> None:
        self.host = host

    def wants(self, kind: type[Event], listening: bool | None = None) -> bool:
        """Whether an event of ``kind`` would reach anyone (to skip costly fields); ``listening``: whether an
        observer listens, as asked already (``listening()``) for this attempt, else asked now."""
        if listening is None:
            listening = self.host.has_event_listeners
        return listening or logger.isEnabledFor(kind.log_level)

    def listening(self) -> bool:
        """Whether an observer wants events now (asked once per attempt: an observer switched on during it
        hears from the next; ``emit`` asks again, so one switched off hears nothing more)."""
        return self.host.has_event_listeners

    def emit(self, kind: type[Event], **fields: Any) -> None:
        """Build ``kind(**fields)`` and deliver it, if anyone listens."""
        listeners = self.host.has_event_listeners
        logged = logger.isEnabledFor(kind.log_level)
        if not (listeners or logged):
            return
        event = kind(**fields)
        if listeners:
            self.host.emit(event)
        if logged:
            logger.log(kind.log_level, event.log_name, extra={"llmplex": event.fields()})
