"""The one exception type of the local-model runtime."""

from __future__ import annotations


class LocalModelError(Exception):
    """A local model could not be found, prepared, started or stopped.

    The message says what went wrong and how to fix it.
    """
