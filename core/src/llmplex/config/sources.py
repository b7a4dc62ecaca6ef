"""Where configuration comes from, in order: later sources win."""

from __future__ import annotations

import codecs
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["ENV_PREFIX", "NOT_CONFIG", "Layer", "default_layers", "env_layers", "file_layer", "user_config_path"]

ENV_PREFIX = "LLMPLEX_"
_LIST_KEYS = frozenset({"enabled", "disabled"})
NOT_CONFIG = frozenset({"LLMPLEX_CONFIG", "LLMPLEX_CACHE_DIR", "LLMPLEX_MASTER_KEY", "LLMPLEX_MASTER_KEY_FILE"})
"""``LLMPLEX_*`` variables read elsewhere, not config keys."""
"""Variables in the LLMPLEX_ namespace that are not config keys (a file path, the cache location, the gateway's
master key, which is never config)."""

Layer = tuple[str, dict[str, Any]]
"""A config source: a label for messages (a path, 'environment', ...) and its data."""


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/llmplex/config.toml`` (``~/.config`` when unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "llmplex" / "config.toml"


def file_layer(path: Path, *, named_by: str | None = None) -> Layer | None:
    """Read one TOML file; ``None`` when it is absent, unless ``named_by`` (who asked for it) is given.

    The file must be UTF-8; a UTF-8 byte-order mark at its start is accepted and ignored.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if named_by:
            raise LLMConfigurationError(f"config file {path} does not exist (named by {named_by})") from None
        return None
    except OSError as exc:
        raise LLMConfigurationError(f"config file {path} cannot be read: {exc.strerror}") from None
    text = _text(path, data)
    try:
        return str(path), tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problem = str(exc)
    # raised outside the handler, so that no __context__ keeps the document (and the keys in it)
    raise LLMConfigurationError(f"config file {path} is not valid TOML: {problem}")


def _text(path: Path, data: bytes) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        found = "UTF-32" if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) else "UTF-16"
        raise LLMConfigurationError(
            f"config file {path} is {found} text; TOML files must be UTF-8: save it again as UTF-8"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
    line = data.count(b"\n", 0, start) + 1
    # raised outside the handler, so that no __context__ keeps the file's bytes (and the keys in them)
    raise LLMConfigurationError(
        f"config file {path} is not UTF-8 text (byte 0x{data[start]:02x} on line {line} is not valid UTF-8); "
        "TOML files must be UTF-8: save it again as UTF-8"
    )


def env_layers(environ: Mapping[str, str]) -> list[Layer]:
    """``LLMPLEX_*`` variables, one layer each so errors name the variable: ``LLMPLEX_DEFAULT_MODEL``,
    ``LLMPLEX_DISABLED=a,b``, and nested keys with ``__`` (``LLMPLEX_THROTTLE__MAX_ATTEMPTS=3``)."""
    layers: list[Layer] = []
    set_by: dict[tuple[str, ...], str] = {}
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name in NOT_CONFIG:
            continue
        path = tuple(name[len(ENV_PREFIX) :].lower().split("__"))
        if not all(path):
            raise LLMConfigurationError(
                f"environment variable {name} does not name a config key: write LLMPLEX_KEY or LLMPLEX_TABLE__KEY"
            )
        clash = next((set_by[path[:end]] for end in range(1, len(path)) if path[:end] in set_by), None)
        clash = clash or next((other for key, other in set_by.items() if key[: len(path)] == path), None)
        if clash:
            raise LLMConfigurationError(
                f"environment variables {clash} and {name} conflict: one sets a value where the other "
                "needs a table; unset one of them"
            )
        set_by[path] = name
        value = environ[name]
        listed = len(path) == 1 and path[0] in _LIST_KEYS  # LLMPLEX_LOG__ENABLED=true is a flag, not the list
        leaf: Any = [v.strip() for v in value.split(",") if v.strip()] if listed else value
        for part in reversed(path):
            leaf = {part: leaf}
        layers.append((f"environment variable {name}", leaf))
    return layers


def default_layers(environ: Mapping[str, str], cwd: Path) -> list[Layer]:
    """User file, project file, ``LLMPLEX_CONFIG`` file, then environment variables."""
    layers: list[Layer | None] = [
        file_layer(user_config_path()),
        file_layer(cwd / "llmplex.toml"),
    ]
    explicit = environ.get("LLMPLEX_CONFIG")
    if explicit:
        layers.append(file_layer(Path(explicit), named_by="LLMPLEX_CONFIG"))
    layers.extend(env_layers(environ))
    return [layer for layer in layers if layer is not None]
