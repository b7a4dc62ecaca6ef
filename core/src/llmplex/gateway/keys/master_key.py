"""The gateway's master key: ``LLMPLEX_MASTER_KEY``, or the file ``LLMPLEX_MASTER_KEY_FILE`` names; never config."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from llmplex.errors import LLMConfigurationError
from llmplex.masking.values import register_secret

__all__ = ["MIN_MASTER_KEY_LENGTH", "master_key"]

MIN_MASTER_KEY_LENGTH = 16
"""The shortest master key accepted: a guessable key would open every model and the admin API."""


def master_key(environ: Mapping[str, str] | None = None) -> str:
    """The master key, registered for masking; ``LLMConfigurationError`` saying how to set one when there is none."""
    env = os.environ if environ is None else environ
    key = env.get("LLMPLEX_MASTER_KEY", "").strip()
    path = env.get("LLMPLEX_MASTER_KEY_FILE", "").strip()
    if not key and path:
        try:
            key = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise LLMConfigurationError(
                f"LLMPLEX_MASTER_KEY_FILE names {path!r}, which cannot be read ({type(exc).__name__}); "
                "give the path of a text file holding the master key"
            ) from None
    if not key:
        raise LLMConfigurationError(
            "the gateway needs a master key and none is set: export LLMPLEX_MASTER_KEY=<a long random string> "
            "(e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`) or "
            "LLMPLEX_MASTER_KEY_FILE=<a file holding it>; the config file never holds it"
        )
    if len(key) < MIN_MASTER_KEY_LENGTH or any(c.isspace() for c in key):
        raise LLMConfigurationError(
            f"the master key must be at least {MIN_MASTER_KEY_LENGTH} characters with no spaces; "
            "generate one with `python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
        )
    register_secret(key)
    return key
