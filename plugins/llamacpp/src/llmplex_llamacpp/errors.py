"""The exception types of the local-model runtime."""

from __future__ import annotations


class LocalModelError(Exception):
    """A local model could not be found, prepared, started or stopped.

    The message says what went wrong and how to fix it.
    """


class LocalModelIntegrityError(LocalModelError):
    """A model's bytes are not the pinned release: its sha256 or size differ.

    Nothing is written to the cache; the message names both hashes and how to
    reinstall the model's packages.
    """
