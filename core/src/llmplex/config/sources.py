"""Where configuration comes from, in order: later sources win."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["ENV_PREFIX", "Layer", "default_layers", "env_layer", "file_layer", "user_config_path"]

ENV_PREFIX = "LLMPLEX_"
_LIST_KEYS = frozenset({"enabled", "disabled"})
_NOT_CONFIG = frozenset({"LLMPLEX_CONFIG", "LLMPLEX_CACHE_DIR"})
"""Variables in the LLMPLEX_ namespace that are not config keys (a file path, the cache location)."""

Layer = tuple[str, dict[str, Any]]
"""A config source: a label for messages (a path, 'environment', ...) and its data."""


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/llmplex/config.toml`` (``~/.config`` when unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "llmplex" / "config.toml"


def file_layer(path: Path, *, named_by: str | None = None) -> Layer | None:
    """Read one TOML file; ``None`` when it is absent, unless ``named_by`` (who asked for it) is given."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if named_by:
            raise LLMConfigurationError(f"config file {path} does not exist (named by {named_by})") from None
        return None
    except OSError as exc:
        raise LLMConfigurationError(f"config file {path} cannot be read: {exc.strerror}") from None
    try:
        return str(path), tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LLMConfigurationError(f"config file {path} is not valid TOML: {exc}") from None


def env_layer(environ: Mapping[str, str]) -> Layer:
    """``LLMPLEX_*`` variables: ``LLMPLEX_DEFAULT_MODEL``, ``LLMPLEX_DISABLED=a,b``,
    and nested keys with ``__`` (``LLMPLEX_THROTTLE__MAX_ATTEMPTS=3``)."""
    data: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in _NOT_CONFIG:
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        target = data
        for part in path[:-1]:
            target = target.setdefault(part, {})
        leaf = path[-1]
        target[leaf] = [v.strip() for v in value.split(",") if v.strip()] if leaf in _LIST_KEYS else value
    return "environment (LLMPLEX_*)", data


def default_layers(environ: Mapping[str, str], cwd: Path) -> list[Layer]:
    """User file, project file, ``LLMPLEX_CONFIG`` file, then environment variables."""
    layers: list[Layer | None] = [
        file_layer(user_config_path()),
        file_layer(cwd / "llmplex.toml"),
    ]
    explicit = environ.get("LLMPLEX_CONFIG")
    if explicit:
        layers.append(file_layer(Path(explicit), named_by="LLMPLEX_CONFIG"))
    layers.append(env_layer(environ))
    return [layer for layer in layers if layer is not None]
